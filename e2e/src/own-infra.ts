/**
 * Servers of a test's own, so the system under test runs on a locked-down bus and a suite can stop
 * and start its servers without disturbing the machine's or other tests':
 * - `startLockedNats`: a `nats-server -js` with the production authorization — one user per
 *   service with the permissions libs/contracts derives (permissions.ts), the same the deployment
 *   gets — plus the test harness's own user (HARNESS_USER) for what a test does on the bus itself.
 *   Every e2e system runs on one (src/system.ts); its log shows each refusal.
 * - `startOwnInfra`: a fresh `initdb` PostgreSQL cluster and such a NATS server, for the fault suite.
 * They run on spare loopback ports with their data under var/e2e-infra/, and are always stopped at
 * the end — by `shutdown()`, and by exit handlers when the process ends another way. Leftovers of a
 * process that was killed outright are stopped by the next start.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { natsServiceUsers, SERVICE_NAMES, type ServiceName } from "@dos/contracts";
import { root } from "../../scripts/system.ts";
import { freePortRange } from "./ports.ts";

const INFRA_DIR = path.join(root, "var", "e2e-infra");

/**
 * The test harness's NATS user: observers that read stream state, publishes a test makes on
 * purpose, fault injection. It may do anything, and no service uses it: a service's traffic is
 * only ever under its own user, so what the services need is exactly what permissions.ts grants.
 */
const HARNESS_USER = "e2e-harness";

export interface Stoppable {
  /** Stops the server; its data stays. */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same data. */
  start(): Promise<void>;
}

export interface LockedNats extends Stoppable {
  url: string;
  /** The namespace the permissions are generated for: the services' NATS_NAMESPACE. */
  namespace: string;
  /** Each service's NATS_USER and NATS_PASSWORD: its own user. */
  serviceEnv: Record<ServiceName, { NATS_USER: string; NATS_PASSWORD: string }>;
  /** The harness's credentials, as @nats-io's connect() takes them. */
  harness: { user: string; pass: string };
  /** The refusals the server logged so far (permission violations, failed authentications). */
  refusals(): string[];
  /** Stops it and removes its data. */
  shutdown(): Promise<void>;
}

