/**
 * Test helpers: each test file gets its own database and NATS namespace, so files run in
 * parallel without seeing each other; and a TCP proxy that can cut a dependency without
 * stopping the machine's PostgreSQL or NATS.
 */
import { randomBytes } from "node:crypto";
import net from "node:net";
import { Writable } from "node:stream";
import { natsNames } from "@dos/contracts";
import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import pg from "pg";
import { type Logger, pino } from "pino";

export {
  createBackendsMeter,
  formatCpuPerUnit,
  natsServerPid,
  processCpuMs,
  processWakeUps,
  type SpentSoFar,
} from "./cpu-time.ts";

/** A logger at `level` whose lines land, parsed, in `lines`: for tests that read what is logged. */
export function captureLogs(
  service: string,
  level = "info",
): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  return { logger: pino({ level, base: { service } }, lineSink(lines)), lines };
}

/** A log destination that parses each JSON line it is given into `lines`. */
export function lineSink(lines: Array<Record<string, unknown>>): Writable {
  return new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n")) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
}

/** The infrastructure the test run resolved (scripts/test.ts sets these), else the local defaults. */
export function testInfra() {
  return {
    databaseUrl: process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
    natsUrl: process.env.NATS_URL ?? "nats://127.0.0.1:4222",
  };
}

export function randomSuffix(bytes = 4): string {
  return randomBytes(bytes).toString("hex");
}

/** A NATS namespace no other test uses. */
export function randomNamespace(): string {
  return `t${randomSuffix()}`;
}

/** Streams (KV buckets included) of a namespace made by randomNamespace(). */
const TEST_NAMESPACE_STREAM = /^(KV_)?T[0-9A-F]{8}_/;

/** Whether a stream belongs to a test namespace and was created before the cutoff (epoch ms). */
export function isStaleTestStream(name: string, created: string, cutoff: number): boolean {
  return TEST_NAMESPACE_STREAM.test(name) && Date.parse(created) < cutoff;
}

/**
 * Deletes the streams and KV buckets of test namespaces created more than `olderThanMs` ago.
 * Test files drop their databases but not their namespaces, and a NATS server shared by many
 * runs kept every one (seen: 2,032 streams, 1.6 GB, after one day of runs). Only names of
 * randomNamespace()'s shape are touched, never production's (no namespace) nor a run still going.
 */
export async function sweepTestNamespaces(natsUrl: string, olderThanMs: number): Promise<number> {
  const nc = await connect({ servers: natsUrl, name: "test-namespace-sweep" });
  try {
    const jsm = await jetstreamManager(nc);
    const cutoff = Date.now() - olderThanMs;
    const stale: string[] = [];
    for await (const info of jsm.streams.list()) {
      if (isStaleTestStream(info.config.name, info.created, cutoff)) stale.push(info.config.name);
    }
    for (const name of stale) await jsm.streams.delete(name);
    return stale.length;
  } finally {
    await nc.close();
  }
}

