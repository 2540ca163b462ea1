/** The console's configuration: every variable validated at boot, a refusal naming it. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { PAGE_CSP } from "@dos/service-kit";
import { type Config, loadConsoleConfig } from "../src/config.ts";
import { pagesCsp } from "../src/web/pages-csp.ts";

const valid = {
  DATABASE_URL: "postgres://postgres@127.0.0.1:5432/console",
  NATS_URL: "nats://127.0.0.1:4222",
  CONSOLE_PUBLIC_URL: "https://console.example.com",
  CONSOLE_API_URL: "http://delivery-api",
  CONSOLE_OPS_URL: "http://delivery-api-ops",
  CONSOLE_OPS_TOKEN: "an-operator-token-long-enough-0123",
  CONSOLE_SECRET_KEY: "a-console-secret-key-long-enough-0123456",
  CONSOLE_SYSTEM_DELIVERY_API_URL: "http://delivery-api-replicas:3000",
  CONSOLE_SYSTEM_GEO_INGEST_URL: "http://geo-ingest-replicas:3001",
  CONSOLE_SYSTEM_PRICING_URL: "http://pricing-replicas:3002",
  CONSOLE_SYSTEM_WEBHOOK_DISPATCHER_URL: "http://webhook-dispatcher-replicas:3003",
};
const load = (env: Record<string, string>): Config => loadConsoleConfig(env);

test("secure by default: cookies Secure unless the local-development switch is set, log e-mails", () => {
  const config = load(valid);
  assert.equal(config.CONSOLE_INSECURE_HTTP_FOR_LOCAL_DEV, false);
  assert.equal(config.CONSOLE_MAIL_ADAPTER, "log");
  assert.equal(config.PORT, 3005);
  assert.equal(config.CONSOLE_SIGN_IN_FAILURES_PER_EMAIL, 5);
});

test("a missing, short, malformed or misspelt variable is refused by name, its secret not shown", () => {
  const { CONSOLE_SECRET_KEY: _key, ...withoutKey } = valid;
  assert.throws(() => load(withoutKey), /^ConfigError: CONSOLE_SECRET_KEY is required$/);
  assert.throws(
    () => load({ ...valid, CONSOLE_SECRET_KEY: "short" }),
    /^ConfigError: CONSOLE_SECRET_KEY is invalid: .*\(got a value that is hidden\)$/,
  );
  assert.throws(() => load({ ...valid, CONSOLE_API_URL: "delivery-api" }), /CONSOLE_API_URL is invalid/);
  assert.throws(
    () => load({ ...valid, CONSOLE_MAIL_ADAPTER: "sendmail" }),
    /CONSOLE_MAIL_ADAPTER is invalid: must be one of log, smtp/,
  );
  assert.throws(
    () => load({ ...valid, CONSOLE_SESSION_IDLE_MINUTE: "10" }),
    /CONSOLE_SESSION_IDLE_MINUTE is not a known variable \(did you mean CONSOLE_SESSION_IDLE_MINUTES\?\)/,
  );
});

test("the System page's services: a base URL each, required and checked by name; a timeout and an interval", () => {
  const config = load(valid);
  assert.equal(config.CONSOLE_SYSTEM_TIMEOUT_MS, 2000);
  assert.equal(config.CONSOLE_SYSTEM_SAMPLE_SECONDS, 5);
  const { CONSOLE_SYSTEM_PRICING_URL: _pricing, ...withoutPricing } = valid;
  assert.throws(() => load(withoutPricing), /^ConfigError: CONSOLE_SYSTEM_PRICING_URL is required$/);
  for (const refused of [
    "geo-ingest:3001",
    "ftp://geo-ingest",
    "http://geo-ingest/metrics",
    "http://a b",
    "http://[::",
  ]) {
    assert.throws(
      () => load({ ...valid, CONSOLE_SYSTEM_GEO_INGEST_URL: refused }),
      /^ConfigError: CONSOLE_SYSTEM_GEO_INGEST_URL is invalid/,
      refused,
    );
  }
  assert.throws(() => load({ ...valid, CONSOLE_SYSTEM_TIMEOUT_MS: "50" }), /CONSOLE_SYSTEM_TIMEOUT_MS is invalid/);
  assert.throws(
    () => load({ ...valid, CONSOLE_SYSTEM_SAMPLE_SECONDS: "0" }),
    /CONSOLE_SYSTEM_SAMPLE_SECONDS is invalid/,
  );
});

test("the map's style: the console's own offline style by default, a provider only over https, in the pages' CSP", () => {
  assert.equal(load(valid).CONSOLE_MAP_STYLE_URL, "/map/style.json");
  const provider = "https://tiles.example.com/styles/streets.json?key=k";
  assert.equal(load({ ...valid, CONSOLE_MAP_STYLE_URL: provider }).CONSOLE_MAP_STYLE_URL, provider);
  for (const refused of [
    "http://tiles.example.com/style.json",
    "//tiles.example.com/style.json",
    "style.json",
    "/a b",
  ]) {
    assert.throws(
      () => load({ ...valid, CONSOLE_MAP_STYLE_URL: refused }),
      /CONSOLE_MAP_STYLE_URL is invalid/,
      refused,
    );
  }
  assert.equal(pagesCsp("/map/style.json"), PAGE_CSP);
  const csp = pagesCsp(provider);
  assert.match(csp, /connect-src 'self' https:\/\/tiles\.example\.com;/);
  assert.match(csp, /img-src 'self' data: https:\/\/tiles\.example\.com;/);
  assert.match(csp, /script-src 'self';/, "scripts stay the console's own");
});

test("passkeys: the relying party is the public URL's by default; a bad origin or id is refused by name", () => {
  const config = load(valid);
  assert.equal(config.CONSOLE_WEBAUTHN_ORIGIN, "https://console.example.com");
  assert.equal(config.CONSOLE_WEBAUTHN_RP_ID, "console.example.com");
  const local = load({ ...valid, CONSOLE_PUBLIC_URL: "http://localhost:3005" });
  assert.deepEqual(
    [local.CONSOLE_WEBAUTHN_ORIGIN, local.CONSOLE_WEBAUTHN_RP_ID],
    ["http://localhost:3005", "localhost"],
  );
  const parent = load({ ...valid, CONSOLE_WEBAUTHN_RP_ID: "example.com" });
  assert.equal(parent.CONSOLE_WEBAUTHN_RP_ID, "example.com", "a domain the origin is under");

  const refusals: Array<[Record<string, string>, RegExp]> = [
    [
      { CONSOLE_PUBLIC_URL: "http://console.example.com" },
      /^ConfigError: CONSOLE_WEBAUTHN_ORIGIN \(taken from CONSOLE_PUBLIC_URL\) is invalid: browsers allow passkeys on https:\/\/ origins only/,
    ],
    [
      { CONSOLE_WEBAUTHN_ORIGIN: "http://console.example.com" },
      /^ConfigError: CONSOLE_WEBAUTHN_ORIGIN is invalid: browsers/,
    ],
    [
      { CONSOLE_WEBAUTHN_ORIGIN: "https://console.example.com/staff" },
      /^ConfigError: CONSOLE_WEBAUTHN_ORIGIN is invalid: must be an origin alone/,
    ],
    [
      { CONSOLE_WEBAUTHN_ORIGIN: "console.example.com" },
      /^ConfigError: CONSOLE_WEBAUTHN_ORIGIN is invalid: must be an origin/,
    ],
    [
      { CONSOLE_WEBAUTHN_RP_ID: "other.example.com" },
      /^ConfigError: CONSOLE_WEBAUTHN_RP_ID is invalid: must be console\.example\.com or a domain it is under/,
    ],
    [
      { CONSOLE_WEBAUTHN_RP_ID: "ample.com" },
      /^ConfigError: CONSOLE_WEBAUTHN_RP_ID is invalid: must be console\.example\.com/,
    ],
    [
      { CONSOLE_WEBAUTHN_RP_ID: "https://console.example.com" },
      /^ConfigError: CONSOLE_WEBAUTHN_RP_ID is invalid: must be a domain name/,
    ],
    [
      { CONSOLE_PUBLIC_URL: "http://127.0.0.1:3005" },
      /^ConfigError: CONSOLE_WEBAUTHN_RP_ID \(taken from the origin\) is invalid: must be a domain name .*got 127\.0\.0\.1/,
    ],
  ];
  for (const [env, refusal] of refusals) assert.throws(() => load({ ...valid, ...env }), refusal, JSON.stringify(env));
});

test("the live map: snapshot interval and stream caps by default, bounded, refused by name; NATS checked by name", () => {
  const config = load(valid);
  assert.equal(config.CONSOLE_LIVE_SNAPSHOT_SECONDS, 20);
  assert.equal(config.CONSOLE_LIVE_STREAMS_PER_PERSON, 4);
  assert.equal(config.CONSOLE_LIVE_STREAMS_TOTAL, 200);
  assert.throws(
    () => load({ ...valid, CONSOLE_LIVE_SNAPSHOT_SECONDS: "1" }),
    /^ConfigError: CONSOLE_LIVE_SNAPSHOT_SECONDS is invalid: must be between 5 and 300/,
  );
  assert.throws(
    () => load({ ...valid, CONSOLE_LIVE_STREAMS_PER_PERSON: "0" }),
    /^ConfigError: CONSOLE_LIVE_STREAMS_PER_PERSON is invalid/,
  );
  assert.throws(
    () => load({ ...valid, CONSOLE_LIVE_STREAMS_TOTAL: "many" }),
    /^ConfigError: CONSOLE_LIVE_STREAMS_TOTAL is invalid/,
  );
  // The positions arrive over the console's NATS connection: its variables are the kit's, checked at boot.
  assert.throws(() => load({ ...valid, NATS_URL: "http://nats:4222" }), /^ConfigError: NATS_URL is invalid/);
  assert.throws(() => load({ ...valid, NATS_USER: "console" }), /NATS_PASSWORD is required with NATS_USER/);
});
