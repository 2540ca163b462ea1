/**
 * The NATS connection of a service: reconnects forever with jitter, reports its state for
 * readiness, and drains on shutdown so in-flight messages are finished, not dropped.
 */

import type { NatsConnection } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import type { Logger } from "pino";

export interface NatsHandle {
  nc: NatsConnection;
  /** Throws when the server does not answer a round trip. */
  check(): Promise<void>;
  drain(): Promise<void>;
}

export async function connectNats(url: string, name: string, logger: Logger): Promise<NatsHandle> {
  const nc = await connect({
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
