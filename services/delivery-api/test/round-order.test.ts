/**
 * Reordering a round's tasks (PUT /ops/v1/rounds/{id}/tasks): the whole order, pickups before
 * their dropoffs, started tasks where they are, ended rounds final; the next stop's ETA follows
 * the new order; refused for a read-only person; and a round's size is capped.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "kysely";
import { type DeliveriesTestbed, startDeliveriesTestbed } from "./delivery-fixtures.ts";
import { createDelivery, opsClient } from "./dispatch-fixtures.ts";
import { createTestAccount, type TestAccount } from "./fixtures.ts";
import type { OpsClient } from "./ops-client.ts";
import { createTestStaff } from "./staff-fixtures.ts";

let bed: DeliveriesTestbed;
let ops: OpsClient;
let other: TestAccount;
before(async () => {
  bed = await startDeliveriesTestbed();
  ops = opsClient(bed.api);
  other = await createTestAccount(bed.api.db);
});
after(async () => bed.close());

interface RoundTask {
  task_id: number;
  delivery_id: number;
  kind: "pickup" | "dropoff";
  position: number;
  eta: string | null;
}

/** A planned round holding a delivery of the shop and one of another account, and its four tasks. */
async function roundOfTwo(name: string) {
  const a = await createDelivery(bed.api, bed.account, { client_order_reference: `${name}-A` });
  const b = await createDelivery(bed.api, other, { client_order_reference: `${name}-B` });
  const messenger = await ops.post("/messengers", { name: `Messenger ${name}` });
  const round = await ops.post("/rounds", { messenger_id: messenger.body.id, delivery_ids: [a.id, b.id] });
  assert.equal(round.status, 201, JSON.stringify(round.body));
  const tasks = round.body.tasks as RoundTask[];
  const find = (delivery: number, kind: string) =>
    (tasks.find((t) => t.delivery_id === delivery && t.kind === kind) as RoundTask).task_id;
  return {
    roundId: round.body.id as number,
    messengerId: messenger.body.id as number,
    a: a.id as number,
    b: b.id as number,
    pa: find(a.id, "pickup"),
    da: find(a.id, "dropoff"),
    pb: find(b.id, "pickup"),
    db: find(b.id, "dropoff"),
  };
}

const order = (body: { tasks: RoundTask[] }) => body.tasks.map((t) => t.task_id);

