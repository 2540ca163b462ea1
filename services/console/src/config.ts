/** The console's configuration, validated at boot (see the README's configuration table). */
import { ConfigError, commonConfig, loadConfig } from "@dos/service-kit";
import { type Static, Type } from "@sinclair/typebox";

/** Prefix of the variables only the console reads; an unknown one stops the boot. */
export const CONFIG_PREFIX = "CONSOLE_";

const Url = (description: string) => Type.String({ pattern: "^https?://[^\\s]+$", description });
/** A service's base URL whose /readyz and /metrics the System page reads (every address of its host name: a replica each). */
const SystemUrl = (service: string) =>
  Type.String({
    pattern: "^https?://[^\\s/?#]+/?$",
    maxLength: 300,
    description: `${service}'s base URL for its /readyz and /metrics (the System page); in Kubernetes a headless Service, so that every replica is read.`,
  });
const Minutes = (fallback: number, max: number, description: string) =>
  Type.Integer({ default: fallback, minimum: 1, maximum: max, description });

export const configSchema = Type.Object({
  ...commonConfig,
  PORT: Type.Integer({ default: 3005, minimum: 0, maximum: 65535, description: "HTTP port (pages, BFF, health)." }),
  CONSOLE_OPS_PORT: Type.Integer({
    default: 3006,
    minimum: 0,
    maximum: 65535,
    description: "Internal listener of the console's operator routes (/ops: invitations); never exposed publicly.",
  }),
  CONSOLE_PUBLIC_URL: Url("Public base URL of the console, used in the links e-mailed (invitations, resets)."),
  CONSOLE_API_URL: Url("delivery-api's client API base URL (without /api/v2), called as the signed-in user."),
  CONSOLE_OPS_URL: Url("delivery-api's internal listener base URL (without /ops/v1): the operator API."),
  CONSOLE_OPS_TOKEN: Type.String({
    minLength: 24,
    description:
      "Operator token: sent to delivery-api's operator API, and required by the console's own operator routes.",
  }),
  CONSOLE_SECRET_KEY: Type.String({
    minLength: 32,
    description: "At least 32 characters; seals (AES-256-GCM) the API token each session calls delivery-api with.",
  }),
  CONSOLE_INSECURE_HTTP_FOR_LOCAL_DEV: Type.Boolean({
    default: false,
    description:
      "Local development and tests only: cookies without Secure and without the __Host- prefix, so that plain http://localhost works. Never in production.",
  }),
  CONSOLE_SESSION_IDLE_MINUTES: Minutes(30, 24 * 60, "A session unused this long ends."),
  CONSOLE_SESSION_MAX_MINUTES: Minutes(12 * 60, 30 * 24 * 60, "A session ends this long after sign-in, used or not."),
  CONSOLE_INVITATION_TTL_MINUTES: Minutes(72 * 60, 30 * 24 * 60, "How long an invitation link can be used."),
  CONSOLE_RESET_TTL_MINUTES: Minutes(30, 24 * 60, "How long a password-reset link can be used."),
  CONSOLE_SIGN_IN_FAILURES_PER_EMAIL: Type.Integer({
    default: 5,
    minimum: 1,
    maximum: 1000,
    description: "Wrong passwords per e-mail within the window; the next attempt is refused (429) until it passes.",
  }),
  CONSOLE_SIGN_IN_FAILURES_PER_ADDRESS: Type.Integer({
    default: 20,
    minimum: 1,
    maximum: 100_000,
    description: "Failed sign-ins per client address (many people may share one) within the window.",
  }),
  CONSOLE_SIGN_IN_WINDOW_SECONDS: Type.Integer({
    default: 60,
    minimum: 1,
    maximum: 86_400,
    description: "The window of the two limits above.",
  }),
  CONSOLE_MAIL_ADAPTER: Type.Union([Type.Literal("log"), Type.Literal("smtp")], {
    default: "log",
    description: "How e-mails leave: log (written to the log, links included: development and tests) or smtp.",
  }),
  CONSOLE_SMTP_URL: Type.Optional(
    Type.String({
      pattern: "^smtps?://",
      description: "SMTP server, smtp://user:password@host:587 (STARTTLS) or smtps://...:465, with the smtp adapter.",
    }),
  ),
  CONSOLE_MAIL_FROM: Type.String({
    default: "Delivery console <no-reply@localhost>",
    maxLength: 200,
    description: "Sender of the console's e-mails.",
  }),
  CONSOLE_API_TIMEOUT_MS: Type.Integer({
    default: 10_000,
    minimum: 100,
    maximum: 120_000,
    description: "Longest wait for an answer of delivery-api.",
  }),
  CONSOLE_MAP_STYLE_URL: Type.String({
    default: "/map/style.json",
    maxLength: 2048,
    pattern: "^(/[^\\s/][^\\s]*|https://[^\\s/]+/[^\\s]*)$",
    description:
      "The MapLibre style of the delivery page's map: the console's own offline style (/map/style.json, no tiles: development, tests) or a provider's https URL in production; its origin is added to the pages' Content-Security-Policy.",
  }),
  CONSOLE_STAFF_FACTOR_FAILURES_PER_HOUR: Type.Integer({
    default: 10,
    minimum: 1,
    maximum: 1000,
    description:
      "Wrong second factors (authenticator codes, passkeys) per staff person within an hour; the next sign-in is refused (429) until it passes.",
  }),
  CONSOLE_SYSTEM_DELIVERY_API_URL: SystemUrl("delivery-api"),
  CONSOLE_SYSTEM_GEO_INGEST_URL: SystemUrl("geo-ingest"),
  CONSOLE_SYSTEM_PRICING_URL: SystemUrl("pricing"),
  CONSOLE_SYSTEM_WEBHOOK_DISPATCHER_URL: SystemUrl("webhook-dispatcher"),
  CONSOLE_SYSTEM_TIMEOUT_MS: Type.Integer({
    default: 2000,
    minimum: 100,
    maximum: 30_000,
    description:
      "Longest wait for one service's /readyz or /metrics on the System page: past it the service is shown as not answering.",
  }),
  CONSOLE_SYSTEM_SAMPLE_SECONDS: Type.Integer({
    default: 5,
    minimum: 1,
    maximum: 300,
    description:
      "How long one reading of the services is served to every staff page (they cost one scrape per interval), and the interval positions per second are measured over.",
  }),
  CONSOLE_LIVE_SNAPSHOT_SECONDS: Type.Integer({
    default: 20,
    minimum: 5,
    maximum: 300,
    description:
      "How often each live map stream reads the fleet again from delivery-api (GET /ops/v1/fleet/live, as the person): vehicles that join or leave active rounds, lateness; also how often its session is checked.",
  }),
  CONSOLE_LIVE_STREAMS_PER_PERSON: Type.Integer({
    default: 4,
    minimum: 1,
    maximum: 100,
    description: "Live map streams one staff person may hold open at once (tabs); one more is refused (429).",
  }),
  CONSOLE_LIVE_STREAMS_TOTAL: Type.Integer({
    default: 200,
    minimum: 1,
    maximum: 10_000,
    description: "Live map streams this replica holds open at once, everyone's; one more is refused (429).",
  }),
  CONSOLE_WEBAUTHN_ORIGIN: Type.Optional(
    Type.String({
      maxLength: 300,
      description:
        "The origin the staff's passkeys are used on (https://console.example.com; http only on localhost). Default: CONSOLE_PUBLIC_URL's origin.",
    }),
  ),
  CONSOLE_WEBAUTHN_RP_ID: Type.Optional(
    Type.String({
      maxLength: 253,
      description:
        "The passkeys' relying party id: the origin's host name or a domain it is under. Default: the origin's host name. A passkey works only under the id it was made for.",
    }),
  ),
});

