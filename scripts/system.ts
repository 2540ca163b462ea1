/**
 * The whole system as separate processes: migrations first, then the five services from their
 * builds, each on its own port, waited for until /readyz answers 200. Used by `npm start` and by
 * the e2e suite, so both boot the system the same way.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

export interface ServiceSpec {
  name: "delivery-api" | "geo-ingest" | "pricing" | "webhook-dispatcher" | "console";
  /** Port offset from the base port. */
  offset: number;
  /** The variable and port offset of the service's internal (operator) listener, when it has one. */
  internal?: { variable: string; offset: number };
  /** Variables the service gets from the system's ports and shared environment (where the others are). */
  links?: (basePort: number, env: Record<string, string>) => Record<string, string>;
}

/** Ports the system takes from its base port: one per service and one per internal listener. */
export const PORTS_PER_SYSTEM = 7;

export const SERVICES: ServiceSpec[] = [
  { name: "delivery-api", offset: 0, internal: { variable: "API_OPS_PORT", offset: 4 } },
  { name: "geo-ingest", offset: 1 },
  { name: "pricing", offset: 2 },
  { name: "webhook-dispatcher", offset: 3 },
  {
    name: "console",
    offset: 5,
    internal: { variable: "CONSOLE_OPS_PORT", offset: 6 },
    links: (basePort, env) => ({
      CONSOLE_PUBLIC_URL: `http://localhost:${basePort + 5}`,
      CONSOLE_API_URL: `http://127.0.0.1:${basePort}`,
      CONSOLE_OPS_URL: `http://127.0.0.1:${basePort + 4}`,
      CONSOLE_OPS_TOKEN: env.API_OPS_TOKEN ?? "",
      // Local runs and tests are plain http: the cookies cannot be Secure there.
      CONSOLE_INSECURE_HTTP_FOR_LOCAL_DEV: "true",
      // The System page reads each service's /readyz and /metrics on its own port.
      CONSOLE_SYSTEM_DELIVERY_API_URL: `http://127.0.0.1:${basePort}`,
      CONSOLE_SYSTEM_GEO_INGEST_URL: `http://127.0.0.1:${basePort + 1}`,
      CONSOLE_SYSTEM_PRICING_URL: `http://127.0.0.1:${basePort + 2}`,
      CONSOLE_SYSTEM_WEBHOOK_DISPATCHER_URL: `http://127.0.0.1:${basePort + 3}`,
    }),
  },
];

export interface SystemOptions {
  /** DATABASE_URL, NATS_URL, NATS_NAMESPACE, secrets and any other variable every service gets. */
  env: Record<string, string>;
  basePort: number;
  /** Variables of one service only, over `env` (its own NATS user, say). */
  serviceEnv?: Partial<Record<ServiceSpec["name"], Record<string, string>>>;
  /** Where each service's log goes (a file per service); omitted: inherited stdout. */
  logDir?: string;
  readyTimeoutMs?: number;
}

