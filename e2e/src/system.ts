/**
 * The system under test: all five services as processes on a fresh database and a NATS server of
 * the system's own with authentication on — each service under its own user with the permissions
 * libs/contracts generates, exactly as deployed (src/own-infra.ts startLockedNats) — on free
 * loopback ports. Tests get URLs, the demo-like secrets, the NATS server (its harness user for
 * the test's own bus access) and a way to stop it all; a refusal in the server's log fails the
 * teardown, as a permission a service lacks would fail in production.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { createTestDatabase, type TestDatabaseTemplate } from "@dos/service-kit/testing";
import {
  migrateAll,
  PORTS_PER_SYSTEM,
  type RunningService,
  type RunningSystem,
  root,
  SERVICES,
  type ServiceSpec,
  type SystemOptions,
  startService,
  startSystem,
  waitReady,
} from "../../scripts/system.ts";
import { type LockedNats, startLockedNats } from "./own-infra.ts";
import { freePortRange } from "./ports.ts";

export const OPS_TOKEN = "e2e-operator-token-0123456789abcdef";

export interface SystemUnderTest extends RunningSystem {
  env: Record<string, string>;
  serviceEnv: SystemOptions["serviceEnv"];
  basePort: number;
  /** The system's NATS server: the URL, the harness's credentials, the refusals it logged. */
  nats: LockedNats;
  /**
   * Stops the services (if still running), the NATS server when the system started it, and drops
   * the database; fails when the NATS server refused anything (unless refusalsOnPurpose).
   */
  teardown(): Promise<void>;
}

export interface BootOptions {
  /** Another database than a fresh one on the test run's PostgreSQL (the fault suite's own server). */
  database?: { url: string; drop(): Promise<void> };
  /** Another NATS server than one of the system's own (the fault suite's, which it stops and starts). */
  nats?: LockedNats;
  /** Variables of one service only, over its NATS user's. */
  serviceEnv?: SystemOptions["serviceEnv"];
  /** The test provokes refusals itself (nats-permissions.test.ts): the teardown does not fail on them. */
  refusalsOnPurpose?: boolean;
  /** Service logs go to files here instead of the test's output. */
  logDir?: string;
  /** The client API's rate limits as the services set them by default, not out of reach. */
  productionLimits?: boolean;
}

const OUT_OF_REACH_LIMITS = {
  API_RATE_LIMIT_QUOTA: "1000000",
  API_RATE_LIMIT_WINDOW_SECONDS: "1",
  API_AUTH_FAILURE_QUOTA: "1000000",
  API_AUTH_FAILURE_WINDOW_SECONDS: "1",
};

export async function bootSystemUnderTest(
  extraEnv: Record<string, string> = {},
  options: BootOptions = {},
): Promise<SystemUnderTest> {
  const nats = options.nats ?? (await startLockedNats("e2e-nats"));
  const database = options.database ?? (await createTestDatabase("e2e", migratedTemplate()));
  const basePort = await freePortRange(PORTS_PER_SYSTEM);
  const env = systemEnv(
    {
      databaseUrl: database.url,
      basePort,
      natsUrl: nats.url,
      // The server is the system's own: production's names, so the permissions are production's.
      natsNamespace: nats.namespace,
      productionLimits: options.productionLimits,
    },
    extraEnv,
  );
  const serviceEnv = Object.fromEntries(
    SERVICES.map(({ name }) => [name, { ...nats.serviceEnv[name], ...options.serviceEnv?.[name] }]),
  ) as SystemOptions["serviceEnv"];
  let system: RunningSystem;
  try {
    if (options.database) await migrateAll(env);
    system = await startSystem({ env, basePort, serviceEnv, logDir: options.logDir });
  } catch (error) {
    if (!options.nats) await nats.shutdown();
    await database.drop();
    throw error;
  }
  return {
    ...system,
    env,
    serviceEnv,
    basePort,
    nats,
    async teardown() {
      await system.stop();
      const refusals = nats.refusals();
      if (!options.nats) await nats.shutdown();
      await database.drop();
      if (refusals.length > 0 && !options.refusalsOnPurpose) {
        throw new Error(`the NATS server refused the system's traffic:\n${refusals.join("\n")}`);
      }
    },
  };
}

