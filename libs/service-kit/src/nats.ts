/**
 * The NATS connection of a service: reconnects forever with jitter, reports its state for
 * readiness, and drains on shutdown so in-flight messages are finished, not dropped. It
 * authenticates with the service's own user (deploy/k8s/nats; libs/contracts permissions.ts) and
 * speaks TLS when told to.
 */

import { readFileSync } from "node:fs";
import {
  type Authenticator,
  type ConnectionOptions,
  credsAuthenticator,
  type NatsConnection,
  nkeyAuthenticator,
  type TlsOptions,
  tokenAuthenticator,
  usernamePasswordAuthenticator,
} from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import type { Logger } from "pino";

/** The credential and TLS variables of commonConfig (empty: not set). */
export interface NatsCredentialsConfig {
  NATS_URL?: string;
  NATS_USER?: string;
  NATS_PASSWORD?: string;
  NATS_TOKEN?: string;
  NATS_NKEY_SEED_FILE?: string;
  NATS_CREDS_FILE?: string;
  NATS_TLS_CA_FILE?: string;
  NATS_TLS_CERT_FILE?: string;
  NATS_TLS_KEY_FILE?: string;
}

/** What connectNats needs beyond the URL: how to authenticate, TLS, and the inbox prefix. */
export type NatsConnectOptions = Pick<ConnectionOptions, "authenticator" | "tls" | "inboxPrefix">;

/**
 * The authentication and TLS options the variables describe. Throws an Error whose message starts
 * with the variable at fault: several methods at once, half of a pair, an unreadable file, a file
 * that is not what it should be. Files are read here, at boot, so a bad mount stops the boot.
 */
export function natsCredentials(config: NatsCredentialsConfig): NatsConnectOptions {
  const set = (value: string | undefined) => value !== undefined && value !== "";
  const methods = [
    set(config.NATS_USER) || set(config.NATS_PASSWORD) ? "NATS_USER/NATS_PASSWORD" : "",
    set(config.NATS_TOKEN) ? "NATS_TOKEN" : "",
    set(config.NATS_NKEY_SEED_FILE) ? "NATS_NKEY_SEED_FILE" : "",
    set(config.NATS_CREDS_FILE) ? "NATS_CREDS_FILE" : "",
  ].filter(Boolean);
  if (methods.length > 1) throw new Error(`${methods[1]} is invalid: set only one of ${methods.join(", ")}`);
  if (set(config.NATS_USER) !== set(config.NATS_PASSWORD)) {
    throw new Error(
      set(config.NATS_USER) ? "NATS_PASSWORD is required with NATS_USER" : "NATS_USER is required with NATS_PASSWORD",
    );
  }
  if (set(config.NATS_TLS_CERT_FILE) !== set(config.NATS_TLS_KEY_FILE)) {
    throw new Error(
      set(config.NATS_TLS_CERT_FILE)
        ? "NATS_TLS_KEY_FILE is required with NATS_TLS_CERT_FILE"
        : "NATS_TLS_CERT_FILE is required with NATS_TLS_KEY_FILE",
    );
  }
  let authenticator: Authenticator | undefined;
  if (set(config.NATS_USER)) {
    authenticator = usernamePasswordAuthenticator(config.NATS_USER as string, config.NATS_PASSWORD as string);
  } else if (set(config.NATS_TOKEN)) {
    authenticator = tokenAuthenticator(config.NATS_TOKEN as string);
  } else if (set(config.NATS_NKEY_SEED_FILE)) {
    const seed = readVariableFile("NATS_NKEY_SEED_FILE", config.NATS_NKEY_SEED_FILE as string).trim();
    if (!/^SU[A-Z2-7]{56}$/.test(seed))
      throw new Error("NATS_NKEY_SEED_FILE is invalid: must hold a user nkey seed (SU…)");
    authenticator = nkeyAuthenticator(new TextEncoder().encode(seed));
  } else if (set(config.NATS_CREDS_FILE)) {
    const creds = readVariableFile("NATS_CREDS_FILE", config.NATS_CREDS_FILE as string);
    if (!creds.includes("BEGIN NATS USER JWT") || !creds.includes("BEGIN USER NKEY SEED")) {
      throw new Error("NATS_CREDS_FILE is invalid: must hold a user JWT and its nkey seed (nsc generate creds)");
    }
    authenticator = credsAuthenticator(new TextEncoder().encode(creds));
  }
  let tls: TlsOptions | undefined;
  const tlsFiles = {
    caFile: "NATS_TLS_CA_FILE",
    certFile: "NATS_TLS_CERT_FILE",
    keyFile: "NATS_TLS_KEY_FILE",
  } as const;
  for (const [option, variable] of Object.entries(tlsFiles) as Array<
    [keyof typeof tlsFiles, keyof NatsCredentialsConfig]
  >) {
    const file = config[variable];
    if (!set(file)) continue;
    // Read now for the error; the transport reads it again on every (re)connect.
    readVariableFile(variable, file as string);
    tls = { ...tls, [option]: file };
  }
  if (!tls && config.NATS_URL?.split(",").some((url) => url.trim().startsWith("tls://"))) tls = {};
  return { ...(authenticator ? { authenticator } : {}), ...(tls ? { tls } : {}) };
}

