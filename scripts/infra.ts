/**
 * Local infrastructure for `npm start` and `npm test`: finds or provides PostgreSQL and NATS
 * with JetStream, and says which path it took. For each of the two, in order:
 *   1. DATABASE_URL / NATS_URL when set;
 *   2. the machine's own server on 127.0.0.1:5432 / 127.0.0.1:4222 when it answers;
 *   3. testcontainers, where a Docker engine answers (TimescaleDB image; NATS image with -js);
 *   4. on Debian as root: apt-get install postgresql / nats-server, started on loopback with
 *      data under var/;
 *   5. otherwise it stops and says exactly what to install.
 * Run alone (`npm run infra`) it prints the URLs it resolved.
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, openSync, readdirSync, writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const varDir = path.join(root, "var");

const TIMESCALE_IMAGE = "timescale/timescaledb:2.17.2-pg16";
const NATS_IMAGE = "nats:2.10.24-alpine";

export interface Infrastructure {
  env: { DATABASE_URL: string; NATS_URL: string };
  /** Stops what this process started itself (containers); servers under var/ are left running. */
  release(): Promise<void>;
}

type Provided = { url: string; how: string; release?: () => Promise<void> };

export async function resolveInfrastructure(options: { quiet?: boolean } = {}): Promise<Infrastructure> {
  const say = (line: string) => options.quiet || process.stderr.write(`infra: ${line}\n`);
  const postgres = await providePostgres();
  say(`PostgreSQL: ${postgres.how}`);
  const nats = await provideNats();
  say(`NATS: ${nats.how}`);
  return {
    env: { DATABASE_URL: postgres.url, NATS_URL: nats.url },
    async release() {
      await postgres.release?.();
      await nats.release?.();
    },
  };
}

async function providePostgres(): Promise<Provided> {
  if (process.env.DATABASE_URL) return { url: process.env.DATABASE_URL, how: "DATABASE_URL from the environment" };
  const local = "postgres://postgres@127.0.0.1:5432/postgres";
  if (await answers(5432)) return { url: local, how: "the server on 127.0.0.1:5432" };
  if (dockerAnswers()) {
    const { GenericContainer, Wait } = await import("testcontainers");
    const container = await new GenericContainer(TIMESCALE_IMAGE)
      .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: "trust" })
      .withExposedPorts(5432)
      .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept connections/, 2))
      .start();
    return {
      url: `postgres://postgres@${container.getHost()}:${container.getMappedPort(5432)}/postgres`,
      how: `testcontainers (${TIMESCALE_IMAGE})`,
      release: async () => void (await container.stop()),
    };
  }
  if (canApt()) {
    aptInstall("postgresql", "/usr/lib/postgresql");
    await startLocalPostgres();
    return { url: local, how: "apt-installed postgresql, started on 127.0.0.1:5432 with data in var/postgres" };
  }
  return missing("PostgreSQL 15 or newer", "postgresql");
}

async function provideNats(): Promise<Provided> {
  if (process.env.NATS_URL) return { url: process.env.NATS_URL, how: "NATS_URL from the environment" };
  const local = "nats://127.0.0.1:4222";
  if (await answers(4222)) return { url: local, how: "the server on 127.0.0.1:4222" };
  if (dockerAnswers()) {
    const { GenericContainer, Wait } = await import("testcontainers");
    const container = await new GenericContainer(NATS_IMAGE)
      .withCommand(["-js"])
      .withExposedPorts(4222)
      .withWaitStrategy(Wait.forLogMessage(/Server is ready/))
      .start();
    return {
      url: `nats://${container.getHost()}:${container.getMappedPort(4222)}`,
      how: `testcontainers (${NATS_IMAGE} -js)`,
      release: async () => void (await container.stop()),
    };
  }
  if (canApt()) {
    aptInstall("nats-server", "/usr/sbin/nats-server");
    await startLocalNats();
    return { url: local, how: "apt-installed nats-server, started on 127.0.0.1:4222 with data in var/nats" };
  }
  return missing("NATS 2.9 or newer with JetStream", "nats-server");
}

function missing(what: string, debianPackage: string): never {
  process.stderr.write(
    `infra: ${what} is needed and none was found.\n` +
      "  Do one of these, then run the command again:\n" +
      `  - set ${debianPackage === "postgresql" ? "DATABASE_URL=postgres://user@host:port/db" : "NATS_URL=nats://host:port"} to a server you have;\n` +
      `  - start it on 127.0.0.1:${debianPackage === "postgresql" ? 5432 : 4222}${debianPackage === "postgresql" ? " (user postgres, trust auth)" : " with JetStream (-js)"};\n` +
      "  - start a Docker engine (testcontainers will run it);\n" +
      `  - on Debian or Ubuntu as root: apt-get install ${debianPackage}.\n`,
  );
  process.exit(1);
}

function answers(port: number, host = "127.0.0.1"): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host, timeout: 1000 });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("timeout", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", () => resolve(false));
  });
}

function dockerAnswers(): boolean {
  try {
    execFileSync("docker", ["info"], { stdio: "ignore", timeout: 5000 });
    return true;
  } catch {
    return false;
  }
}

function canApt(): boolean {
  return process.getuid?.() === 0 && existsSync("/usr/bin/apt-get") && existsSync("/etc/debian_version");
}

function aptInstall(pkg: string, installedPath: string) {
  if (existsSync(installedPath)) return;
  process.stderr.write(`infra: installing ${pkg} with apt-get\n`);
  execFileSync("apt-get", ["update", "-qq"], { stdio: "inherit" });
  execFileSync("apt-get", ["install", "-y", "-qq", "--no-install-recommends", pkg], {
    stdio: "inherit",
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
  });
}

async function startLocalPostgres() {
  const versions = readdirSync("/usr/lib/postgresql").sort((a, b) => Number(b) - Number(a));
  const bin = path.join("/usr/lib/postgresql", versions[0] ?? "15", "bin");
  const data = path.join(varDir, "postgres");
  mkdirSync(varDir, { recursive: true });
  // PostgreSQL refuses to run as root: the cluster belongs to the postgres user the package creates.
  const asPostgres = (command: string, args: string[]) =>
    execFileSync("runuser", ["-u", "postgres", "--", path.join(bin, command), ...args], { stdio: "inherit" });
  if (!existsSync(path.join(data, "PG_VERSION"))) {
    mkdirSync(data, { recursive: true });
    execFileSync("chown", ["-R", "postgres:postgres", data]);
    asPostgres("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8"]);
  }
  asPostgres("pg_ctl", [
    "-D",
    data,
    "-l",
    path.join(data, "server.log"),
    "-o",
    `-c listen_addresses=127.0.0.1 -p 5432 -k ${data}`,
    "-w",
    "start",
  ]);
}

async function startLocalNats() {
  const data = path.join(varDir, "nats");
  mkdirSync(data, { recursive: true });
  const log = openSync(path.join(data, "server.log"), "a");
  const child = spawn("/usr/sbin/nats-server", ["-a", "127.0.0.1", "-p", "4222", "-js", "-sd", data], {
    detached: true,
    stdio: ["ignore", log, log],
  });
  child.unref();
  writeFileSync(path.join(data, "pid"), String(child.pid));
  for (let i = 0; i < 50 && !(await answers(4222)); i++) await new Promise((r) => setTimeout(r, 100));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const infra = await resolveInfrastructure();
  process.stdout.write(`DATABASE_URL=${infra.env.DATABASE_URL}\nNATS_URL=${infra.env.NATS_URL}\n`);
}
