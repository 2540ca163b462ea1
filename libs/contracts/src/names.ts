/**
 * Every NATS name the services use: subjects, streams, consumers, KV buckets and service names.
 * A subject string written anywhere else is a bug.
 *
 * A namespace prefixes every name so that test suites (and several environments on one NATS
 * account) never collide; production runs with the empty namespace.
 */

/** The four services, as they name themselves in logs, metrics and NATS connections. */
export const SERVICE_NAMES = {
  deliveryApi: "delivery-api",
  geoIngest: "geo-ingest",
  pricing: "pricing",
  webhookDispatcher: "webhook-dispatcher",
  console: "console",
} as const;
export type ServiceName = (typeof SERVICE_NAMES)[keyof typeof SERVICE_NAMES];

/** The kinds of delivery event, as they appear in the envelope's `type` and in subjects. */
export const DELIVERY_EVENT_TYPES = [
  "delivery.created",
  "delivery.updated",
  "delivery.cancelled",
  "delivery.status_changed",
  "delivery.redelivery_created",
] as const;

/**
 * DELIVERY_EVENTS is split into this many partitions by account (the subject's first token after
 * `delivery.events`), so that consumers can share the stream by filtering on a partition: every
 * event of an account, hence of each of its deliveries, is in one partition, in publish order.
 * Changing it re-routes accounts: only with every consumer of the stream stopped and drained.
 */
export const DELIVERY_EVENT_PARTITIONS = 16;

/** The partition of an account's delivery events. */
export function deliveryEventPartition(accountId: number): number {
  return accountId % DELIVERY_EVENT_PARTITIONS;
}

/** How long DELIVERY_EVENTS keeps an event: the reach of a webhook replay. */
export const DELIVERY_EVENTS_RETENTION_DAYS = 30;

/** The longest rate-limit window an account may be given (operator override, delivery-api config). */
export const RATE_LIMIT_MAX_WINDOW_SECONDS = 3600;

const NAMESPACE_PATTERN = /^[a-z0-9_]*$/;

