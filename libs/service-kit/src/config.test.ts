import assert from "node:assert/strict";
import { test } from "node:test";
import { Type } from "@sinclair/typebox";
import { ConfigError, commonConfig, loadConfig } from "./config.ts";

const schema = Type.Object({
  ...commonConfig,
  PORT: Type.Integer({ default: 3000, minimum: 0, maximum: 65535 }),
  SVC_TIMEOUT_MS: Type.Integer({ default: 100, minimum: 1 }),
  SVC_SECRET_TOKEN: Type.String({ minLength: 8 }),
});
const valid = {
  DATABASE_URL: "postgres://postgres@127.0.0.1:5432/db",
  NATS_URL: "nats://127.0.0.1:4222",
  SVC_SECRET_TOKEN: "0123456789",
};

const load = (env: Record<string, string>) => loadConfig(schema, { prefix: "SVC_", env });
const failure = (env: Record<string, string>) => {
  try {
    load(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    return error.message;
  }
  assert.fail("the configuration was accepted");
};

test("a valid environment gives a frozen, typed config with defaults", () => {
  const config = load({ ...valid, PORT: "8080" });
  assert.equal(config.PORT, 8080);
  assert.equal(config.SVC_TIMEOUT_MS, 100);
  assert.equal(config.LOG_LEVEL, "info");
  assert.ok(Object.isFrozen(config));
});

test("a malformed DATABASE_URL is named, with the value shown without its password", () => {
  assert.equal(
    failure({ ...valid, DATABASE_URL: "mysql://root:hunter2@db/x" }),
    'DATABASE_URL is invalid: must be a postgres:// URL (got "mysql://root:***@db/x")',
  );
});

test("a missing required variable is named", () => {
  assert.equal(failure({ NATS_URL: valid.NATS_URL, SVC_SECRET_TOKEN: "0123456789" }), "DATABASE_URL is required");
});

test("a number that is not one is named", () => {
  assert.equal(failure({ ...valid, PORT: "eighty" }), 'PORT is invalid: must be a number (got "eighty")');
  assert.equal(failure({ ...valid, PORT: "70000" }), 'PORT is invalid: must be between 0 and 65535 (got "70000")');
});

test("an unknown variable with the service's prefix is a typo, with a suggestion", () => {
  assert.equal(
    failure({ ...valid, SVC_TIMEOUT_M: "5" }),
    "SVC_TIMEOUT_M is not a known variable (did you mean SVC_TIMEOUT_MS?)",
  );
});

test("a secret's value never appears in the message", () => {
  const message = failure({ ...valid, SVC_SECRET_TOKEN: "short" });
  assert.match(message, /^SVC_SECRET_TOKEN is invalid/);
  assert.doesNotMatch(message, /short/);
});

test("a level outside the list is refused with the allowed values", () => {
  assert.equal(
    failure({ ...valid, LOG_LEVEL: "loud" }),
    'LOG_LEVEL is invalid: must be one of fatal, error, warn, info, debug, trace, silent (got "loud")',
  );
});

test("the HTTP timeouts have defaults, and headers may not wait longer than the whole request", () => {
  const config = load(valid);
  assert.equal(config.HTTP_HEADERS_TIMEOUT_MS, 10_000);
  assert.equal(config.HTTP_REQUEST_TIMEOUT_MS, 60_000);
  assert.equal(
    failure({ ...valid, HTTP_HEADERS_TIMEOUT_MS: "30000", HTTP_REQUEST_TIMEOUT_MS: "20000" }),
    "HTTP_HEADERS_TIMEOUT_MS is invalid: must not exceed HTTP_REQUEST_TIMEOUT_MS (30000 > 20000)",
  );
  assert.match(failure({ ...valid, HTTP_IDLE_TIMEOUT_MS: "5" }), /^HTTP_IDLE_TIMEOUT_MS is invalid/);
});

test("the standard tracing variables: a sampler by its OpenTelemetry name, a ratio between 0 and 1", () => {
  const config = load({ ...valid, OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.25" });
  assert.equal(config.OTEL_TRACES_SAMPLER, "parentbased_traceidratio");
  assert.equal(config.OTEL_TRACES_SAMPLER_ARG, 0.25);
  assert.equal(load(valid).OTEL_TRACES_SAMPLER, "parentbased_always_on");
  assert.match(
    failure({ ...valid, OTEL_TRACES_SAMPLER: "xray" }),
    /^OTEL_TRACES_SAMPLER is invalid: must be one of always_on, .*parentbased_traceidratio \(got "xray"\)$/,
  );
  assert.match(failure({ ...valid, OTEL_TRACES_SAMPLER_ARG: "1.5" }), /^OTEL_TRACES_SAMPLER_ARG /);
});

test("a retired variable stops the boot, naming what replaces it", () => {
  assert.throws(() => load({ OTEL_TRACES_SAMPLE_RATIO: "0.1" }), {
    message:
      "OTEL_TRACES_SAMPLE_RATIO is no longer read; set OTEL_TRACES_SAMPLER=parentbased_traceidratio with OTEL_TRACES_SAMPLER_ARG instead",
  });
  assert.throws(() => load({ OTEL_TRACES_FILE: "/tmp/spans.jsonl" }), {
    message: "OTEL_TRACES_FILE is no longer read; set TRACES_FILE instead",
  });
});