/**
 * A fresh system's database: a copy of one that every service's migrate entry migrated, once
 * per build (the key digests the services' and libraries' compiled code). Each boot saves five
 * migrate processes (about 5 CPU-seconds) and PostgreSQL the DDL.
 */
let template: TestDatabaseTemplate | undefined;
function migratedTemplate(): TestDatabaseTemplate {
  // Once per process: a file that boots several systems reads the builds once.
  if (template) return template;
  const digest = createHash("sha256");
  for (const dist of ["services", "libs"]
    .flatMap((top) => readdirSync(path.join(root, top)).map((name) => path.join(root, top, name, "dist")))
    .filter(existsSync)) {
    const files = readdirSync(dist, { recursive: true, encoding: "utf8" }).filter((file) => file.endsWith(".js"));
    for (const file of files.sort()) digest.update(file).update(readFileSync(path.join(dist, file)));
  }
  template = {
    key: digest.digest("hex").slice(0, 32),
    prepare: (url) => migrateAll({ DATABASE_URL: url, LOG_LEVEL: "warn" }),
  };
  return template;
}

/**
 * The variables every service of a test system gets: its database, NATS and namespace, the test
 * secrets, loopback webhooks allowed, and the client API's limits out of reach unless asked for.
 */
export function systemEnv(
  options: {
    databaseUrl: string;
    basePort: number;
    natsUrl: string;
    natsNamespace: string;
    productionLimits?: boolean;
  },
  extraEnv: Record<string, string> = {},
): Record<string, string> {
  return {
    DATABASE_URL: options.databaseUrl,
    NATS_URL: options.natsUrl,
    NATS_NAMESPACE: options.natsNamespace,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "error",
    API_OPS_TOKEN: OPS_TOKEN,
    WEBHOOKS_SECRET_KEY: "e2e-webhooks-secret-key-0123456789abcdef",
    CONSOLE_SECRET_KEY: "e2e-console-secret-key-0123456789abcdef",
    // The receivers of the tests listen on loopback, which webhooks may reach only when allowed.
    WEBHOOKS_ALLOWED_HOSTS: "127.0.0.0/8,::1",
    // tracking_url and media URLs point at this delivery-api (the first port of the range).
    API_PUBLIC_URL: `http://127.0.0.1:${options.basePort}`,
    // The suites send hundreds of requests a second from one account and address; the abuse
    // suite, which tests the limits, runs with the services' own.
    ...(options.productionLimits ? {} : OUT_OF_REACH_LIMITS),
    ...extraEnv,
  };
}

/**
 * Starts one service again on its port (after it exited or was killed) and waits until it is
 * ready; the system's list then holds the new process, so teardown stops it.
 */
export async function restartService(
  system: SystemUnderTest,
  name: ServiceSpec["name"],
  logDir?: string,
): Promise<RunningService> {
  const spec = SERVICES.find((s) => s.name === name) as ServiceSpec;
  const index = system.services.findIndex((s) => s.spec.name === name);
  const restarted = startService(spec, {
    env: system.env,
    serviceEnv: system.serviceEnv,
    basePort: system.basePort,
    logDir,
  });
  system.services[index] = restarted;
  await waitReady(restarted, 60_000);
  return restarted;
}

/** Kills a service with SIGKILL (no shutdown work at all) and waits for it to be gone. */
export async function killService(system: SystemUnderTest, name: ServiceSpec["name"]): Promise<void> {
  const service = system.services.find((s) => s.spec.name === name) as RunningService;
  service.child.kill("SIGKILL");
  await service.exited;
}
