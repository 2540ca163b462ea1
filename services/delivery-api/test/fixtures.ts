/**
 * Test fixtures of delivery-api: a real app on its own database and NATS namespace, and client
 * accounts written straight to the database (the operator API has its own tests).
 */
import { randomBytes } from "node:crypto";
import { ensureTopology } from "@dos/contracts";
import type { Logger } from "@dos/service-kit";
import { connectNats, createDatabase, createLifecycle, createLogger, loadConfig, migrate } from "@dos/service-kit";
import { createTestDatabase, randomNamespace, testInfra } from "@dos/service-kit/testing";
import type { FastifyInstance } from "fastify";
import type { Kysely } from "kysely";
import { migrations, SCHEMA } from "../migrations/index.ts";
import { buildApp, NATS_CONNECTION } from "../src/app.ts";
import { hashToken } from "../src/auth/client-auth.ts";
import { CONFIG_PREFIX, type Config, configSchema } from "../src/config.ts";
import type { DB } from "../src/db/database.ts";

export const OPS_TOKEN = "ops-token-for-tests-0123456789abcdef";

export interface TestApi {
  app: FastifyInstance;
  db: Kysely<DB>;
  pool: ReturnType<typeof createDatabase>["pool"];
  config: Config;
  nats: Awaited<ReturnType<typeof connectNats>>;
  /** Starts background work (the outbox relay) as main.ts would after listen. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Builds delivery-api against a fresh database and NATS namespace; `env` overrides config, and a
 * test that reads the log lines passes its own `logger`.
 */
export async function startTestApi(
  env: Record<string, string> = {},
  options: { logger?: Logger } = {},
): Promise<TestApi> {
  const testDb = await createTestDatabase("delivery_api");
  const infra = testInfra();
  const config = loadConfig(configSchema, {
    prefix: CONFIG_PREFIX,
    env: {
      DATABASE_URL: testDb.url,
      NATS_URL: infra.natsUrl,
      NATS_NAMESPACE: randomNamespace(),
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "silent",
      API_OPS_TOKEN: OPS_TOKEN,
      // Tests send hundreds of requests a second from one account and address; the limits have
      // their own tests (rate-limits, auth-failures), which set what they test.
      API_RATE_LIMIT_QUOTA: "1000000",
      API_RATE_LIMIT_WINDOW_SECONDS: "1",
      API_AUTH_FAILURE_QUOTA: "1000000",
      API_AUTH_FAILURE_WINDOW_SECONDS: "1",
      ...env,
    },
  });
  const logger = options.logger ?? createLogger("delivery-api-test", config.LOG_LEVEL);
  const lifecycle = createLifecycle(logger);
  const database = createDatabase({
    url: config.DATABASE_URL,
    schema: SCHEMA,
    applicationName: "delivery-api-test",
    poolSize: config.DATABASE_POOL_SIZE,
  });
  await migrate(database.db, { schema: SCHEMA, migrations });
  const nats = await connectNats(config.NATS_URL, "delivery-api-test", logger, NATS_CONNECTION);
  await ensureTopology(nats.nc, { namespace: config.NATS_NAMESPACE });
  const built = await buildApp({ config, logger, lifecycle, database, nats });
  await built.app.ready();
  return {
    app: built.app,
    db: database.db as Kysely<DB>,
    pool: database.pool,
    config,
    nats,
    start: async () => built.start?.(),
    async close() {
      await built.app.close();
      await built.stop?.();
      await nats.drain();
      await database.close();
      await testDb.drop();
    },
  };
}

/**
 * A second replica of `api`: another app, pool and NATS connection on the same database and
 * NATS namespace, started (its background work runs); close() leaves the database to `api`.
 */
export async function startReplica(api: TestApi): Promise<Pick<TestApi, "app" | "close">> {
  const { config } = api;
  const logger = createLogger("delivery-api-replica", config.LOG_LEVEL);
  const database = createDatabase({
    url: config.DATABASE_URL,
    schema: SCHEMA,
    applicationName: "delivery-api-replica",
    poolSize: config.DATABASE_POOL_SIZE,
  });
  const nats = await connectNats(config.NATS_URL, "delivery-api-replica", logger, NATS_CONNECTION);
  const built = await buildApp({ config, logger, lifecycle: createLifecycle(logger), database, nats });
  await built.app.ready();
  await built.start?.();
  return {
    app: built.app,
    async close() {
      await built.app.close();
      await built.stop?.();
      await nats.drain();
      await database.close();
    },
  };
}

export interface TestAccount {
  accountId: number;
  email: string;
  token: string;
  headers: Record<string, string>;
  packageTypeIds: number[];
  postalCodes: string[];
  savedAddressIds: number[];
}

/** Writes a client account with a user and token, zones, package types, a default place and a saved address. */
export async function createTestAccount(
  db: Kysely<DB>,
  options: { environment?: "production" | "test"; companyName?: string } = {},
): Promise<TestAccount> {
  const suffix = randomBytes(4).toString("hex");
  const account = await db
    .insertInto("accounts")
    .values({ company_name: options.companyName ?? `Shop ${suffix}`, environment: options.environment ?? "production" })
    .returning("id")
    .executeTakeFirstOrThrow();
  const email = `integrator-${suffix}@shop.example`;
  const token = randomBytes(24).toString("base64url");
  const user = await db
    .insertInto("users")
    .values({ account_id: account.id, email, name: "Integrator" })
    .returning("id")
    .executeTakeFirstOrThrow();
  await db
    .insertInto("api_tokens")
    .values({ user_id: user.id, token_sha256: hashToken(token), token_hint: token.slice(0, 4) })
    .execute();
  const postalCodes = ["75001", "75002", "69001"];
  await db
    .insertInto("delivery_zones")
    .values(
      postalCodes.map((postal_code, i) => ({
        account_id: account.id,
        postal_code,
        latitude: 48.86 + i / 100,
        longitude: 2.34,
      })),
    )
    .execute();
  const types = await db
    .insertInto("package_types")
    .values([
      { account_id: account.id, name: "Box M", volume_dm3: 30, weight_kg: 5, fragility: null, temperature: null },
      {
        account_id: account.id,
        name: "Size L",
        volume_dm3: 80,
        weight_kg: 15,
        fragility: null,
        temperature: null,
        is_size_category: true,
      },
    ])
    .returning("id")
    .execute();
  await db
    .insertInto("places")
    .values({
      account_id: account.id,
      kind: "default",
      label: "Warehouse",
      recipient_name: "Warehouse Team",
      recipient_phone: "+33 1 23 45 67 89",
      company_name: options.companyName ?? `Shop ${suffix}`,
      address: "10 Rue de Rivoli",
      postal_code: "75001",
      city: "Paris",
    })
    .execute();
  const saved = await db
    .insertInto("places")
    .values({
      account_id: account.id,
      kind: "saved",
      label: "Store Lyon",
      recipient_name: "Store Manager",
      recipient_phone: "+33 4 12 34 56 78",
      address: "5 Place Bellecour",
      postal_code: "69001",
      city: "Lyon",
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return {
    accountId: account.id,
    email,
    token,
    headers: { "x-user-email": email, "x-user-token": token },
    packageTypeIds: types.map((t) => t.id),
    postalCodes,
    savedAddressIds: [saved.id],
  };
}

/** A uuid as the API answers ids of webhooks and events. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