/** Builds every NATS name for one namespace (empty in production). */
export function natsNames(namespace = "") {
  if (!NAMESPACE_PATTERN.test(namespace)) {
    throw new Error(`NATS namespace "${namespace}" must match ${NAMESPACE_PATTERN}`);
  }
  const subject = (name: string) => (namespace ? `${namespace}.${name}` : name);
  const upper = (name: string) => (namespace ? `${namespace.toUpperCase()}_${name}` : name);
  const deliveryEventsRoot = subject("delivery.events");
  const positionsRoot = subject("geo.positions");
  const pricingRoot = subject("pricing");
  const webhooksRoot = subject("webhooks");
  // Not under geo.positions: VEHICLE_POSITIONS captures every subject there.
  const geoTrackRoot = subject("geo.track");

  return {
    namespace,
    streams: {
      /** Every delivery change, published from delivery-api's outbox. */
      deliveryEvents: upper("DELIVERY_EVENTS"),
      /** The latest position of each vehicle in an active round (one message per vehicle kept). */
      vehiclePositions: upper("VEHICLE_POSITIONS"),
    },
    subjects: {
      deliveryEventsAll: `${deliveryEventsRoot}.>`,
      /**
       * One subject per account and delivery, behind the account's partition
       * (`delivery.events.<partition>.<account>.<delivery>.<kind>`), so consumers can filter on
       * a partition, an account or a delivery.
       */
      deliveryEvent: (accountId: number, deliveryId: number, type: (typeof DELIVERY_EVENT_TYPES)[number]) =>
        `${deliveryEventsRoot}.${deliveryEventPartition(accountId)}.${accountId}.${deliveryId}.${type.replace("delivery.", "")}`,
      /** Every event of one partition (see DELIVERY_EVENT_PARTITIONS). */
      deliveryEventsOfPartition: (partition: number) => `${deliveryEventsRoot}.${partition}.>`,
      /** Every event of one account. */
      deliveryEventsOfAccount: (accountId: number) =>
        `${deliveryEventsRoot}.${deliveryEventPartition(accountId)}.${accountId}.>`,
      vehiclePositionsAll: `${positionsRoot}.>`,
      vehiclePosition: (vehicleExternalId: string) => `${positionsRoot}.${fleetKey(vehicleExternalId)}`,
      /** Tariff management requests, answered by the pricing service. */
      pricingTariffs: `${pricingRoot}.tariffs`,
      /** Request/reply: store a new tariff version (schemas/tariffs.ts TariffCreateRequest). */
      pricingTariffsCreate: `${pricingRoot}.tariffs.create`,
      /** Request/reply: every tariff version of an account. */
      pricingTariffsList: `${pricingRoot}.tariffs.list`,
      /** Request/reply: one tariff version by id. */
      pricingTariffsGet: `${pricingRoot}.tariffs.get`,
      /** Broadcast (no queue group) after a tariff version is stored: every pricing replica drops its cache. */
      pricingTariffsChanged: `${pricingRoot}.tariffs.changed`,
    },
    services: {
      /** The NATS services framework name of the pricing service; its `quote` endpoint lives under it. */
      pricing: { name: upper("pricing"), quoteSubject: `${pricingRoot}.quote`, queueGroup: upper("pricing") },
      /**
       * The webhook endpoint registry of webhook-dispatcher, asked by delivery-api on a client's
       * or the operator's behalf (request/reply, contract in schemas/webhooks.ts). `enable` is
       * the operator's only.
       */
      webhooks: {
        name: upper("webhooks"),
        queueGroup: upper("webhooks"),
        subjects: {
          create: `${webhooksRoot}.endpoints.create`,
          list: `${webhooksRoot}.endpoints.list`,
          delete: `${webhooksRoot}.endpoints.delete`,
          rotate: `${webhooksRoot}.endpoints.rotate`,
          attempts: `${webhooksRoot}.endpoints.attempts`,
          replay: `${webhooksRoot}.endpoints.replay`,
          enable: `${webhooksRoot}.endpoints.enable`,
        },
      },
      /**
       * geo-ingest's stored positions, asked by delivery-api for the operator's vehicle page
       * (request/reply, contract in schemas/geolocation.ts): a vehicle's recent positions.
       */
      geoTrack: {
        name: upper("geo-track"),
        queueGroup: upper("geo-track"),
        subjects: { vehicle: `${geoTrackRoot}.vehicle` },
      },
    },
    consumers: {
      /** Before partitions (one consumer of every event); deleted by webhook-dispatcher at boot. */
      webhookDispatcherUnpartitioned: upper("webhook-dispatcher"),
      /** webhook-dispatcher's durable consumer of one partition, held by one replica at a time. */
      webhookDispatcher: (partition: number) => upper(`webhook-dispatcher-p${partition}`),
      deliveryApiPositions: upper("delivery-api-positions"),
    },
    buckets: {
      /** Vehicle External ID → vehicle, provider, active round. Written by delivery-api, watched by geo-ingest. */
      fleet: upper("FLEET"),
      /**
       * Account → its tariff versions (AccountTariffs, key `tariffsKey(accountId)`). Written by
       * pricing, watched by delivery-api, which prices from it only while NATS is down.
       */
      tariffs: upper("TARIFFS"),
      /**
       * Account → the theoretical arrival time of its client API rate limit (GCRA, key
       * `rateLimitKey(accountId)`, value: `<TAT ms since the epoch> <interval ms of the policy it
       * was written under>`, decimal text). Owned by
       * delivery-api: every replica writes it with compare-and-set and watches it.
       */
      rateLimits: upper("RATE_LIMITS"),
    },
  } as const;
}
export type NatsNames = ReturnType<typeof natsNames>;

const PLAIN_KEY = /^[A-Za-z0-9_-]+$/;

/**
 * The KV key (and subject token) of a vehicle External ID. NATS keys and subject tokens allow
 * few characters, so any other ID is base64url-encoded behind a `b64.` marker; a plain ID can
 * never contain the dot, so the two forms never collide.
 */
export function fleetKey(vehicleExternalId: string): string {
  if (PLAIN_KEY.test(vehicleExternalId)) return vehicleExternalId;
  return `b64.${Buffer.from(vehicleExternalId, "utf8").toString("base64url")}`;
}

/** The key of an account's tariff versions in the TARIFFS bucket. */
export function tariffsKey(accountId: number): string {
  return `account.${accountId}`;
}

/** The key of an account's rate-limit state in the RATE_LIMITS bucket. */
export function rateLimitKey(accountId: number): string {
  return `account.${accountId}`;
}

/** The account of a TARIFFS key; null for a key that is not one. */
export function accountIdFromTariffsKey(key: string): number | null {
  const match = /^account\.([1-9][0-9]*)$/.exec(key);
  return match ? Number(match[1]) : null;
}

/** The inverse of {@link fleetKey}. */
export function vehicleIdFromFleetKey(key: string): string {
  return key.startsWith("b64.") ? Buffer.from(key.slice(4), "base64url").toString("utf8") : key;
}
