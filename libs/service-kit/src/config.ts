/**
 * Configuration from environment variables, checked once at boot against a TypeBox schema and
 * handed around frozen. A missing, malformed or unknown variable stops the boot with one line
 * that names it.
 */

import { compileValidator } from "@dos/contracts";
import { type Static, type TObject, type TSchema, Type } from "@sinclair/typebox";
import { natsCredentials } from "./nats.ts";
import { nearestName } from "./nearest-name.ts";
import { SAMPLER_NAMES } from "./tracing-config.ts";

export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Variables every service reads. */
export const commonConfig = {
  DATABASE_URL: Type.String({ pattern: "^postgres(ql)?://", description: "PostgreSQL connection URL." }),
  NATS_URL: Type.String({ pattern: "^(nats|tls)://", description: "NATS server URL(s), comma-separated." }),
  NATS_USER: Type.String({
    default: "",
    description: "NATS user (with NATS_PASSWORD); one authentication method at most.",
  }),
  NATS_PASSWORD: Type.String({ default: "", description: "Password of NATS_USER." }),
  NATS_TOKEN: Type.String({ default: "", description: "NATS authentication token." }),
  NATS_NKEY_SEED_FILE: Type.String({ default: "", description: "File holding the NATS user's nkey seed (SU…)." }),
  NATS_CREDS_FILE: Type.String({ default: "", description: "NATS credentials file (user JWT and nkey seed)." }),
  NATS_TLS_CA_FILE: Type.String({
    default: "",
    description: "CA bundle (PEM) that verifies the NATS server; implies TLS.",
  }),
  NATS_TLS_CERT_FILE: Type.String({
    default: "",
    description: "Client certificate (PEM) for NATS mutual TLS, with NATS_TLS_KEY_FILE.",
  }),
  NATS_TLS_KEY_FILE: Type.String({ default: "", description: "Private key (PEM) of NATS_TLS_CERT_FILE." }),
  NATS_NAMESPACE: Type.String({
    default: "",
    pattern: "^[a-z0-9_]*$",
    description: "Prefix of every NATS name; empty in production.",
  }),
  NATS_STREAM_REPLICAS: Type.Integer({
    default: 1,
    minimum: 1,
    maximum: 5,
    description: "Replicas of every stream and bucket.",
  }),
  LOG_LEVEL: Type.Union(
    ["fatal", "error", "warn", "info", "debug", "trace", "silent"].map((level) => Type.Literal(level)),
    { default: "info", description: "pino log level." },
  ),
  HOST: Type.String({ default: "0.0.0.0", description: "Address the HTTP server binds." }),
  TRUSTED_PROXIES: Type.Array(
    Type.String({ pattern: "^(loopback|linklocal|uniquelocal|[0-9A-Fa-f.:]+(/[0-9]{1,3})?)$" }),
    {
      default: [],
      description:
        "Comma-separated addresses or CIDRs (or loopback, linklocal, uniquelocal) of the proxies whose X-Forwarded-For names the client; empty: the TCP peer is the client.",
    },
  ),
  SHUTDOWN_TIMEOUT_MS: Type.Integer({
    default: 10_000,
    minimum: 100,
    description: "Longest drain on SIGTERM before a forced exit.",
  }),
  HTTP_HEADERS_TIMEOUT_MS: Type.Integer({
    default: 10_000,
    minimum: 100,
    maximum: 600_000,
    description: "Longest wait for a request's headers, from its first byte; then 408 and close.",
  }),
  HTTP_REQUEST_TIMEOUT_MS: Type.Integer({
    default: 60_000,
    minimum: 100,
    maximum: 3_600_000,
    description: "Longest wait for a whole request (headers and body); then 408 and close.",
  }),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: Type.Integer({
    default: 72_000,
    minimum: 100,
    maximum: 600_000,
    description: "How long an idle keep-alive connection waits for its next request.",
  }),
  HTTP_IDLE_TIMEOUT_MS: Type.Integer({
    default: 120_000,
    minimum: 1_000,
    maximum: 3_600_000,
    description: "A connection on which nothing moves (no byte either way) this long is closed.",
  }),
  DATABASE_POOL_SIZE: Type.Integer({
    default: 10,
    minimum: 1,
    maximum: 200,
    description: "PostgreSQL connections per process.",
  }),
  OTEL_SERVICE_NAME: Type.String({
    default: "",
    pattern: "^[A-Za-z0-9._-]*$",
    description: "The service.name of this process's spans. Empty: the service's own name.",
  }),
  OTEL_EXPORTER_OTLP_ENDPOINT: Type.String({
    default: "",
    pattern: "^(https?://.+)?$",
    description:
      "OpenTelemetry collector (OTLP/HTTP) base URL, e.g. http://otel-collector:4318; spans are exported in the background. Empty: not exported there.",
  }),
  OTEL_TRACES_SAMPLER: Type.Union(
    SAMPLER_NAMES.map((name) => Type.Literal(name)),
    {
      default: "parentbased_always_on",
      description:
        "Sampler, by its OpenTelemetry name; the parentbased_ ones follow the caller's decision for a request or message carrying traceparent.",
    },
  ),
  OTEL_TRACES_SAMPLER_ARG: Type.Number({
    default: 1,
    minimum: 0,
    maximum: 1,
    description: "Share of the traces recorded by the traceidratio samplers. Tracing is off when no exporter is set.",
  }),
  TRACES_FILE: Type.String({
    default: "",
    description: "File every finished span is appended to as a JSON line (development, tests). Empty: none.",
  }),
};

