/** webhook-dispatcher's configuration, validated at boot (see the README's configuration table). */
import { ConfigError, commonConfig, type LoadConfigOptions, loadConfig } from "@dos/service-kit";
import { type Static, Type } from "@sinclair/typebox";

/** Prefix of the variables only webhook-dispatcher reads; an unknown one stops the boot. */
export const CONFIG_PREFIX = "WEBHOOKS_";

const HOUR = 60 * 60 * 1000;

/** Svix's schedule: the delay before each attempt (the first is immediate). */
const DEFAULT_RETRY_SCHEDULE = "0,5s,5m,30m,2h,5h,10h,10h";
const DURATION_LIST_PATTERN = "^\\s*\\d+(ms|s|m|h)?(\\s*,\\s*\\d+(ms|s|m|h)?)*\\s*$";
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: HOUR };

/** Reads a schedule such as `0,5s,5m` into milliseconds. */
export function parseRetrySchedule(text: string): number[] {
  return text.split(",").map((item) => {
    const [, amount, unit] = /^\s*(\d+)(ms|s|m|h)?\s*$/.exec(item) ?? [];
    return Number(amount) * (UNIT_MS[unit ?? "ms"] ?? 1);
  });
}

export const configSchema = Type.Object({
  ...commonConfig,
  PORT: Type.Integer({ default: 3003, minimum: 0, maximum: 65535, description: "HTTP port (health, metrics)." }),
  WEBHOOKS_SECRET_KEY: Type.String({
    minLength: 32,
    description: "Key that encrypts the endpoints' signing secrets at rest; at least 32 characters.",
  }),
  WEBHOOKS_ALLOWED_HOSTS: Type.Array(Type.String(), {
    default: [],
    description:
      "Hosts, IP addresses or CIDRs that may be private or loopback (e.g. 127.0.0.0/8,localhost for the local demo).",
  }),
  WEBHOOKS_TIMEOUT_MS: Type.Integer({
    default: 15_000,
    minimum: 100,
    maximum: 120_000,
    description: "How long one POST may take, connection included.",
  }),
  WEBHOOKS_RETRY_SCHEDULE: Type.String({
    default: DEFAULT_RETRY_SCHEDULE,
    pattern: DURATION_LIST_PATTERN,
    description:
      "Delay before each attempt (ms, s, m or h; a bare number is ms); its length is the number of attempts.",
  }),
  WEBHOOKS_RETRY_JITTER: Type.Number({
    default: 0.2,
    minimum: 0,
    maximum: 1,
    description: "Each retry delay is spread by up to this fraction, up or down.",
  }),
  WEBHOOKS_RETRY_AFTER_MAX_MS: Type.Integer({
    default: 24 * HOUR,
    minimum: 0,
    description: "Longest Retry-After (429, 503) honoured; longer asks are cut to it.",
  }),
  WEBHOOKS_DISABLE_AFTER_MS: Type.Integer({
    default: 5 * 24 * HOUR,
    minimum: 1,
    description: "An endpoint failing without a single success for this long is disabled.",
  }),
  WEBHOOKS_ROTATION_OVERLAP_MS: Type.Integer({
    default: 24 * HOUR,
    minimum: 0,
    description: "How long the previous secret keeps signing after a rotation.",
  }),
  WEBHOOKS_CONCURRENCY: Type.Integer({
    default: 128,
    minimum: 1,
    maximum: 1000,
    description: "POSTs in flight at once in this process.",
  }),
  WEBHOOKS_ACCOUNT_CONCURRENCY: Type.Integer({
    default: 16,
    minimum: 1,
    maximum: 1000,
    description:
      "POSTs in flight at once for one account, all its endpoints together (one replica sends all of an account's), so an account whose endpoints hang holds this share of WEBHOOKS_CONCURRENCY and no more.",
  }),
  WEBHOOKS_ENDPOINT_CONCURRENCY: Type.Integer({
    default: 8,
    minimum: 1,
    maximum: 1000,
    description:
      "POSTs in flight at once to one endpoint (one replica sends all of an account's), so a slow endpoint delays only itself.",
  }),
  WEBHOOKS_POLL_INTERVAL_MS: Type.Integer({
    default: 250,
    minimum: 10,
    description: "How often due retries are looked for when nothing else wakes the retry worker.",
  }),
  WEBHOOKS_MEMORY_WAIT_MS: Type.Integer({
    default: 5000,
    minimum: 0,
    description:
      "How long a webhook taken from the stream may wait for a free slot of its endpoint before it moves to the database queue (and its stream message is acknowledged).",
  }),
  WEBHOOKS_REBALANCE_INTERVAL_MS: Type.Integer({
    default: 2000,
    minimum: 10,
    description:
      "How often a replica counts the live replicas and takes or releases partitions of the delivery events to hold its share.",
  }),
  WEBHOOKS_MAX_PER_ACCOUNT: Type.Integer({ default: 20, minimum: 1, description: "Endpoints an account may have." }),
  WEBHOOKS_RETENTION_DAYS: Type.Integer({
    default: 30,
    minimum: 1,
    description: "How long attempts, finished queue messages and their events are kept.",
  }),
  WEBHOOKS_STATS_INTERVAL_MS: Type.Integer({
    default: 5000,
    minimum: 100,
    description: "How often queue depth, oldest pending age and consumer lag are measured.",
  }),
});
export type Config = Static<typeof configSchema>;

/**
 * Loads the configuration and checks what one variable alone cannot: an account's share of the
 * POSTs in flight must leave room for the others (see the README's fairness bound).
 */
export function loadDispatcherConfig(env?: LoadConfigOptions["env"]): Readonly<Config> {
  const config = loadConfig(configSchema, { prefix: CONFIG_PREFIX, env });
  if (config.WEBHOOKS_ACCOUNT_CONCURRENCY >= config.WEBHOOKS_CONCURRENCY) {
    throw new ConfigError(
      `WEBHOOKS_ACCOUNT_CONCURRENCY is invalid: must be less than WEBHOOKS_CONCURRENCY (${config.WEBHOOKS_CONCURRENCY}), or one account could hold every POST slot (got ${config.WEBHOOKS_ACCOUNT_CONCURRENCY})`,
    );
  }
  return config;
}
