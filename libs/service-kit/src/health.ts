/**
 * Probes: /livez answers 200 while the event loop turns; /readyz answers 200 only while every
 * dependency answers and the process is not shutting down, so load balancers stop sending work
 * from the first SIGTERM on.
 */
import type { FastifyInstance } from "fastify";
import type { Lifecycle } from "./lifecycle.ts";

export type HealthChecks = Record<string, () => Promise<unknown>>;

/** Probes and the scrape: polled every few seconds, so they have no access line and no span. */
export const PROBE_PATHS: ReadonlySet<string> = new Set(["/livez", "/readyz", "/metrics"]);

const CHECK_TIMEOUT_MS = 1500;

export function registerHealthRoutes(app: FastifyInstance, lifecycle: Lifecycle, checks: HealthChecks) {
  app.get("/livez", async () => ({ status: "alive" }));
  app.get("/readyz", async (_request, reply) => {
    const results = await runChecks(checks);
    const failures = Object.entries(results).filter(([, state]) => state !== "ok");
    if (lifecycle.shuttingDown) failures.unshift(["process", "shutting down"]);
    if (failures.length === 0) return { status: "ready", checks: results };
    return reply
      .code(503)
      .header("retry-after", "5")
      .send({ errors: failures.map(([name, state]) => `${name} ${state}`), checks: results });
  });
}

async function runChecks(checks: HealthChecks): Promise<Record<string, string>> {
  const entries = await Promise.all(
    Object.entries(checks).map(async ([name, check]) => {
      try {
        await withTimeout(check(), CHECK_TIMEOUT_MS);
        return [name, "ok"] as const;
      } catch (error) {
        return [name, `is unreachable: ${(error as Error).message}`] as const;
      }
    }),
  );
  return Object.fromEntries(entries);
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
