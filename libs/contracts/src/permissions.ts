/**
 * What each service does on the bus, and the NATS permissions that follow from it: one user per
 * service that may publish and subscribe only on the subjects below. The NATS server's
 * authorization (deploy/k8s/nats, the permission test) is generated from here, so a service that
 * starts using a subject adds it here or is refused by the server.
 *
 * Owners: a stream or bucket is updated only by the service that owns it (ensureTopology); the
 * others may create it when it is missing (with the same configuration, so boot order does not
 * matter) and read it, never change its configuration.
 */
import { DELIVERY_EVENT_PARTITIONS, type NatsNames, natsNames, SERVICE_NAMES, type ServiceName } from "./names.ts";

/** A service's use of the bus, in the contracts' names. */
export interface BusUse {
  /** Streams and buckets whose configuration this service keeps up to date. */
  owns: string[];
  /** Subjects it publishes on (core publishes and publishes into a stream alike). */
  publishes: string[];
  /** Request/reply subjects it asks (the reply comes back on its own inbox). */
  requests: string[];
  /** Core subjects it subscribes to (a queue group included). */
  subscribes: string[];
  /** NATS services framework names it serves (`$SRV` discovery, ping, info, stats). */
  serves: string[];
  /** Durable consumers it creates, reads and deletes, by stream. */
  durables: Array<{ stream: string; names: string[] }>;
  /** Streams it reads through ephemeral (ordered) consumers. */
  readsStreams: string[];
  /** KV buckets it reads (get, watch). */
  readsBuckets: string[];
  /** KV buckets it writes (put, create, update, delete). */
  writesBuckets: string[];
}

/** Every service's use of the bus, for one namespace. */
export function busUse(namespace = ""): Record<ServiceName, BusUse> {
  const names = natsNames(namespace);
  const { subjects, streams, buckets, services, consumers } = names;
  return {
    [SERVICE_NAMES.deliveryApi]: {
      owns: [streams.deliveryEvents, kvStream(buckets.fleet), kvStream(buckets.rateLimits)],
      // The outbox relay publishes every delivery event; nothing else does.
      publishes: [subjects.deliveryEventsAll],
      requests: [
        services.pricing.quoteSubject,
        subjects.pricingTariffsCreate,
        subjects.pricingTariffsList,
        subjects.pricingTariffsGet,
        ...Object.values(services.webhooks.subjects),
        services.geoTrack.subjects.vehicle,
      ],
      subscribes: [],
      serves: [],
      durables: [{ stream: streams.vehiclePositions, names: [consumers.deliveryApiPositions] }],
      readsStreams: [],
      readsBuckets: [buckets.fleet, buckets.tariffs, buckets.rateLimits],
      writesBuckets: [buckets.fleet, buckets.rateLimits],
    },
    [SERVICE_NAMES.geoIngest]: {
      owns: [streams.vehiclePositions],
      publishes: [subjects.vehiclePositionsAll],
      requests: [],
      subscribes: [services.geoTrack.subjects.vehicle],
      serves: [services.geoTrack.name],
      durables: [],
      readsStreams: [],
      readsBuckets: [buckets.fleet],
      writesBuckets: [],
    },
    [SERVICE_NAMES.pricing]: {
      owns: [kvStream(buckets.tariffs)],
      publishes: [subjects.pricingTariffsChanged],
      requests: [],
      subscribes: [
        services.pricing.quoteSubject,
        subjects.pricingTariffsCreate,
        subjects.pricingTariffsList,
        subjects.pricingTariffsGet,
        subjects.pricingTariffsChanged,
      ],
      serves: [services.pricing.name],
      durables: [],
      readsStreams: [],
      readsBuckets: [buckets.tariffs],
      writesBuckets: [buckets.tariffs],
    },
    [SERVICE_NAMES.webhookDispatcher]: {
      owns: [],
      publishes: [],
      requests: [],
      subscribes: Object.values(services.webhooks.subjects),
      serves: [services.webhooks.name],
      durables: [
        {
          stream: streams.deliveryEvents,
          names: [
            consumers.webhookDispatcherUnpartitioned,
            ...Array.from({ length: DELIVERY_EVENT_PARTITIONS }, (_, p) => consumers.webhookDispatcher(p)),
          ],
        },
      ],
      // Webhook replay reads an account's past events.
      readsStreams: [streams.deliveryEvents],
      readsBuckets: [],
      writesBuckets: [],
    },
    // The console talks to delivery-api over HTTP; on the bus it boots (the topology check),
    // answers its readiness probe, and reads geo-ingest's latest positions for the staff's live
    // map (one core subscription per process, never the stream's storage).
    [SERVICE_NAMES.console]: {
      owns: [],
      publishes: [],
      requests: [],
      subscribes: [subjects.vehiclePositionsAll],
      serves: [],
      durables: [],
      readsStreams: [],
      readsBuckets: [],
      writesBuckets: [],
    },
  };
}

