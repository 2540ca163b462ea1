/** geo-ingest's configuration, validated at boot (see the README's configuration table). */
import { commonConfig } from "@dos/service-kit";
import { type Static, Type } from "@sinclair/typebox";

/** Prefix of the variables only geo-ingest reads; an unknown one stops the boot. */
export const CONFIG_PREFIX = "GEO_";

const DAY_MS = 24 * 60 * 60 * 1000;

export const configSchema = Type.Object({
  ...commonConfig,
  PORT: Type.Integer({
    default: 3001,
    minimum: 0,
    maximum: 65535,
    description: "HTTP port (health, metrics, geolocation API).",
  }),
  GEO_FUTURE_TOLERANCE_MS: Type.Integer({
    default: 120_000,
    minimum: 0,
    maximum: DAY_MS,
    description: "How far ahead of the server's clock a position's timestamp may be before it is refused (422).",
  }),
  GEO_RATE_LIMIT_INTERVAL_MS: Type.Integer({
    default: 1000,
    minimum: 1,
    maximum: 60_000,
    description: "Smallest interval between two requests of one tracker (the spec's 1 request per second).",
  }),
  GEO_BATCH_MAX_ROWS: Type.Integer({
    default: 2000,
    minimum: 1,
    maximum: 20_000,
    description: "Largest group-commit batch: a batch is written as soon as it holds this many positions.",
  }),
  GEO_BATCH_MAX_DELAY_MS: Type.Integer({
    default: 0,
    minimum: 0,
    maximum: 1000,
    description:
      "Wait for a batch to fill before writing it; 0 writes as soon as a write slot is free (rows gather while slots are busy).",
  }),
  GEO_WRITE_CONCURRENCY: Type.Integer({
    default: 4,
    minimum: 1,
    maximum: 32,
    description: "Batches written to PostgreSQL at the same time.",
  }),
  GEO_WRITE_QUEUE_LIMIT: Type.Integer({
    default: 50_000,
    minimum: 1,
    description: "Positions waiting for PostgreSQL beyond which new ones get 503 instead of piling up in memory.",
  }),
  GEO_PUBLISH_INTERVAL_MS: Type.Integer({
    default: 1000,
    minimum: 50,
    maximum: 60_000,
    description: "How often the latest position of each vehicle is published on the bus (at most once per interval).",
  }),
  GEO_RETENTION_DAYS: Type.Integer({
    default: 30,
    minimum: 1,
    maximum: 3650,
    description: "Days positions are kept; older timestamps are refused (422) and older partitions dropped.",
  }),
  GEO_PARTITIONS_AHEAD_DAYS: Type.Integer({
    default: 3,
    minimum: 2,
    maximum: 60,
    description: "Daily partitions created ahead of today (native partitioning mode).",
  }),
  GEO_MAINTENANCE_INTERVAL_MS: Type.Integer({
    default: 3_600_000,
    minimum: 1000,
    description: "How often partitions are created ahead and dropped after the retention (native mode).",
  }),
  GEO_OPS_TOKEN: Type.Optional(
    Type.String({
      minLength: 16,
      description: "Bearer token of the operator endpoints (round tracks); unset, they are not served.",
    }),
  ),
});
export type Config = Static<typeof configSchema>;
