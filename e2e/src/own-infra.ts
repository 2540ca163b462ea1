/**
 * A PostgreSQL cluster and a NATS server of the fault suite's own, so it can stop and start them
 * without disturbing the machine's servers or other tests: a fresh `initdb` cluster and a
 * `nats-server -js`, on spare loopback ports, data under var/e2e-infra/. They are always stopped
 * at the end — by `shutdown()` in the suite's after(), and by exit handlers when the process ends
 * another way. Leftovers of a process that was killed outright are stopped by the next start.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { root } from "../../scripts/system.ts";
import { freePortRange } from "./system.ts";

const INFRA_DIR = path.join(root, "var", "e2e-infra");

export interface Stoppable {
  /** Stops the server; its data stays. */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same data. */
  start(): Promise<void>;
}

export interface OwnInfra {
  databaseUrl: string;
  natsUrl: string;
  postgres: Stoppable;
  nats: Stoppable;
  /** Stops both and removes their data. */
  shutdown(): Promise<void>;
}

export async function startOwnInfra(label: string): Promise<OwnInfra> {
  reapLeftovers();
  const dir = path.join(INFRA_DIR, `${label}-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "owner.pid"), String(process.pid));
  const pgPort = await freePortRange(2);
  const natsPort = pgPort + 1;
  const postgres = ownPostgres(path.join(dir, "pg"), pgPort);
  const nats = ownNats(path.join(dir, "nats"), natsPort);

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
    natsUrl: `nats://127.0.0.1:${natsPort}`,
    postgres,
    nats,
    async shutdown() {
      if (done) return;
      done = true;
      await Promise.all([postgres.stop(), nats.stop()]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
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
export function ownNats(storeDir: string, port: number, extraArgs: string[] = []) {
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
    if (owner && alive(owner)) continue;
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