function readVariableFile(variable: string, file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    throw new Error(`${variable} is invalid: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? error})`);
  }
}

export interface NatsHandle {
  nc: NatsConnection;
  /**
   * The connection background JetStream publishing goes through (outbox relays): a connection
   * of its own when asked for (`separatePublisher`), else `nc`. The server reads a client's
   * messages in order, one connection at a time: while a stream is slow to store, the
   * publishes ahead hold back everything the client sent after them on that connection, the
   * requests a caller waits on (a quote) included.
   */
  publisher: NatsConnection;
  /** Throws when the server does not answer a round trip (on either connection). */
  check(): Promise<void>;
  drain(): Promise<void>;
}

export interface ConnectNatsOptions extends NatsConnectOptions {
  /** Opens a second connection for background publishing (NatsHandle.publisher). */
  separatePublisher?: boolean;
}

export async function connectNats(
  url: string,
  name: string,
  logger: Logger,
  options: ConnectNatsOptions = {},
): Promise<NatsHandle> {
  const { separatePublisher, ...connectOptions } = options;
  const main = await openConnection(url, name, logger, connectOptions);
  const publisher = separatePublisher
    ? await openConnection(url, `${name}-publisher`, logger.child({ connection: "publisher" }), connectOptions)
    : main;
  const connections = publisher === main ? [main] : [main, publisher];
  return {
    nc: main.nc,
    publisher: publisher.nc,
    async check() {
      await Promise.all(connections.map((connection) => connection.check()));
    },
    async drain() {
      // The publisher last: what the main connection's subscribers still hand over may publish.
      for (const connection of connections) await connection.drain();
    },
  };
}

async function openConnection(
  url: string,
  name: string,
  logger: Logger,
  options: NatsConnectOptions,
): Promise<Omit<NatsHandle, "publisher">> {
  const nc = await connect({
    ...options,
    servers: url.split(",").map((s) => s.trim()),
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    reconnectJitter: 250,
    // Fail the boot quickly when the server is not there; once connected, reconnect forever.
    waitOnFirstConnect: false,
    timeout: 5000,
    pingInterval: 10_000,
    // With async traces on, every request (a JetStream publish is one) builds two Error objects
    // up front, stack traces and all, only to name its caller should it fail: measured at 8 % of
    // delivery-api's CPU per create. Our callers catch and name their failures themselves.
    noAsyncTraces: true,
  });
  let connected = true;
  (async () => {
    for await (const status of nc.status()) {
      if (status.type === "disconnect") {
        connected = false;
        logger.warn({ server: status.server }, "NATS disconnected");
      } else if (status.type === "reconnect") {
        connected = true;
        logger.info({ server: status.server }, "NATS reconnected");
      } else if (status.type === "error") {
        logger.warn({ err: status.error }, "NATS error");
      }
    }
  })().catch(() => {});
  logger.info({ server: nc.getServer() }, "NATS connected");
  return {
    nc,
    async check() {
      if (!connected || nc.isClosed()) throw new Error("not connected");
      await nc.rtt();
    },
    async drain() {
      if (!nc.isClosed() && !nc.isDraining()) await nc.drain();
    },
  };
}
