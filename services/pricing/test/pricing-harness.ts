/**
 * Starts pricing replicas in-process, each with its own NATS connection and pool, on one
 * fresh database and NATS namespace, as main.ts would (minus listen): the tests and the
 * benchmark talk to them over real NATS only.
 */
import { type NatsNames, natsNames } from "@dos/contracts";
import {
  type BuiltService,
  connectNats,
  createDatabase,
  createLifecycle,
  createLogger,
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
  names: NatsNames;
  /** A client connection, as delivery-api or the operator CLI would have. */
  client: NatsHandle;
  startReplica(env?: Record<string, string>): Promise<Replica>;
  close(): Promise<void>;
}

export async function createPricingHarness(label: string): Promise<PricingHarness> {
  const database = await createTestDatabase(label);
  const namespace = randomNamespace();
  const infra = testInfra();
  const logger = createLogger("pricing-test", process.env.LOG_LEVEL ?? "silent");
  const migrator = createDatabase({ url: database.url, schema: SCHEMA, applicationName: "pricing-test", poolSize: 1 });
  await migrate(migrator.db, { schema: SCHEMA, migrations });
  await migrator.close();
  const client = await connectNats(infra.natsUrl, "pricing-test-client", logger);
  const replicas: Replica[] = [];

  return {
    namespace,
    names: natsNames(namespace),
    client,
    async startReplica(env = {}) {
      const config = loadConfig(configSchema, {
        prefix: CONFIG_PREFIX,
        env: { DATABASE_URL: database.url, NATS_URL: infra.natsUrl, NATS_NAMESPACE: namespace, ...env },
      });
      const lifecycle = createLifecycle(logger);
      const db = createDatabase({ url: database.url, schema: SCHEMA, applicationName: "pricing", poolSize: 4 });
      const nats = await connectNats(infra.natsUrl, `pricing-${replicas.length + 1}`, logger);
      const built = await buildApp({ config, logger, lifecycle, database: db, nats });
      await built.start?.();
      let stopped = false;
      const replica: Replica = {
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
