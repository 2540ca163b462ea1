/**
 * What the soak samples while it runs: each service's resident memory, delivery-api's outbox
 * backlog, every JetStream consumer's backlog, and the webhook queue of the dispatcher.
 */
import { readFileSync } from "node:fs";
import { natsNames } from "@dos/contracts";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import pg from "pg";
import type { SystemUnderTest } from "../src/system.ts";

export interface Sample {
  atSeconds: number;
  rssMb: Record<string, number>;
  outboxUnpublished: number;
  /** num_pending + num_ack_pending of each consumer. */
  consumers: Record<string, { pending: number; ackPending: number }>;
  webhookQueue: number;
  /** outbox + consumers + webhook queue: work accepted and not yet done. */
  backlog: number;
}

function rssMb(pid: number | undefined): number {
  if (!pid) return 0;
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(status.match(/^VmRSS:\s+(\d+) kB/m)?.[1] ?? 0);
  return Math.round(kb / 102.4) / 10;
}

export async function startProbes(system: SystemUnderTest, started: number) {
  const db = new pg.Pool({ connectionString: system.env.DATABASE_URL, max: 2 });
  const nc = await connect({ servers: system.nats.url, ...system.nats.harness, name: "soak-probe" });
  const jsm = await jetstreamManager(nc);
  const names = natsNames(system.env.NATS_NAMESPACE);
  const streams = [names.streams.deliveryEvents, names.streams.vehiclePositions];

  async function count(sql: string): Promise<number> {
    return Number((await db.query<{ n: string }>(sql)).rows[0]?.n ?? 0);
  }

  return {
    async sample(): Promise<Sample> {
      const rss: Record<string, number> = {};
      for (const service of system.services) rss[service.spec.name] = rssMb(service.child.pid);
      const consumers: Sample["consumers"] = {};
      for (const stream of streams) {
        for await (const info of jsm.consumers.list(stream)) {
          consumers[info.name] = { pending: info.num_pending, ackPending: info.num_ack_pending };
        }
      }
      const outboxUnpublished = await count("select count(*) as n from delivery.outbox where published_at is null");
      const webhookQueue = await count("select count(*) as n from webhooks.messages where state = 'pending'");
      const consumerBacklog = Object.values(consumers).reduce((sum, c) => sum + c.pending + c.ackPending, 0);
      return {
        atSeconds: Math.round((Date.now() - started) / 1000),
        rssMb: rss,
        outboxUnpublished,
        consumers,
        webhookQueue,
        backlog: outboxUnpublished + consumerBacklog + webhookQueue,
      };
    },
    /** Events in the outbox, to compare with what the receiver got. */
    async outboxIds(): Promise<string[]> {
      return (await db.query<{ id: string }>("select id::text as id from delivery.outbox")).rows.map((r) => r.id);
    },
    async close() {
      await nc.close();
      await db.end();
    },
  };
}