/** Deletes every stream and KV bucket of a namespace: a benchmark's or test's own, at its end. */
export async function deleteNamespace(nc: NatsConnection, namespace: string): Promise<void> {
  const jsm = await jetstreamManager(nc);
  const names = natsNames(namespace);
  const buckets = Object.values(names.buckets).map((bucket) => `KV_${bucket}`);
  for (const stream of [...Object.values(names.streams), ...buckets]) {
    await jsm.streams.delete(stream).catch(() => false);
  }
}

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** The URL of another database on the test run's server. */
function databaseUrl(name: string): string {
  const url = new URL(testInfra().databaseUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** How a test database starts: empty, or a copy of a template made once by `prepare`. */
export interface TestDatabaseTemplate {
  /** Names the template's content (a digest of the code that fills it): another key, another template. */
  key: string;
  /** Fills the template database at this URL (runs the migrations); it must leave no connection open. */
  prepare(url: string): Promise<void>;
}

/** Held while a template is looked up, made or copied: one test file makes it, the others wait. */
const TEMPLATE_LOCK = 7_260_301;
const TEMPLATE_PREFIX = "tmpl_";

/**
 * Creates a database for one test file, empty or copied from a template; drop() removes it.
 * A template is made the first time its key is asked for, on this server, by whichever test
 * file asks first (the others wait on an advisory lock), and kept for later files and runs; a
 * template of another key is dropped then. Copying a migrated database costs PostgreSQL a
 * fraction of migrating it, and the test none of the migrate processes.
 */
export async function createTestDatabase(label = "test", template?: TestDatabaseTemplate): Promise<TestDatabase> {
  const base = testInfra().databaseUrl;
  const name = `t_${label.replace(/[^a-z0-9]/gi, "_").toLowerCase()}_${randomSuffix()}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  try {
    if (template) await copyTemplate(admin, name, template);
    else await admin.query(`create database "${name}"`);
  } finally {
    await admin.end();
  }
  return {
    url: databaseUrl(name),
    name,
    async drop() {
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      try {
        await client.query(`drop database if exists "${name}" with (force)`);
      } finally {
        await client.end();
      }
    },
  };
}

async function copyTemplate(admin: pg.Client, name: string, template: TestDatabaseTemplate) {
  if (!/^[a-z0-9]{1,40}$/.test(template.key)) throw new Error(`template key ${template.key}: 1-40 of a-z, 0-9`);
  await admin.query("select pg_advisory_lock($1)", [TEMPLATE_LOCK]);
  try {
    // Named tmpl_<key>_<epoch seconds made>. Another key's template an hour old belongs to no run
    // still going (a run's code does not change under it); a half-made one's maker died (it
    // makes it under the lock): both are dropped when a new one is made.
    const existing = await admin.query<{ datname: string }>(
      "select datname from pg_database where starts_with(datname, $1)",
      [TEMPLATE_PREFIX],
    );
    const names = existing.rows.map((row) => row.datname);
    const ready = new RegExp(`^${TEMPLATE_PREFIX}${template.key}_\\d+$`);
    let wanted = names.find((datname) => ready.test(datname));
    if (!wanted) {
      const hourAgo = Date.now() / 1000 - 3600;
      for (const datname of names) {
        const madeAt = Number(/_(\d+)$/.exec(datname)?.[1] ?? 0);
        if (madeAt < hourAgo) await admin.query(`drop database "${datname}" with (force)`);
      }
      wanted = `${TEMPLATE_PREFIX}${template.key}_${Math.floor(Date.now() / 1000)}`;
      const making = `${wanted}_making`;
      await admin.query(`create database "${making}"`);
      await template.prepare(databaseUrl(making));
      await admin.query(`alter database "${making}" rename to "${wanted}"`);
    }
    await admin.query(`create database "${name}" template "${wanted}"`);
  } finally {
    await admin.query("select pg_advisory_unlock($1)", [TEMPLATE_LOCK]);
  }
}

/**
 * `target` with its method `method` observed: `onCall` sees each call's arguments, then the call
 * goes on to the real method. For a test that times or counts what code hands to a real
 * connection (a NATS publish or request) where it happens, free of the delivery's jitter.
 */
export function observeCalls<T extends object>(target: T, method: keyof T, onCall: (...args: unknown[]) => void): T {
  return new Proxy(target, {
    get(object, property) {
      const value = Reflect.get(object, property, object);
      if (typeof value !== "function") return value;
      if (property !== method) return value.bind(object);
      return (...args: unknown[]) => {
        onCall(...args);
        return value.apply(object, args);
      };
    },
  });
}

export interface TcpProxy {
  port: number;
  url(scheme: string, path?: string): string;
  /** Cuts every connection and refuses new ones, as a stopped server would. */
  cut(): Promise<void>;
  /** Accepts connections again on the same port. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

/** A loopback TCP proxy to host:port, to simulate a dependency going away and coming back. */
export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let server: net.Server | undefined;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const listener = net.createServer((client) => {
        const upstream = net.connect(targetPort, targetHost);
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on("close", () => sockets.delete(socket));
          socket.on("error", () => socket.destroy());
        }
        client.pipe(upstream).pipe(client);
        client.on("close", () => upstream.destroy());
        upstream.on("close", () => client.destroy());
      });
      listener.once("error", reject);
      listener.listen(port, "127.0.0.1", () => {
        port = (listener.address() as net.AddressInfo).port;
        server = listener;
        resolve();
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      if (!server) return resolve();
      server.close(() => resolve());
      server = undefined;
    });
  await listen();
  return {
    get port() {
      return port;
    },
    url: (scheme, path = "") => `${scheme}://127.0.0.1:${port}${path}`,
    cut: stop,
    restore: listen,
    close: stop,
  };
}

const DEFAULT_PORTS: Record<string, number> = { "postgres:": 5432, "postgresql:": 5432, "nats:": 4222 };

/**
 * A loopback TCP proxy to the server a postgres:// or nats:// URL names (testInfra()'s, so a test
 * cuts whichever server the run was pointed at, never a hard-coded one).
 */
export function startProxyTo(serverUrl: string): Promise<TcpProxy> {
  const target = new URL(serverUrl);
  const port = Number(target.port) || DEFAULT_PORTS[target.protocol];
  if (!port)
    throw new Error(`no default port known for ${target.protocol} URLs: give one in ${target.protocol}//host:port`);
  return startTcpProxy(target.hostname.replace(/^\[(.*)\]$/, "$1"), port);
}

/** Cuts the proxy and waits until a connection through it knows (its `check()` fails). */
export async function cutAndWaitDown(proxy: TcpProxy, connection: { check(): Promise<void> }): Promise<void> {
  await proxy.cut();
  await waitFor(
    async () =>
      connection.check().then(
        () => false,
        () => true,
      ),
    5000,
    "the connection to drop",
  );
}

/** Polls until the check passes or the time is up. */
export async function waitFor<T>(
  check: () => Promise<T | undefined | false>,
  timeoutMs = 10_000,
  label = "condition",
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(
    `timed out after ${timeoutMs} ms waiting for ${label}${lastError ? `: ${(lastError as Error).message}` : ""}`,
  );
}
