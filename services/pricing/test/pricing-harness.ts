/**
 * Starts pricing replicas in-process, each with its own NATS connection and pool, on one
 * fresh database and NATS namespace, as main.ts would (minus listen): the tests and the
 * benchmark talk to them over real NATS only.
 */
import { ensureTopology, type NatsNames, natsNames } from "@dos/contracts";
import {
  type BuiltService,
  connectNats,
  createDatabase,
  createLifecycle,
  createLogger,
  type Logger,
  loadConfig,
  migrate,
  type NatsHandle,
} from "@dos/service-kit";
import { createTestDatabase, randomNamespace, testInfra } from "@dos/service-kit/testing";
import { migrations, SCHEMA } from "../migrations/index.ts";
import { buildApp } from "../src/app.ts";
import { CONFIG_PREFIX, configSchema } from "../src/config.ts";

export interface Replica {
  built: BuiltService;
  nats: NatsHandle;
  stop(): Promise<void>;
}

export interface PricingHarness {
  namespace: string;
  databaseUrl: string;
  names: NatsNames;
  /** A client connection, as delivery-api or the operator CLI would have. */
  client: NatsHandle;
  startReplica(env?: Record<string, string>): Promise<Replica>;
  close(): Promise<void>;
}

/** Builds and starts one replica on an existing database and namespace, as main.ts would (minus listen). */
export async function startPricingReplica(options: {
  databaseUrl: string;
  namespace: string;
  name: string;
  logger: Logger;
  env?: Record<string, string>;
}): Promise<Replica> {
  const { databaseUrl, namespace, logger } = options;
  const natsUrl = testInfra().natsUrl;
  const config = loadConfig(configSchema, {
    prefix: CONFIG_PREFIX,
    env: { DATABASE_URL: databaseUrl, NATS_URL: natsUrl, NATS_NAMESPACE: namespace, ...options.env },
  });
  const lifecycle = createLifecycle(logger);
  const db = createDatabase({ url: databaseUrl, schema: SCHEMA, applicationName: options.name, poolSize: 4 });
  const nats = await connectNats(natsUrl, options.name, logger);
  const built = await buildApp({ config, logger, lifecycle, database: db, nats });
  await built.start?.();
  let stopped = false;
  return {
    built,
    nats,
    async stop() {
      if (stopped) return;
      stopped = true;
      await built.app.close();
      await built.stop?.();
      await nats.drain();
      await db.close();
    },
  };
}

export async function createPricingHarness(label: string): Promise<PricingHarness> {
  const database = await createTestDatabase(label);
  const namespace = randomNamespace();
  const logger = createLogger("pricing-test", process.env.TEST_LOG_LEVEL ?? "silent");
  const migrator = createDatabase({ url: database.url, schema: SCHEMA, applicationName: "pricing-test", poolSize: 1 });
  await migrate(migrator.db, { schema: SCHEMA, migrations });
  await migrator.close();
  const client = await connectNats(testInfra().natsUrl, "pricing-test-client", logger);
  // The streams and buckets as every service's boot ensures them (the TARIFFS bucket above all).
  await ensureTopology(client.nc, { namespace });
  const replicas: Replica[] = [];

  return {
    namespace,
    databaseUrl: database.url,
    names: natsNames(namespace),
    client,
    async startReplica(env = {}) {
      const name = `pricing-${replicas.length + 1}`;
      const replica = await startPricingReplica({ databaseUrl: database.url, namespace, name, logger, env });
      replicas.push(replica);
      return replica;
    },
    async close() {
      for (const replica of replicas) await replica.stop();
      await client.drain();
      await database.drop();
    },
  };
}
