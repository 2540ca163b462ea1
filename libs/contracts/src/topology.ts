/**
 * The JetStream streams and KV buckets of the system, and ensureTopology() that creates or
 * updates them. Every service calls it at boot; it is idempotent and only writes when the
 * server's configuration differs from ours.
 */
import {
  type JetStreamManager,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type StreamConfig,
} from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { type NatsConnection, nanos } from "@nats-io/nats-core";
import { DELIVERY_EVENTS_RETENTION_DAYS, natsNames, RATE_LIMIT_MAX_WINDOW_SECONDS, type ServiceName } from "./names.ts";
import { ownsStream } from "./permissions.ts";

export interface TopologyOptions {
  /** Prefix of every name (see names.ts); empty in production. */
  namespace?: string;
  /** Replicas of every stream and bucket: 1 locally, 3 in production. */
  replicas?: number;
  /**
   * The service ensuring the topology: it creates what is missing but updates only the streams
   * and buckets it owns (see permissions.ts; its NATS user may not update the others). Omitted
   * (tools, tests): everything is updated.
   */
  service?: ServiceName;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** The streams' configuration: subjects, retention, duplicate window, replicas. */
export function streamConfigs(options: TopologyOptions = {}): StreamConfig[] {
  const names = natsNames(options.namespace);
  const replicas = options.replicas ?? 1;
  const base = {
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    num_replicas: replicas,
  };
  return [
    {
      ...base,
      name: names.streams.deliveryEvents,
      description: `Every delivery change, from delivery-api's outbox. Kept ${DELIVERY_EVENTS_RETENTION_DAYS} days for webhook replay.`,
      subjects: [names.subjects.deliveryEventsAll],
      max_age: nanos(DELIVERY_EVENTS_RETENTION_DAYS * DAY_MS),
      // The outbox relay re-publishes after a crash with the same Nats-Msg-Id; a window of
      // 10 minutes covers a relay restart, and consumers dedupe by event id beyond it.
      duplicate_window: nanos(10 * 60 * 1000),
    } as StreamConfig,
    {
      ...base,
      name: names.streams.vehiclePositions,
      description: "The latest position of each vehicle in an active round, for tracking and ETA.",
      subjects: [names.subjects.vehiclePositionsAll],
      max_msgs_per_subject: 1,
      max_age: nanos(DAY_MS),
      duplicate_window: nanos(60 * 1000),
    } as StreamConfig,
  ];
}

/** The KV buckets' configuration. */
export function bucketConfigs(options: TopologyOptions = {}) {
  const names = natsNames(options.namespace);
  const replicas = options.replicas ?? 1;
  return [
    { name: names.buckets.fleet, history: 1, replicas },
    { name: names.buckets.tariffs, history: 1, replicas },
    // Rate-limit state is worth a few seconds: in memory (a NATS restart gives every account a
    // full quota back), and a key not written for RATE_LIMIT_STATE_TTL_MS is gone, which NATS 2.9
    // can only do bucket-wide. Its value was in the past long before that, so nothing is lost.
    {
      name: names.buckets.rateLimits,
      history: 1,
      replicas,
      storage: StorageType.Memory,
      ttl: RATE_LIMIT_STATE_TTL_MS,
    },
  ];
}

/**
 * How long an account's rate-limit state outlives its last write: more than the longest
 * window an account may be given (RATE_LIMIT_MAX_WINDOW_SECONDS), so only state that no longer
 * limits anything expires.
 */
export const RATE_LIMIT_STATE_TTL_MS = 2 * RATE_LIMIT_MAX_WINDOW_SECONDS * 1000;

/** The fields we own on an existing stream; the others (storage, retention) cannot change. */
const MUTABLE_FIELDS = [
  "subjects",
  "description",
  "max_age",
  "duplicate_window",
  "num_replicas",
  "max_msgs_per_subject",
] as const;

export interface TopologyResult {
  created: string[];
  updated: string[];
  unchanged: string[];
  /** Differ from the contracts but belong to another service, which updates them at its boot. */
  leftToOwner: string[];
}

/** Creates the streams and buckets that are missing and updates those that differ. */
export async function ensureTopology(nc: NatsConnection, options: TopologyOptions = {}): Promise<TopologyResult> {
  const jsm = await jetstreamManager(nc);
  const result: TopologyResult = { created: [], updated: [], unchanged: [], leftToOwner: [] };
  const mayUpdate = (stream: string) =>
    options.service === undefined || ownsStream(options.service, stream, options.namespace);
  for (const config of streamConfigs(options)) {
    await ensureStream(jsm, config, result, mayUpdate(config.name));
  }
  const kvm = new Kvm(nc);
  for (const bucket of bucketConfigs(options)) {
    const existed = await streamExists(jsm, `KV_${bucket.name}`);
    await kvm.create(bucket.name, bucket);
    (existed ? result.unchanged : result.created).push(`KV_${bucket.name}`);
  }
  return result;
}

async function ensureStream(jsm: JetStreamManager, config: StreamConfig, result: TopologyResult, mayUpdate: boolean) {
  const current = await streamInfo(jsm, config.name);
  if (!current) {
    await jsm.streams.add(config);
    result.created.push(config.name);
    return;
  }
  // Only the fields we set are compared: the server fills the others with its defaults.
  const differs = MUTABLE_FIELDS.some(
    (field) => config[field] !== undefined && JSON.stringify(current[field]) !== JSON.stringify(config[field]),
  );
  if (!differs) {
    result.unchanged.push(config.name);
    return;
  }
  if (!mayUpdate) {
    result.leftToOwner.push(config.name);
    return;
  }
  await jsm.streams.update(config.name, { ...current, ...pick(config) });
  result.updated.push(config.name);
}

function pick(config: StreamConfig): Partial<StreamConfig> {
  const picked: Record<string, unknown> = {};
  for (const field of MUTABLE_FIELDS) {
    if (config[field] !== undefined) picked[field] = config[field];
  }
  return picked as Partial<StreamConfig>;
}

async function streamInfo(jsm: JetStreamManager, name: string): Promise<StreamConfig | null> {
  try {
    return (await jsm.streams.info(name)).config;
  } catch (error) {
    if (isStreamNotFound(error)) return null;
    throw error;
  }
}

async function streamExists(jsm: JetStreamManager, name: string): Promise<boolean> {
  return (await streamInfo(jsm, name)) !== null;
}

function isStreamNotFound(error: unknown): boolean {
  const code = (error as { code?: number; apiError?: () => { err_code?: number } })?.apiError?.()?.err_code;
  return code === 10059 || (error as Error)?.name === "StreamNotFoundError";
}
