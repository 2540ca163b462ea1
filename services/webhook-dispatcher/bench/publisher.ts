/**
 * The benchmark's publisher of delivery events, a process of its own as delivery-api's outbox
 * relay is: asked over IPC for a range of deliveries, it publishes their events (bench-events.ts)
 * on DELIVERY_EVENTS and answers once JetStream has acknowledged every one, with each event's id
 * and publish time (epoch ms, the receiver's clock). A burst goes out 100 at a time, as a busy
 * relay publishes; a paced run one event at a time on its schedule. Started by dispatch.bench.ts
 * with `fork`.
 */
import { type DeliveryEvent, natsNames } from "@dos/contracts";
import { connectNats, createLogger } from "@dos/service-kit";
import { jetstream } from "@nats-io/jetstream";
import { benchEvents } from "./bench-events.ts";
import { epochMs } from "./clock.ts";

export type PublisherRequest = { first: number; deliveries: number } & (
  | { kind: "burst" }
  | { kind: "paced"; perSecond: number }
);
export type PublisherReply = { ready: true } | { seconds: number; publishedAt: Array<[string, number]> };

const [natsUrl, namespace] = process.argv.slice(2) as [string, string];
const names = natsNames(namespace);
const { nc } = await connectNats(
  natsUrl,
  "webhook-dispatcher-bench-publisher",
  createLogger("bench-publisher", "warn"),
);
const js = jetstream(nc);

const publish = (event: DeliveryEvent) =>
  js.publish(names.subjects.deliveryEvent(event.account_id, event.delivery_id, event.type), JSON.stringify(event), {
    msgID: event.id,
  });

async function handle(request: PublisherRequest): Promise<PublisherReply> {
  const events = benchEvents(request.first, request.deliveries);
  const started = performance.now();
  const publishedAt: Array<[string, number]> = [];
  if (request.kind === "burst") {
    for (let i = 0; i < events.length; i += 100) {
      const chunk = events.slice(i, i + 100);
      for (const event of chunk) publishedAt.push([event.id, epochMs()]);
      await Promise.all(chunk.map(publish));
    }
  } else {
    for (const [i, event] of events.entries()) {
      const wait = started + (i * 1000) / request.perSecond - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      publishedAt.push([event.id, epochMs()]);
      await publish(event);
    }
  }
  return { seconds: (performance.now() - started) / 1000, publishedAt };
}

process.on("message", (request: PublisherRequest) => {
  void handle(request).then((reply) => process.send?.(reply));
});
process.on("disconnect", () => {
  void nc.close().then(() => process.exit(0));
});
process.send?.({ ready: true });
