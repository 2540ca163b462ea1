/**
 * A geo-ingest built with real dependencies for one test file: its own database (migrated),
 * its own NATS namespace, and the FLEET bucket that tests write directly until delivery-api's
 * dispatch feature writes it.
 */
import { once } from "node:events";
import net from "node:net";
import { ensureTopology, type FleetEntry, fleetKey, natsNames } from "@dos/contracts";
import {
  connectNats,
  createDatabase,
  createLifecycle,
  createLogger,
  type Database,
  loadConfig,
  migrate,
  type NatsHandle,
} from "@dos/service-kit";
import { createTestDatabase, randomNamespace, type TcpProxy, testInfra, waitFor } from "@dos/service-kit/testing";
import { type KV, Kvm } from "@nats-io/kv";
import { migrations, SCHEMA } from "../migrations/index.ts";
import { buildApp, type GeoIngest } from "../src/app.ts";
import { CONFIG_PREFIX, type Config, configSchema } from "../src/config.ts";

const OPS_TOKEN = "ops-token-for-tests-0123456789";

export interface Harness {
  built: GeoIngest;
  app: GeoIngest["app"];
  config: Config;
  database: Database<unknown>;
  databaseUrl: string;
  nats: NatsHandle;
  namespace: string;
  kv: KV;
  /** Writes a vehicle's fleet entry and waits until geo-ingest's cache holds it. */
  putVehicle(entry: Partial<FleetEntry> & { vehicle_external_id: string }): Promise<FleetEntry>;
  /** Stored positions of a vehicle, oldest first. */
  positions(vehicleExternalId: string): Promise<StoredPosition[]>;
  /**
   * A second geo-ingest on the same database, NATS namespace and config, with its own rate
   * limiter: what an ingress that does not route by vehicle would send a vehicle's requests to.
   */
  replica(): Promise<Pick<Harness, "app"> & { close(): Promise<void> }>;
  close(): Promise<void>;
}

export interface StoredPosition {
  vehicle_external_id: string;
  recorded_at: Date;
  received_at: Date;
  round_id: number;
  provider: string;
  tracker_id: number | null;
  latitude: number;
  longitude: number;
}

/** Fleet entries as delivery-api will write them. */
export function fleetEntry(entry: Partial<FleetEntry> & { vehicle_external_id: string }): FleetEntry {
  return {
    vehicle_id: 1,
    provider: "acme-trackers",
    provider_token_sha256: null,
    active_round_id: 100,
    messenger_id: 7,
    updated_at: new Date().toISOString(),
    ...entry,
  };
}

/** Migrates a fresh database for geo-ingest; returns its URL and drop(). */
export async function migratedDatabase(label: string) {
  // The migration logs the storage mode it picks; tests keep their output to test results.
  process.env.LOG_LEVEL ??= "silent";
  const testDatabase = await createTestDatabase(label);
  const database = createDatabase({ url: testDatabase.url, schema: SCHEMA, applicationName: "geo-ingest-test" });
  try {
    await migrate(database.db, { schema: SCHEMA, migrations });
  } finally {
    await database.close();
  }
  return testDatabase;
}

export interface HarnessOptions {
  /** Reach PostgreSQL through this proxy, so a test can cut it. */
  databaseProxy?: TcpProxy;
  /** Share this NATS namespace (another service's test beside it); a random one otherwise. */
  namespace?: string;
}

export async function startHarness(
  label: string,
  env: Record<string, string> = {},
  options: HarnessOptions = {},
): Promise<Harness> {
  const testDatabase = await migratedDatabase(label);
  const serviceDatabaseUrl = new URL(testDatabase.url);
  if (options.databaseProxy) serviceDatabaseUrl.host = `127.0.0.1:${options.databaseProxy.port}`;
  const namespace = options.namespace ?? randomNamespace();
  const { natsUrl } = testInfra();
  const config = loadConfig(configSchema, {
    prefix: CONFIG_PREFIX,
    env: {
      DATABASE_URL: serviceDatabaseUrl.toString(),
      NATS_URL: natsUrl,
      NATS_NAMESPACE: namespace,
      LOG_LEVEL: "silent",
      GEO_OPS_TOKEN: OPS_TOKEN,
      ...env,
    },
  });
  const logger = createLogger("geo-ingest", config.LOG_LEVEL);
  const database = createDatabase({ url: config.DATABASE_URL, schema: SCHEMA, applicationName: "geo-ingest-test" });
  const nats = await connectNats(natsUrl, "geo-ingest-test", logger);
  await ensureTopology(nats.nc, { namespace });
  const built = await buildApp({ config, logger, lifecycle: createLifecycle(logger), database, nats });
  await built.start?.();
  const kv = await new Kvm(nats.nc).open(natsNames(namespace).buckets.fleet);

  return {
    built,
    app: built.app,
    config,
    database,
    databaseUrl: testDatabase.url,
    nats,
    namespace,
    kv,
    async putVehicle(partial) {
      const entry = fleetEntry(partial);
      const revision = await kv.put(fleetKey(entry.vehicle_external_id), JSON.stringify(entry));
      await waitFor(async () => built.fleet.revision >= revision, 5000, `fleet entry of ${entry.vehicle_external_id}`);
      return entry;
    },
    async positions(vehicleExternalId) {
      const { rows } = await database.pool.query<StoredPosition>(
        "select * from vehicle_positions where vehicle_external_id = $1 order by recorded_at",
        [vehicleExternalId],
      );
      return rows;
    },
    async replica() {
      const replica = await buildApp({ config, logger, lifecycle: createLifecycle(logger), database, nats });
      await replica.start?.();
      return {
        app: replica.app,
        async close() {
          await replica.app.close();
          await replica.stop?.();
        },
      };
    },
    async close() {
      await built.app.close();
      await built.stop?.();
      await nats.drain();
      await database.close();
      await testDatabase.drop();
    },
  };
}

/** A loopback port nobody listens on, for a service started as its own process. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as net.AddressInfo;
  server.close();
  await once(server, "close");
  return port;
}

/** Posts a position the way a tracker does. */
export function postPosition(
  harness: Pick<Harness, "app">,
  vehicleId: string,
  body: unknown,
  headers: Record<string, string> = {},
) {
  return harness.app.inject({
    method: "POST",
    url: `/external/vehicles/${encodeURIComponent(vehicleId)}/geolocations`,
    headers: { "content-type": "application/json", ...headers },
    payload: JSON.stringify(body),
  });
}