describe("reordering a round's tasks", () => {
  test("a planned round takes any order that keeps each pickup before its dropoff; positions follow", async () => {
    const r = await roundOfTwo("PLAN");
    const put = await ops.put(`/rounds/${r.roundId}/tasks`, { task_ids: [r.pa, r.pb, r.db, r.da] });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.deepEqual(order(put.body), [r.pa, r.pb, r.db, r.da]);
    assert.deepEqual(
      put.body.tasks.map((t: RoundTask) => t.position),
      [1, 2, 3, 4],
    );
    // What GET and the dispatch board read is the new order.
    assert.deepEqual(order((await ops.get(`/rounds/${r.roundId}`)).body), [r.pa, r.pb, r.db, r.da]);
    const today = new Date().toISOString().slice(0, 10);
    let after = 0;
    let shown: RoundTask[] | undefined;
    for (let pages = 0; pages < 50 && !shown; pages++) {
      const page = await ops.get(`/dispatch/rounds?date=${today}&after=${after}`);
      shown = page.body.rounds.find((round: { id: number }) => round.id === r.roundId)?.tasks;
      if (page.body.next_after === null) break;
      after = page.body.next_after;
    }
    assert.deepEqual(
      shown?.map((t) => t.task_id),
      [r.pa, r.pb, r.db, r.da],
    );
    // The same order again changes nothing and is fine.
    assert.equal((await ops.put(`/rounds/${r.roundId}/tasks`, { task_ids: [r.pa, r.pb, r.db, r.da] })).status, 200);
  });

  test("422 for a dropoff before its pickup, a task left out, one listed twice, one not on the round", async () => {
    const r = await roundOfTwo("BAD");
    const elsewhere = await createDelivery(bed.api, other);
    const stranger = await sql<{ id: number }>`
      select id from tasks where delivery_id = ${elsewhere.id} and kind = 'dropoff'`.execute(bed.api.db);
    const strangerTask = stranger.rows[0]?.id as number;
    const cases: Array<[number[], string[]]> = [
      [
        [r.da, r.pa, r.pb, r.db],
        [`task_ids: task ${r.da} (dropoff of delivery ${r.a}) cannot come before task ${r.pa}, its pickup`],
      ],
      [
        [r.pa, r.da, r.pb],
        [`task_ids must list every task of round ${r.roundId}; missing: task ${r.db} (dropoff of delivery ${r.b})`],
      ],
      [[r.pa, r.da, r.pa, r.pb, r.db], [`task_ids lists task ${r.pa} more than once`]],
      [
        [r.pa, r.da, r.pb, r.db, strangerTask, 999_999_999],
        [
          `task_ids: task ${strangerTask} (dropoff of delivery ${elsewhere.id}) is not on round ${r.roundId}`,
          `task_ids: task 999999999 is not on round ${r.roundId}`,
        ],
      ],
    ];
    for (const [taskIds, errors] of cases) {
      const answer = await ops.put(`/rounds/${r.roundId}/tasks`, { task_ids: taskIds });
      assert.equal(answer.status, 422, JSON.stringify(answer.body));
      assert.deepEqual(answer.body.errors, errors);
    }
    // Nothing moved.
    assert.deepEqual(order((await ops.get(`/rounds/${r.roundId}`)).body), [r.pa, r.da, r.pb, r.db]);
  });

  test("bodies off the schema and unknown rounds are refused before anything is read", async () => {
    const r = await roundOfTwo("SHAPE");
    const cases: Array<[unknown, number, string]> = [
      [{ task_ids: [] }, 422, "task_ids must have at least 1 entry"],
      [{ task_ids: Array.from({ length: 1001 }, (_, i) => i + 1) }, 422, "task_ids must have at most 1000 entries"],
      [{ task_ids: ["first"] }, 422, "task_ids[0] must be an integer"],
      [{ task_ids: [0] }, 422, "task_ids[0] must be at least 1"],
      [{ order: [r.pa] }, 422, "task_ids is required"],
    ];
    for (const [body, status, message] of cases) {
      const answer = await ops.put(`/rounds/${r.roundId}/tasks`, body);
      assert.equal(answer.status, status, JSON.stringify(answer.body));
      assert.ok(
        answer.body.errors.some((e: string) => e.startsWith(message)),
        `${JSON.stringify(answer.body.errors)} should name ${message}`,
      );
    }
    const unknown = await ops.put("/rounds/999999999/tasks", { task_ids: [r.pa] });
    assert.equal(unknown.status, 404);
    assert.deepEqual(unknown.body.errors, ["round 999999999 not found"]);
  });

  test("in an active round a started task keeps its place (409), the rest moves, and the next stop's ETA follows", async () => {
    const r = await roundOfTwo("LIVE");
    assert.equal((await ops.post(`/rounds/${r.roundId}/start`)).status, 200);
    assert.equal((await ops.post(`/tasks/${r.pa}/start`)).status, 200);
    assert.equal((await ops.post(`/tasks/${r.pa}/complete`, {})).status, 200);
    // The messenger's phone reports: the next stop (the dropoff of A) gets an ETA.
    const position = await ops.post(`/messengers/${r.messengerId}/positions`, { latitude: 48.86, longitude: 2.35 });
    assert.equal(position.status, 200, JSON.stringify(position.body));
    const etaOf = async (taskId: number) =>
      ((await ops.get(`/rounds/${r.roundId}`)).body.tasks as RoundTask[]).find((t) => t.task_id === taskId)?.eta;
    assert.ok(await etaOf(r.da), "the next stop has an ETA");

    const moved = await ops.put(`/rounds/${r.roundId}/tasks`, { task_ids: [r.pb, r.pa, r.da, r.db] });
    assert.equal(moved.status, 409, JSON.stringify(moved.body));
    assert.deepEqual(moved.body.errors, [
      `task ${r.pa} (pickup of delivery ${r.a}) has started in round ${r.roundId}: it keeps its place, the 1st`,
    ]);

    const put = await ops.put(`/rounds/${r.roundId}/tasks`, { task_ids: [r.pa, r.pb, r.da, r.db] });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.deepEqual(order(put.body), [r.pa, r.pb, r.da, r.db]);
    // B's pickup is now the next stop: it has an ETA at once; A's dropoff forgot the one it had.
    assert.ok(await etaOf(r.pb), "the new next stop has an ETA");
    assert.equal(await etaOf(r.da), null);
    const delivery = await bed.api.app.inject({
      method: "GET",
      url: `/api/v2/deliveries/${r.a}`,
      headers: bed.account.headers,
    });
    assert.equal(delivery.json().dropoff.eta, null, "the client API shows no stale ETA either");
  });

  test("an ended round's order is final (409)", async () => {
    const r = await roundOfTwo("END");
    await ops.post(`/rounds/${r.roundId}/start`);
    await ops.post(`/tasks/${r.pa}/start`);
    await ops.post(`/tasks/${r.pa}/complete`, {});
    await ops.post(`/tasks/${r.da}/start`);
    await ops.post(`/tasks/${r.da}/complete`, {});
    const ended = await ops.post(`/rounds/${r.roundId}/end`);
    assert.equal(ended.status, 200, JSON.stringify(ended.body));
    const answer = await ops.put(`/rounds/${r.roundId}/tasks`, { task_ids: [r.da, r.pa] });
    assert.equal(answer.status, 409);
    assert.deepEqual(answer.body.errors, [`round ${r.roundId} has ended; its order is final`]);
  });

  test("a read-only person is refused (403) and nothing moves; a dispatcher's reorder is audited with the order before and after", async () => {
    const r = await roundOfTwo("ROLE");
    const viewer = await createTestStaff(bed.api, "read_only", "Vera Viewer");
    const refused = await viewer.ops.put(`/rounds/${r.roundId}/tasks`, { task_ids: [r.pa, r.pb, r.da, r.db] });
    assert.equal(refused.status, 403);
    assert.deepEqual(refused.body.errors, ["read_only may not PUT /ops/v1/rounds/{id}/tasks"]);
    assert.deepEqual(order((await ops.get(`/rounds/${r.roundId}`)).body), [r.pa, r.da, r.pb, r.db]);

    const dispatcher = await createTestStaff(bed.api, "dispatcher", "Dora Dispatcher");
    const done = await dispatcher.ops.put(`/rounds/${r.roundId}/tasks`, { task_ids: [r.pa, r.pb, r.da, r.db] });
    assert.equal(done.status, 200, JSON.stringify(done.body));
    const entries = await bed.api.db
      .selectFrom("audit_log")
      .select(["actor_name", "status_code", "resource_type", "resource_id", "before", "after"])
      .where("route", "=", "/ops/v1/rounds/{id}/tasks")
      .where("resource_id", "=", String(r.roundId))
      .orderBy("id")
      .execute();
    assert.deepEqual(
      entries.map((e) => [e.actor_name, e.status_code, e.resource_type]),
      [
        ["Vera Viewer", 403, "rounds"],
        ["Dora Dispatcher", 200, "rounds"],
      ],
    );
    const taskOrder = (value: unknown) => ((value as { tasks: RoundTask[] }).tasks ?? []).map((t) => t.task_id);
    assert.deepEqual(taskOrder(entries[1]?.before), [r.pa, r.da, r.pb, r.db]);
    assert.deepEqual(taskOrder(entries[1]?.after), [r.pa, r.pb, r.da, r.db]);
  });
});