export interface RunningService {
  spec: ServiceSpec;
  url: string;
  /** The internal listener's URL (the operator API), when the service has one. */
  internalUrl?: string;
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface RunningSystem {
  services: RunningService[];
  url(name: ServiceSpec["name"]): string;
  /** delivery-api's internal listener: the only address serving the operator API (/ops/v1). */
  opsUrl: string;
  /** Sends SIGTERM to every service and waits for all to exit. */
  stop(): Promise<Array<{ name: string; code: number | null; signal: NodeJS.Signals | null; ms: number }>>;
}

/** Applies every service's migrations, in sequence, with the given environment. */
export async function migrateAll(env: Record<string, string>): Promise<void> {
  for (const spec of SERVICES) {
    const child = spawn(process.execPath, [serviceEntry(spec, "migrate")], {
      env: { ...process.env, ...env, LOG_LEVEL: env.LOG_LEVEL ?? "warn" },
      stdio: ["ignore", "inherit", "inherit"],
    });
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    if (code !== 0) throw new Error(`migrations of ${spec.name} failed (exit ${code})`);
  }
}

export function serviceEntry(spec: ServiceSpec, entry: "main" | "migrate"): string {
  return path.join(root, "services", spec.name, "dist", "src", `${entry}.js`);
}

/**
 * The V8 flags of the service's start script (`node [--flag ...] dist/src/main.js`), which its
 * image runs with too (deploy/images/image.ts): `npm start` and the e2e systems run each service
 * as it is deployed, with the same heap bounds.
 */
function startFlags(spec: ServiceSpec): string[] {
  const manifest = JSON.parse(readFileSync(path.join(root, "services", spec.name, "package.json"), "utf8")) as {
    scripts?: { start?: string };
  };
  return (manifest.scripts?.start ?? "")
    .trim()
    .split(/\s+/)
    .slice(1, -1)
    .filter((word) => word.startsWith("--"));
}

/**
 * A service's own variables in a system: its port (and internal listener's) from the base port,
 * on loopback, and where the others are (its links).
 */
export function listenEnv(spec: ServiceSpec, basePort: number, env: Record<string, string>): Record<string, string> {
  return {
    PORT: String(basePort + spec.offset),
    HOST: "127.0.0.1",
    ...(spec.internal ? { [spec.internal.variable]: String(basePort + spec.internal.offset) } : {}),
    ...spec.links?.(basePort, env),
  };
}

/** Starts one service process, from its build, with its start script's V8 flags. */
export function startService(spec: ServiceSpec, options: SystemOptions): RunningService {
  const port = options.basePort + spec.offset;
  const internalPort = spec.internal && options.basePort + spec.internal.offset;
  let stdio: Array<"ignore" | "inherit" | "pipe"> = ["ignore", "inherit", "inherit"];
  if (options.logDir) stdio = ["ignore", "pipe", "pipe"];
  const child = spawn(process.execPath, [...startFlags(spec), serviceEntry(spec, "main")], {
    env: {
      ...process.env,
      ...options.env,
      ...options.serviceEnv?.[spec.name],
      ...listenEnv(spec, options.basePort, options.env),
    },
    stdio,
  });
  if (options.logDir) {
    mkdirSync(options.logDir, { recursive: true });
    const log = createWriteStream(path.join(options.logDir, `${spec.name}.log`), { flags: "a" });
    child.stdout?.pipe(log);
    child.stderr?.pipe(log);
  }
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  const internalUrl = internalPort === undefined ? undefined : `http://127.0.0.1:${internalPort}`;
  return { spec, url: `http://127.0.0.1:${port}`, internalUrl, child, exited };
}

/** Starts the five services and waits until each answers /readyz with 200. */
export async function startSystem(options: SystemOptions): Promise<RunningSystem> {
  const services = SERVICES.map((spec) => startService(spec, options));
  const system: RunningSystem = {
    services,
    url(name) {
      const found = services.find((s) => s.spec.name === name);
      if (!found) throw new Error(`no service ${name}`);
      return found.url;
    },
    opsUrl: services.find((s) => s.spec.name === "delivery-api")?.internalUrl as string,
    async stop() {
      return Promise.all(
        services.map(async (service) => {
          const started = Date.now();
          if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill("SIGTERM");
          const { code, signal } = await service.exited;
          return { name: service.spec.name, code, signal, ms: Date.now() - started };
        }),
      );
    },
  };
  try {
    await Promise.all(services.map((service) => waitReady(service, options.readyTimeoutMs ?? 60_000)));
  } catch (error) {
    await system.stop();
    throw error;
  }
  return system;
}

/** Polls /readyz until 200; fails early when the process exits. */
export async function waitReady(service: RunningService, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  service.exited.then(() => {
    exited = true;
  });
  while (Date.now() < deadline) {
    if (exited) throw new Error(`${service.spec.name} exited before it was ready (exit ${service.child.exitCode})`);
    try {
      const response = await fetch(`${service.url}/readyz`, { signal: AbortSignal.timeout(2000) });
      if (response.status === 200) return;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${service.spec.name} was not ready within ${timeoutMs} ms`);
}
