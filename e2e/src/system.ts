/**
 * The system under test: all four services as processes on a fresh database and NATS namespace,
 * on free loopback ports. Tests get URLs, the demo-like secrets, and a way to stop it all.
 */
import { readFileSync } from "node:fs";
import net from "node:net";
import { createTestDatabase, randomNamespace, testInfra } from "@dos/service-kit/testing";
import {
  migrateAll,
  PORTS_PER_SYSTEM,
  type RunningService,
  type RunningSystem,
  SERVICES,
  type ServiceSpec,
  type SystemOptions,
  startService,
  startSystem,
  waitReady,
} from "../../scripts/system.ts";

export const OPS_TOKEN = "e2e-operator-token-0123456789abcdef";

export interface SystemUnderTest extends RunningSystem {
  env: Record<string, string>;
  serviceEnv: SystemOptions["serviceEnv"];
  basePort: number;
  /** Stops the services (if still running) and drops the database. */
  teardown(): Promise<void>;
}

export interface BootOptions {
  /** Another database than a fresh one on the test run's PostgreSQL (the fault suite's own server). */
  database?: { url: string; drop(): Promise<void> };
  natsUrl?: string;
  /** Variables of one service only (its own NATS user, say). */
  serviceEnv?: SystemOptions["serviceEnv"];
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
  const database = options.database ?? (await createTestDatabase("e2e"));
  const basePort = await freePortRange(PORTS_PER_SYSTEM);
  const env = {
    DATABASE_URL: database.url,
    NATS_URL: options.natsUrl ?? testInfra().natsUrl,
    NATS_NAMESPACE: randomNamespace(),
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "error",
    API_OPS_TOKEN: OPS_TOKEN,
    WEBHOOKS_SECRET_KEY: "e2e-webhooks-secret-key-0123456789abcdef",
    CONSOLE_SECRET_KEY: "e2e-console-secret-key-0123456789abcdef",
    // The receivers of the tests listen on loopback, which webhooks may reach only when allowed.
    WEBHOOKS_ALLOWED_HOSTS: "127.0.0.0/8,::1",
    // tracking_url and media URLs point at this delivery-api (the first port of the range).
    API_PUBLIC_URL: `http://127.0.0.1:${basePort}`,
    // The suites send hundreds of requests a second from one account and address; the abuse
    // suite, which tests the limits, runs with the services' own.
    ...(options.productionLimits ? {} : OUT_OF_REACH_LIMITS),
    ...extraEnv,
  };
  await migrateAll(env);
  const system = await startSystem({ env, basePort, serviceEnv: options.serviceEnv, logDir: options.logDir });
  return {
    ...system,
    env,
    serviceEnv: options.serviceEnv,
    basePort,
    async teardown() {
      await system.stop();
      await database.drop();
    },
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

/**
 * A base port whose next `count` ports are free on loopback, below the kernel's ephemeral range:
 * a port inside it can be taken meanwhile by any outgoing connection on the machine (the test
 * clients make thousands), which once made a service restarted on its port fail with EADDRINUSE.
 */
export async function freePortRange(count: number): Promise<number> {
  const ceiling = ephemeralPortsStart() - count;
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 10_000 + Math.floor(Math.random() * (ceiling - 10_000));
    const free = await Promise.all(Array.from({ length: count }, (_, i) => isFree(base + i)));
    if (free.every(Boolean)) return base;
  }
  throw new Error("no free port range found");
}

/** The first port the kernel hands to outgoing connections (Linux; 32768 elsewhere or when unreadable). */
function ephemeralPortsStart(): number {
  try {
    const low = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    return low > 12_000 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}