/** The publish and subscribe allow lists of a NATS user (nats-server `permissions`). */
export interface NatsPermissions {
  publish: { allow: string[] };
  subscribe: { allow: string[] };
  /** Lets a responder publish its one reply to a request's reply subject, and nothing else there. */
  allow_responses: boolean;
}

/**
 * The inbox prefix of a service's connection (`inboxPrefix`): replies, JetStream API answers and
 * push consumers' deliveries to that service arrive under it, and only it may subscribe there, so
 * no other service reads its replies (a rotated webhook secret travels in one).
 */
export function inboxPrefix(service: ServiceName, namespace = ""): string {
  return `_INBOX.${namespace ? `${namespace}.` : ""}${service}`;
}

/** The permissions of one service's NATS user, derived from its bus use. */
export function natsPermissions(service: ServiceName, namespace = ""): NatsPermissions {
  const names = natsNames(namespace);
  const use = busUse(namespace)[service];
  const api = "$JS.API";
  const publish = new Set<string>([`${api}.INFO`]);
  const subscribe = new Set<string>([`${inboxPrefix(service, namespace)}.>`]);

  // ensureTopology at boot: every stream and bucket may be looked at and created, only the
  // service's own updated.
  for (const stream of topologyStreams(names)) {
    publish.add(`${api}.STREAM.INFO.${stream}`);
    publish.add(`${api}.STREAM.CREATE.${stream}`);
  }
  for (const stream of use.owns) publish.add(`${api}.STREAM.UPDATE.${stream}`);

  for (const subject of [...use.publishes, ...use.requests]) publish.add(subject);
  for (const subject of use.subscribes) subscribe.add(subject);
  for (const name of use.serves) {
    // The services framework answers `$SRV.<verb>`, `$SRV.<verb>.<name>` and `$SRV.<verb>.<name>.<id>`.
    subscribe.add("$SRV.*");
    subscribe.add(`$SRV.*.${name}`);
    subscribe.add(`$SRV.*.${name}.*`);
  }
  for (const { stream, names: durables } of use.durables) {
    for (const durable of durables) {
      for (const verb of ["INFO", "DELETE", "MSG.NEXT"]) publish.add(`${api}.CONSUMER.${verb}.${stream}.${durable}`);
      publish.add(`${api}.CONSUMER.CREATE.${stream}.${durable}`);
      // Since 2.10 the filter subject follows the name in the create subject.
      publish.add(`${api}.CONSUMER.CREATE.${stream}.${durable}.>`);
      publish.add(`${api}.CONSUMER.DURABLE.CREATE.${stream}.${durable}`);
      publish.add(`$JS.ACK.${stream}.${durable}.>`);
    }
  }
  for (const stream of [...use.readsStreams, ...use.readsBuckets.map(kvStream)]) {
    // Ephemeral ordered consumers: the server names them, so any name on this stream.
    publish.add(`${api}.STREAM.INFO.${stream}`);
    publish.add(`${api}.CONSUMER.CREATE.${stream}`);
    publish.add(`${api}.CONSUMER.CREATE.${stream}.>`);
    for (const verb of ["INFO", "DELETE", "MSG.NEXT"]) publish.add(`${api}.CONSUMER.${verb}.${stream}.*`);
    publish.add(`${api}.STREAM.MSG.GET.${stream}`);
    publish.add(`${api}.DIRECT.GET.${stream}`);
    publish.add(`${api}.DIRECT.GET.${stream}.>`);
    // Flow control of push consumers is answered on the server's `$JS.FC` subject.
    publish.add(`$JS.FC.${stream}.>`);
    publish.add(`$JS.ACK.${stream}.>`);
  }
  for (const bucket of use.writesBuckets) publish.add(`$KV.${bucket}.>`);

  return {
    publish: { allow: [...publish].sort() },
    subscribe: { allow: [...subscribe].sort() },
    allow_responses: use.serves.length > 0,
  };
}

/** The JetStream stream behind a KV bucket. */
export function kvStream(bucket: string): string {
  return `KV_${bucket}`;
}

/** Every stream ensureTopology may create: the streams and the buckets' streams. */
function topologyStreams(names: NatsNames): string[] {
  return [...Object.values(names.streams), ...Object.values(names.buckets).map(kvStream)];
}

/** Whether `service` owns (keeps the configuration of) `stream`; used by ensureTopology. */
export function ownsStream(service: ServiceName, stream: string, namespace = ""): boolean {
  return busUse(namespace)[service].owns.includes(stream);
}

/** A user of the NATS server's `authorization` block. */
export interface NatsUser {
  user: string;
  password: string;
  permissions: NatsPermissions;
}

/** One user per service, named after it, with its permissions; `password` gives each one's password. */
export function natsServiceUsers(password: (service: ServiceName) => string, namespace = ""): NatsUser[] {
  return Object.values(SERVICE_NAMES).map((service) => ({
    user: service,
    password: password(service),
    permissions: natsPermissions(service, namespace),
  }));
}