/**
 * Variables an earlier version read, and what replaces them: a deployment still setting one would
 * otherwise lose its setting without a word (OTEL_ names are the SDK's, so no prefix rule finds them).
 */
const RETIRED: Record<string, string> = {
  OTEL_TRACES_FILE: "TRACES_FILE",
  OTEL_TRACES_SAMPLE_RATIO: "OTEL_TRACES_SAMPLER=parentbased_traceidratio with OTEL_TRACES_SAMPLER_ARG",
};

export interface LoadConfigOptions {
  /** Prefix of this service's own variables; an unknown variable with it is an error (a typo). */
  prefix: string;
  env?: NodeJS.ProcessEnv;
}

/** Reads, converts, validates and freezes the variables the schema names. */
export function loadConfig<T extends TObject>(schema: T, options: LoadConfigOptions): Readonly<Static<T>> {
  const env = options.env ?? process.env;
  const known = Object.keys(schema.properties);
  for (const name of Object.keys(env)) {
    const replacement = RETIRED[name];
    if (replacement && env[name] !== "") throw new ConfigError(`${name} is no longer read; set ${replacement} instead`);
    if (name.startsWith(options.prefix) && !known.includes(name)) {
      const hint = nearestName(name, known, 3);
      throw new ConfigError(`${name} is not a known variable${hint ? ` (did you mean ${hint}?)` : ""}`);
    }
  }
  const values: Record<string, unknown> = {};
  for (const name of known) {
    const property = schema.properties[name] as TSchema;
    const raw = env[name];
    if (raw === undefined || raw === "") {
      if (property.default !== undefined) values[name] = property.default;
      continue;
    }
    values[name] = convert(name, raw, property);
  }
  const result = compileValidator<Static<T>>(schema)(values);
  if (result.ok) checkRelations(result.value as Record<string, unknown>);
  if (!result.ok) {
    const [first] = result.errors;
    const name =
      first?.params && "missingProperty" in first.params
        ? String(first.params.missingProperty)
        : (first?.instancePath.slice(1) ?? "configuration");
    const property = schema.properties[name] as TSchema | undefined;
    const problem = first?.keyword === "required" ? "is required" : `is invalid: ${describe(property, first?.message)}`;
    const shown = env[name] !== undefined ? ` (got ${show(name, env[name] ?? "")})` : "";
    throw new ConfigError(`${name} ${problem}${shown}`);
  }
  return Object.freeze(result.value);
}

/** Rules between variables that no single variable's schema can state. */
function checkRelations(values: Record<string, unknown>): void {
  const headers = values.HTTP_HEADERS_TIMEOUT_MS;
  const request = values.HTTP_REQUEST_TIMEOUT_MS;
  if (typeof headers === "number" && typeof request === "number" && headers > request) {
    throw new ConfigError(
      `HTTP_HEADERS_TIMEOUT_MS is invalid: must not exceed HTTP_REQUEST_TIMEOUT_MS (${headers} > ${request})`,
    );
  }
  try {
    natsCredentials(values);
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
}

function convert(name: string, raw: string, schema: TSchema): unknown {
  if (schema.type === "integer" || schema.type === "number") {
    const value = Number(raw);
    if (raw.trim() === "" || Number.isNaN(value)) {
      throw new ConfigError(`${name} is invalid: must be a number (got ${show(name, raw)})`);
    }
    return value;
  }
  if (schema.type === "boolean") {
    if (raw === "true" || raw === "1") return true;
    if (raw === "false" || raw === "0") return false;
    throw new ConfigError(`${name} is invalid: must be true or false (got ${show(name, raw)})`);
  }
  if (schema.type === "array")
    return raw
      .split(",")
      .map((item) => item.trim())
      .filter(Boolean);
  return raw;
}

function describe(schema: TSchema | undefined, fallback = "is malformed"): string {
  if (!schema) return fallback;
  if (schema.pattern === "^postgres(ql)?://") return "must be a postgres:// URL";
  if (schema.pattern === "^(nats|tls)://") return "must be a nats:// URL";
  if (schema.anyOf) return `must be one of ${schema.anyOf.map((s: TSchema) => s.const).join(", ")}`;
  if (schema.minimum !== undefined || schema.maximum !== undefined) {
    return `must be between ${schema.minimum ?? "-∞"} and ${schema.maximum ?? "∞"}`;
  }
  return fallback;
}

/** Shows a value in an error without its secrets: URL passwords and token-like variables are masked. */
function show(name: string, raw: string): string {
  if (/TOKEN|SECRET|PASSWORD|KEY/.test(name)) return "a value that is hidden";
  return JSON.stringify(raw.replace(/\/\/([^:/@]+):[^@/]*@/, "//$1:***@"));
}

/** Runs a boot step and turns a ConfigError into one clear line and exit code 78 (EX_CONFIG). */
export function exitOnConfigError<T>(load: () => T): T {
  try {
    return load();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`configuration error: ${error.message}\n`);
      process.exit(78);
    }
    throw error;
  }
}
