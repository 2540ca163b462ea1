import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { DELIVERY_EVENT_PARTITIONS } from "@dos/contracts";
import { waitFor } from "@dos/service-kit/testing";
import { sql } from "kysely";
import { lockClasses } from "../src/partitions/partitions.repository.ts";
import { createEndpoint, startTestDispatcher, type TestDispatcher } from "./dispatcher.ts";
import { makeEvent } from "./events.ts";
import { type Receiver, startReceiver } from "./receiver.ts";

describe("partition ownership", () => {
  let dispatcher: TestDispatcher;
  let receiver: Receiver;

  before(async () => {
    dispatcher = await startTestDispatcher();
    receiver = await startReceiver();
  });
  after(async () => {
    await dispatcher.close();
    await receiver.close();
  });

  /** The backends holding this namespace's partition locks. */
  async function partitionHolders(): Promise<Array<{ pid: number; partitions: number }>> {
    const { rows } = await sql<{ pid: number; partitions: number }>`
      select pid, count(*)::int as partitions from pg_locks
      where locktype = 'advisory' and granted and objsubid = 2
        and classid = ${lockClasses(dispatcher.namespace).partition}::int::oid
        and database = (select oid from pg_database where datname = current_database())
      group by pid
    `.execute(dispatcher.db);
    return rows;
  }

  test("a lone replica owns every partition; when its lock connection dies it takes them again and sends on", async () => {
    await createEndpoint(dispatcher, 501, receiver.url);
    const [holder] = await partitionHolders();
    assert.equal(holder?.partitions, DELIVERY_EVENT_PARTITIONS);
    assert.equal(await dispatcher.metric("webhook_partitions_owned"), DELIVERY_EVENT_PARTITIONS);

    // The connection that holds the locks ends (a network cut, a PostgreSQL restart): the locks go with it.
    await sql`select pg_terminate_backend(${holder?.pid})`.execute(dispatcher.db);
    await waitFor(
      async () => {
        const holders = await partitionHolders();
        return (
          holders.length === 1 &&
          holders[0]?.pid !== holder?.pid &&
          holders[0]?.partitions === DELIVERY_EVENT_PARTITIONS
        );
      },
      10_000,
      "every partition taken again on a new connection",
    );

    const events = [1, 2, 3].map((sequence) => makeEvent({ accountId: 501, deliveryId: 50_100, sequence }));
    for (const event of events) await dispatcher.publish(event);
    await waitFor(async () => receiver.received.length >= 3, 10_000, "the events after the takeover");
    assert.deepEqual(
      receiver.received.map((r) => r.sequence),
      [1, 2, 3],
    );
  });
});
