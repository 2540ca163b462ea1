/**
 * Test harness: a real webhook-dispatcher on its own database and NATS namespace (or sharing
 * another's, for replicas and restarts), the bus requests a client's API would make, and a
 * publisher of delivery events as delivery-api's outbox publishes them.
 */
import { type DeliveryEvent, ensureTopology, natsNames, SERVICE_ERROR_HEADERS } from "@dos/contracts";
import {
  type BuiltService,
  connectNats,
  createDatabase,
  createLifecycle,
  createLogger,
  migrate,
  type NatsHandle,
} from "@dos/service-kit";
import { createTestDatabase, randomNamespace, type TestDatabase, testInfra } from "@dos/service-kit/testing";
import { jetstream } from "@nats-io/jetstream";
import type { Kysely } from "kysely";
import { migrations, SCHEMA } from "../migrations/index.ts";
import { buildApp } from "../src/app.ts";
import { type Config, loadDispatcherConfig } from "../src/config.ts";
import type { DB } from "../src/db/database.ts";

export const TEST_SECRET_KEY = "test-only-secret-key-0123456789abcdef";

/** Short schedules so retries happen within a test; loopback allowed as in the local demo. */
export const TEST_ENV: Record<string, string> = {
  WEBHOOKS_SECRET_KEY: TEST_SECRET_KEY,
  WEBHOOKS_ALLOWED_HOSTS: "127.0.0.0/8,::1",
  WEBHOOKS_RETRY_SCHEDULE: "0,100,200",
  WEBHOOKS_RETRY_JITTER: "0",
  WEBHOOKS_POLL_INTERVAL_MS: "20",
  WEBHOOKS_REBALANCE_INTERVAL_MS: "100",
  WEBHOOKS_TIMEOUT_MS: "1000",
  WEBHOOKS_STATS_INTERVAL_MS: "200",
};

export interface TestDispatcher {
  built: BuiltService;
  db: Kysely<DB>;
  config: Config;
  nats: NatsHandle;
  namespace: string;
  databaseUrl: string;
  /** Asks the endpoint registry over NATS, as delivery-api does; an error reply is returned as such. */
  request<T = unknown>(
    operation: keyof ReturnType<typeof natsNames>["services"]["webhooks"]["subjects"],
    body: object,
  ): Promise<BusReply<T>>;
  publish(event: DeliveryEvent): Promise<void>;
  metric(name: string, labels?: string): Promise<number>;
  /** Stops the dispatcher; the database stays when it is shared. */
  close(): Promise<void>;
}

export type BusReply<T> = { ok: true; value: T } | { ok: false; code: number; errors: string[] };

export interface StartOptions {
  env?: Record<string, string>;
  /** Share another dispatcher's database and namespace (a replica, or a restart). */
  shareWith?: { databaseUrl: string; namespace: string };
  /** Work on this NATS namespace (another service's, under test beside it) with a database of its own. */
  namespace?: string;
}

export async function startTestDispatcher(options: StartOptions = {}): Promise<TestDispatcher> {
  const owned: TestDatabase | undefined = options.shareWith ? undefined : await createTestDatabase("webhooks");
  const databaseUrl = options.shareWith?.databaseUrl ?? (owned as TestDatabase).url;
  const namespace = options.shareWith?.namespace ?? options.namespace ?? randomNamespace();
  const config = loadDispatcherConfig({
    DATABASE_URL: databaseUrl,
    NATS_URL: testInfra().natsUrl,
    NATS_NAMESPACE: namespace,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "silent",
    ...TEST_ENV,
    ...options.env,
  });
  const logger = createLogger("webhook-dispatcher-test", config.LOG_LEVEL);
  const database = createDatabase({ url: databaseUrl, schema: SCHEMA, applicationName: "webhook-dispatcher-test" });
  await migrate(database.db, { schema: SCHEMA, migrations });
  const nats = await connectNats(config.NATS_URL, "webhook-dispatcher-test", logger);
  await ensureTopology(nats.nc, { namespace });
  const built = await buildApp({ config, logger, lifecycle: createLifecycle(logger), database, nats });
  await built.app.ready();
  await built.start?.();
  const names = natsNames(namespace);
  const js = jetstream(nats.nc);

  return {
    built,
    db: database.db as Kysely<DB>,
    config,
    nats,
    namespace,
    databaseUrl,
    async request<T>(operation: keyof typeof names.services.webhooks.subjects, body: object): Promise<BusReply<T>> {
      const reply = await nats.nc.request(names.services.webhooks.subjects[operation], JSON.stringify(body), {
        timeout: 5000,
      });
      const code = reply.headers?.get(SERVICE_ERROR_HEADERS.code);
      if (code) return { ok: false, code: Number(code), errors: (reply.json() as { errors: string[] }).errors };
      return { ok: true, value: reply.json() as T };
    },
    async publish(event) {
      const subject = names.subjects.deliveryEvent(event.account_id, event.delivery_id, event.type);
      await js.publish(subject, JSON.stringify(event), { msgID: event.id });
    },
    async metric(name, labels = "") {
      const text = (await built.app.inject({ method: "GET", url: "/metrics" })).body;
      const line = text.split("\n").find((l) => l.startsWith(`${name}{`) && l.includes(labels));
      return line ? Number(line.split(" ").pop()) : 0;
    },
    async close() {
      await built.app.close();
      await built.stop?.();
      await nats.drain();
      await database.close();
      await owned?.drop();
    },
  };
}

/** Creates an endpoint through the registry and returns it with its secret. */
export async function createEndpoint(
  dispatcher: TestDispatcher,
  accountId: number,
  url: string,
  events?: string[],
): Promise<{ id: string; secret: string }> {
  const reply = await dispatcher.request<{ id: string; secret: string }>("create", {
    account_id: accountId,
    url,
    events,
  });
  if (!reply.ok) throw new Error(`endpoint not created: ${reply.code} ${reply.errors.join("; ")}`);
  return reply.value;
}
