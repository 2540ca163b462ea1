import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { type DeliveryEvent, ensureTopology, natsNames } from "@dos/contracts";
import { connectNats, createDatabase, createLogger, migrate, type NatsHandle } from "@dos/service-kit";
import { createTestDatabase, randomNamespace, type TestDatabase, testInfra, waitFor } from "@dos/service-kit/testing";
import { jetstream } from "@nats-io/jetstream";
import type { Kysely } from "kysely";
import { Webhook } from "standardwebhooks";
import { migrations, SCHEMA } from "../migrations/index.ts";
import type { DB } from "../src/db/database.ts";
import { TEST_ENV } from "./dispatcher.ts";
import { makeEvent } from "./events.ts";
import { type Receiver, startReceiver } from "./receiver.ts";

const main = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "src", "main.ts");
const ACCOUNT = 700;

describe("a dispatcher killed with SIGKILL mid-stream", () => {
  let testDb: TestDatabase;
  let database: ReturnType<typeof createDatabase<DB>>;
  let nats: NatsHandle;
  let receiver: Receiver;
  const namespace = randomNamespace();
  const children: ChildProcess[] = [];

  const startChild = () => {
    const child = spawn(process.execPath, [main], {
      env: {
        ...process.env,
        ...TEST_ENV,
        DATABASE_URL: testDb.url,
        NATS_URL: testInfra().natsUrl,
        NATS_NAMESPACE: namespace,
        HOST: "127.0.0.1",
        PORT: "0",
        LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "error",
      },
      stdio: ["ignore", "inherit", "inherit"],
    });
    children.push(child);
    return child;
  };

  before(async () => {
    testDb = await createTestDatabase("webhooks_crash");
    database = createDatabase<DB>({ url: testDb.url, schema: SCHEMA, applicationName: "crash-test" });
    await migrate(database.db as Kysely<unknown>, { schema: SCHEMA, migrations });
    nats = await connectNats(testInfra().natsUrl, "crash-test", createLogger("crash-test", "silent"));
    await ensureTopology(nats.nc, { namespace });
    // Slow answers keep POSTs in flight, so the kill lands in the middle of some.
    receiver = await startReceiver(() => ({ status: 200, delayMs: 250 }));
  });
  after(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await receiver.close();
    await nats.drain();
    await database.close();
    await testDb.drop();
  });

  test("loses nothing after a restart, keeps the order per delivery, and re-sends with the same webhook-id", async () => {
    const first = startChild();
    const names = natsNames(namespace);
    const created = await waitFor(
      async () => {
        const reply = await nats.nc.request(
          names.services.webhooks.subjects.create,
          JSON.stringify({ account_id: ACCOUNT, url: receiver.url }),
          { timeout: 1000 },
        );
        return reply.json() as { id: string; secret: string };
      },
      20_000,
      "the dispatcher to answer",
    );

    const js = jetstream(nats.nc);
    const events: DeliveryEvent[] = [];
    for (let sequence = 1; sequence <= 4; sequence++) {
      for (let delivery = 1; delivery <= 10; delivery++) {
        events.push(makeEvent({ accountId: ACCOUNT, deliveryId: 71_000 + delivery, sequence }));
      }
    }
    for (const event of events) {
      const subject = names.subjects.deliveryEvent(event.account_id, event.delivery_id, event.type);
      await js.publish(subject, JSON.stringify(event), { msgID: event.id });
    }

    await waitFor(async () => receiver.received.length >= 12 && receiver.inFlight > 0, 20_000, "POSTs in flight");
    first.kill("SIGKILL");
    await new Promise((resolve) => first.once("exit", resolve));
    const receivedAtKill = receiver.received.length;
    startChild();

    await waitFor(
      async () => {
        const row = await database.db
          .selectFrom("attempts")
          .select((eb) => eb.fn.count<number>("event_id").distinct().as("delivered"))
          .where("outcome", "=", "delivered")
          .executeTakeFirstOrThrow();
        return Number(row.delivered) === events.length;
      },
      45_000,
      "every event delivered",
    );

    const verifier = new Webhook(created.secret);
    for (const request of receiver.received) {
      const envelope = verifier.verify(request.body, request.headers) as DeliveryEvent;
      assert.equal(envelope.id, request.id, "webhook-id is the event id");
    }
    const ids = receiver.received.map((r) => r.id);
    for (const event of events) assert.ok(ids.includes(event.id), `event ${event.sequence} of ${event.delivery_id}`);
    const resent = ids.filter((id, i) => ids.indexOf(id) !== i);
    assert.ok(resent.length > 0, "the POSTs cut by the kill were sent again");
    assert.ok(receiver.received.length > receivedAtKill);

    for (let delivery = 1; delivery <= 10; delivery++) {
      const seen = receiver.received.filter((r) => r.deliveryId === 71_000 + delivery).map((r) => r.sequence);
      const firstSeen = seen.filter((sequence, i) => seen.indexOf(sequence) === i);
      assert.deepEqual(firstSeen, [1, 2, 3, 4], `order of delivery ${71_000 + delivery}: ${seen.join(",")}`);
    }
  });
});