describe("a round's size", () => {
  test("a round holds at most 500 deliveries: the 501st is refused, naming the round", async () => {
    const messenger = await ops.post("/messengers", { name: "Full Round" });
    const round = await ops.post("/rounds", { messenger_id: messenger.body.id });
    // 500 deliveries already on it, written in SQL as assignment leaves them.
    await sql`
      with d as (
        insert into deliveries (account_id, direction, bring_back_containers, status)
        select ${bed.account.accountId}, 'outbound', false, 'scheduled' from generate_series(1, 500)
        returning id
      ), t as (
        insert into tasks (delivery_id, kind, slot_starting_at, slot_ending_at, recipient_name, address, postal_code, city)
        select id, 'dropoff', now() + interval '1 day', now() + interval '1 day 2 hours', 'R', '1 Rue A', '75001', 'Paris'
        from d returning id
      )
      insert into round_tasks (round_id, task_id, position)
      select ${round.body.id}, id, row_number() over (order by id) from t`.execute(bed.api.db);
    const extra = await createDelivery(bed.api, bed.account);
    const refused = await ops.post(`/rounds/${round.body.id}/deliveries`, { delivery_id: extra.id });
    assert.equal(refused.status, 422, JSON.stringify(refused.body));
    assert.deepEqual(refused.body.errors, [`round ${round.body.id} holds 500 deliveries, the most a round takes`]);
    const still = await bed.api.app.inject({
      method: "GET",
      url: `/api/v2/deliveries/${extra.id}`,
      headers: bed.account.headers,
    });
    assert.equal(still.json().status, "saved");
  });
});
