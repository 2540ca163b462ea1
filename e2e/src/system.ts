/**
 * The system under test: all four services as processes on a fresh database and NATS namespace,
 * on free loopback ports. Tests get URLs, the demo-like secrets, and a way to stop it all.
 */
import net from "node:net";
import { createTestDatabase, randomNamespace, testInfra } from "@dos/service-kit/testing";
import { migrateAll, type RunningSystem, startSystem } from "../../scripts/system.ts";

export const OPS_TOKEN = "e2e-operator-token-0123456789abcdef";

export interface SystemUnderTest extends RunningSystem {
  env: Record<string, string>;
  /** Stops the services (if still running) and drops the database. */
  teardown(): Promise<void>;
}

export async function bootSystemUnderTest(extraEnv: Record<string, string> = {}): Promise<SystemUnderTest> {
  const database = await createTestDatabase("e2e");
  const basePort = await freePortRange(4);
  const env = {
    DATABASE_URL: database.url,
    NATS_URL: testInfra().natsUrl,
    NATS_NAMESPACE: randomNamespace(),
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "warn",
    API_OPS_TOKEN: OPS_TOKEN,
    WEBHOOKS_SECRET_KEY: "e2e-webhooks-secret-key-0123456789abcdef",
    // The receivers of the tests listen on loopback, which webhooks may reach only when allowed.
    WEBHOOKS_ALLOWED_HOSTS: "127.0.0.0/8,::1",
    // tracking_url and media URLs point at this delivery-api (the first port of the range).
    API_PUBLIC_URL: `http://127.0.0.1:${basePort}`,
    ...extraEnv,
  };
  await migrateAll(env);
  const system = await startSystem({ env, basePort });
  return {
    ...system,
    env,
    async teardown() {
      await system.stop();
      await database.drop();
    },
  };
}

/** A base port whose next `count` ports are free on loopback. */
export async function freePortRange(count: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 30_000);
    const free = await Promise.all(Array.from({ length: count }, (_, i) => isFree(base + i)));
    if (free.every(Boolean)) return base;
  }
  throw new Error("no free port range found");
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}