/** A NATS server with the production authorization for `namespace` ("" : production's names). */
export async function startLockedNats(label: string, namespace = ""): Promise<LockedNats> {
  const dir = ownedDir(`${label}-${randomBytes(3).toString("hex")}`);
  const nats = lockedNats(dir, await freePortRange(1), namespace);
  const stopOnExit = () => nats.stopNow();
  process.once("exit", stopOnExit);
  try {
    await nats.start();
  } catch (error) {
    nats.stopNow();
    throw error;
  }
  return {
    ...nats,
    async shutdown() {
      process.removeListener("exit", stopOnExit);
      await nats.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The lines of a nats-server log that say it refused a client something. */
const REFUSAL = /Violation|authentication error|authorization error/i;

function lockedNats(dir: string, port: number, namespace: string) {
  const password = () => randomBytes(16).toString("hex");
  const passwords = Object.fromEntries(Object.values(SERVICE_NAMES).map((s) => [s, password()])) as Record<
    ServiceName,
    string
  >;
  const harness = { user: HARNESS_USER, pass: password() };
  const config = path.join(dir, "nats.conf");
  const log = path.join(dir, "nats.log");
  const users = [...natsServiceUsers((s) => passwords[s], namespace), { user: harness.user, password: harness.pass }];
  mkdirSync(dir, { recursive: true });
  // nats-server reads JSON as its configuration format.
  writeFileSync(config, JSON.stringify({ authorization: { users } }, null, 2));
  const server = ownNats(path.join(dir, "nats"), port, ["-c", config, "-l", log]);
  return {
    ...server,
    url: `nats://127.0.0.1:${port}`,
    namespace,
    serviceEnv: Object.fromEntries(
      Object.entries(passwords).map(([user, pass]) => [user, { NATS_USER: user, NATS_PASSWORD: pass }]),
    ) as LockedNats["serviceEnv"],
    harness,
    refusals: () =>
      existsSync(log)
        ? readFileSync(log, "utf8")
            .split("\n")
            .filter((l) => REFUSAL.test(l))
        : [],
  };
}

export interface OwnInfra {
  databaseUrl: string;
  postgres: Stoppable;
  nats: LockedNats;
  /** Stops both and removes their data. */
  shutdown(): Promise<void>;
}

export async function startOwnInfra(label: string): Promise<OwnInfra> {
  const dir = ownedDir(`${label}-${process.pid}`);
  const pgPort = await freePortRange(2);
  const natsPort = pgPort + 1;
  const postgres = ownPostgres(path.join(dir, "pg"), pgPort);
  const nats = lockedNats(dir, natsPort, "");

  let done = false;
  const emergencyStop = () => {
    if (done) return;
    done = true;
    postgres.stopNow();
    nats.stopNow();
  };
  process.once("exit", emergencyStop);
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      emergencyStop();
      process.exit(1);
    });
  }
  try {
    await postgres.init();
    await postgres.start();
    await nats.start();
  } catch (error) {
    emergencyStop();
    throw error;
  }
  return {
    databaseUrl: `postgres://postgres@127.0.0.1:${pgPort}/postgres`,
    postgres,
    nats: { ...nats, shutdown: async () => {} },
    async shutdown() {
      if (done) return;
      done = true;
      await Promise.all([postgres.stop(), nats.stop()]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A fresh directory under INFRA_DIR owned by this process (for reapLeftovers), after reaping. */
function ownedDir(name: string): string {
  reapLeftovers();
  const dir = path.join(INFRA_DIR, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "owner.pid"), String(process.pid));
  return dir;
}

/** Runs a PostgreSQL binary, as the postgres user when we are root (PostgreSQL refuses root). */
function pgCommand(command: string, args: string[], options: { timeout?: number } = {}) {
  const versions = readdirSync("/usr/lib/postgresql").sort((a, b) => Number(b) - Number(a));
  const binary = path.join("/usr/lib/postgresql", versions[0] ?? "15", "bin", command);
  const asRoot = process.getuid?.() === 0;
  const [file, argv] = asRoot ? ["runuser", ["-u", "postgres", "--", binary, ...args]] : [binary, args];
  return execFileSync(file, argv, { stdio: ["ignore", "pipe", "pipe"], timeout: options.timeout ?? 60_000 });
}

function ownPostgres(data: string, port: number) {
  const ctl = (args: string[]) => pgCommand("pg_ctl", ["-D", data, ...args]);
  return {
    async init() {
      mkdirSync(data, { recursive: true });
      if (process.getuid?.() === 0) execFileSync("chown", ["-R", "postgres:postgres", path.dirname(data)]);
      pgCommand("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]);
    },
    async start() {
      ctl([
        "-l",
        path.join(data, "server.log"),
        "-o",
        `-c listen_addresses=127.0.0.1 -p ${port} -k ${data} -c max_connections=200`,
        "-w",
        "start",
      ]);
    },
    async stop() {
      if (existsSync(path.join(data, "postmaster.pid"))) ctl(["-m", "fast", "-w", "stop"]);
    },
    stopNow() {
      try {
        if (existsSync(path.join(data, "postmaster.pid"))) ctl(["-m", "immediate", "-w", "stop"]);
      } catch {}
    },
  };
}

/**
 * A `nats-server -js` on loopback `port` with its data in `storeDir`; `extraArgs` add to the
 * command line (`-c <file>` for a configuration, `-l <file>` for a log). Its pid goes beside
 * `storeDir` (nats.pid) for reapLeftovers.
 */
function ownNats(storeDir: string, port: number, extraArgs: string[] = []) {
  let child: ChildProcess | undefined;
  return {
    async start() {
      mkdirSync(storeDir, { recursive: true });
      const args = ["-a", "127.0.0.1", "-p", String(port), "-js", "-sd", storeDir, ...extraArgs];
      const server = spawn("nats-server", args, { stdio: "ignore" });
      child = server;
      writeFileSync(path.join(storeDir, "..", "nats.pid"), String(server.pid));
      const deadline = Date.now() + 15_000;
      while (!(await answers(port))) {
        if (server.exitCode !== null || Date.now() > deadline) throw new Error(`nats-server on ${port} did not start`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async stop() {
      const server = child;
      child = undefined;
      if (!server || server.exitCode !== null || server.signalCode !== null) return;
      const exited = new Promise((resolve) => server.once("exit", resolve));
      server.kill("SIGTERM");
      await exited;
    },
    stopNow() {
      child?.kill("SIGKILL");
    },
  };
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: "127.0.0.1" });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** Stops the servers of earlier runs whose process is gone (killed before its exit handlers ran). */
function reapLeftovers() {
  if (!existsSync(INFRA_DIR)) return;
  for (const name of readdirSync(INFRA_DIR)) {
    const dir = path.join(INFRA_DIR, name);
    const owner = Number(readIfExists(path.join(dir, "owner.pid")));
    // No owner yet: another process is making that directory right now.
    if (!owner || alive(owner)) continue;
    try {
      if (existsSync(path.join(dir, "pg", "postmaster.pid"))) {
        pgCommand("pg_ctl", ["-D", path.join(dir, "pg"), "-m", "immediate", "-w", "stop"]);
      }
    } catch {}
    const natsPid = Number(readIfExists(path.join(dir, "nats.pid")));
    // Only that nats-server: a recycled pid of another program is left alone.
    const command = readIfExists(`/proc/${natsPid}/cmdline`);
    if (natsPid && command.includes("nats-server") && command.includes(dir)) process.kill(natsPid, "SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
}

function readIfExists(file: string): string {
  return existsSync(file) ? readFileSync(file, "utf8").trim() : "";
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