/** The services the System page reads, by the variable naming each one's base URL. */
const SYSTEM_URL_VARIABLES = [
  "CONSOLE_SYSTEM_DELIVERY_API_URL",
  "CONSOLE_SYSTEM_GEO_INGEST_URL",
  "CONSOLE_SYSTEM_PRICING_URL",
  "CONSOLE_SYSTEM_WEBHOOK_DISPATCHER_URL",
] as const;

/** The configuration with the WebAuthn relying party resolved (defaults from CONSOLE_PUBLIC_URL). */
export type Config = Static<typeof configSchema> & { CONSOLE_WEBAUTHN_ORIGIN: string; CONSOLE_WEBAUTHN_RP_ID: string };

const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);
const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/**
 * Loads the configuration and checks what no single variable's schema states: WebAuthn's origin
 * is an origin browsers allow passkeys on, and its relying party id covers it. A refusal names
 * the variable, as loadConfig's do.
 */
export function loadConsoleConfig(env: NodeJS.ProcessEnv = process.env): Readonly<Config> {
  const config = loadConfig(configSchema, { prefix: CONFIG_PREFIX, env });
  for (const variable of SYSTEM_URL_VARIABLES) {
    if (!URL.canParse(config[variable])) {
      throw new ConfigError(`${variable} is invalid: must be a base URL such as http://geo-ingest-replicas:3001`);
    }
  }
  const originVariable = config.CONSOLE_WEBAUTHN_ORIGIN
    ? "CONSOLE_WEBAUTHN_ORIGIN"
    : "CONSOLE_WEBAUTHN_ORIGIN (taken from CONSOLE_PUBLIC_URL)";
  let origin: URL;
  try {
    origin = new URL(config.CONSOLE_WEBAUTHN_ORIGIN ?? config.CONSOLE_PUBLIC_URL);
  } catch {
    throw new ConfigError(`${originVariable} is invalid: must be an origin such as https://console.example.com`);
  }
  const given = config.CONSOLE_WEBAUTHN_ORIGIN;
  if (given !== undefined && given !== origin.origin) {
    throw new ConfigError(`CONSOLE_WEBAUTHN_ORIGIN is invalid: must be an origin alone (${origin.origin}), no path`);
  }
  if (origin.protocol !== "https:" && !(origin.protocol === "http:" && LOCAL_HOSTS.has(origin.hostname))) {
    throw new ConfigError(
      `${originVariable} is invalid: browsers allow passkeys on https:// origins only (http:// on localhost), got ${origin.origin}`,
    );
  }
  const rpId = config.CONSOLE_WEBAUTHN_RP_ID ?? origin.hostname;
  const rpVariable = config.CONSOLE_WEBAUTHN_RP_ID
    ? "CONSOLE_WEBAUTHN_RP_ID"
    : "CONSOLE_WEBAUTHN_RP_ID (taken from the origin)";
  if (!DOMAIN.test(rpId) || /^[\d.]+$/.test(rpId)) {
    throw new ConfigError(`${rpVariable} is invalid: must be a domain name (no scheme, port or address), got ${rpId}`);
  }
  if (origin.hostname !== rpId && !origin.hostname.endsWith(`.${rpId}`)) {
    throw new ConfigError(
      `CONSOLE_WEBAUTHN_RP_ID is invalid: must be ${origin.hostname} or a domain it is under (CONSOLE_WEBAUTHN_ORIGIN is ${origin.origin})`,
    );
  }
  return Object.freeze({ ...config, CONSOLE_WEBAUTHN_ORIGIN: origin.origin, CONSOLE_WEBAUTHN_RP_ID: rpId });
}
