/**
 * The live map's snapshot (GET /ops/v1/fleet/live) over 2,000 vehicles in active rounds: each at
 * its round's current position with the right state, read in one statement, in pages; measured.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "kysely";
import { type DeliveriesTestbed, startDeliveriesTestbed } from "./delivery-fixtures.ts";
import { createDelivery, opsClient } from "./dispatch-fixtures.ts";
import type { OpsClient } from "./ops-client.ts";

const FLEET = 2000;
let bed: DeliveriesTestbed;
let ops: OpsClient;
before(async () => {
  bed = await startDeliveriesTestbed();
  ops = opsClient(bed.api);
});
after(async () => bed.close());

interface LiveVehicle {
  vehicle_id: number;
  external_id: string;
  round_id: number;
  messenger: { id: number; name: string };
  position: { latitude: number; longitude: number; recorded_at: string; source: string } | null;
  state: "on_time" | "late" | "no_position";
  next_task: { task_id: number; slot_ending_at: string; eta: string | null } | null;
}

/**
 * 2,000 vehicles in active rounds, one delivery each, written in SQL (what matters here is the
 * read): vehicle i's round has, by i modulo 20,
 *   0–13 a fresh tracker position and an ETA within the slot       → on_time
 *   14–15 a fresh tracker position and an ETA past the slot end      → late
 *   16   a fresh tracker position, no ETA, a slot already over       → late
 *   17   a tracker position 5 minutes old                            → no_position
 *   18   no position at all                                          → no_position
 *   19   a tracker position 3 minutes old and a fresh phone one      → on_time, from the phone
 */
async function seedFleet(accountId: number) {
  const db = bed.api.db;
  // Vehicle i, its messenger, delivery and round are found by their names: LIVE-000i.
  const seed = sql.raw(`(select i, i % 20 as kind, 'LIVE-' || lpad(i::text, 4, '0') as name
    from generate_series(1, ${FLEET}) as i) as s`);
  await sql`insert into messengers (name) select 'Messenger ' || s.name from ${seed}`.execute(db);
  await sql`insert into vehicles (external_id, provider) select s.name, 'acme' from ${seed}`.execute(db);
  await sql`
    insert into deliveries (account_id, direction, bring_back_containers, status, client_order_reference)
    select ${accountId}, 'outbound', false, 'scheduled', s.name from ${seed}`.execute(db);
  await sql`
    insert into tasks (delivery_id, kind, slot_starting_at, slot_ending_at, recipient_name, address, postal_code, city, eta)
    select d.id, 'dropoff',
      case when s.kind = 16 then now() - interval '3 hours' else now() end,
      case when s.kind = 16 then now() - interval '1 hour' else now() + interval '2 hours' end,
      'Recipient ' || s.i, s.i || ' Rue du Direct', '75001', 'Paris',
      case when s.kind in (14, 15) then now() + interval '3 hours'
           when s.kind = 16 then null
           else now() + interval '1 hour' end
    from ${seed} join deliveries d on d.client_order_reference = s.name and d.account_id = ${accountId}`.execute(db);
  await sql`
    insert into rounds (messenger_id, vehicle_id, status, started_at)
    select m.id, v.id, 'active', now() - interval '1 hour'
    from ${seed} join messengers m on m.name = 'Messenger ' || s.name join vehicles v on v.external_id = s.name`.execute(
    db,
  );
  const rounds = sql`(select s.i, s.kind, s.name, r.id as round_id from ${seed}
    join vehicles v on v.external_id = s.name join rounds r on r.vehicle_id = v.id and r.status = 'active') as x`;
  await sql`
    insert into round_tasks (round_id, task_id, position)
    select x.round_id, t.id, 1 from ${rounds}
    join deliveries d on d.client_order_reference = x.name and d.account_id = ${accountId}
    join tasks t on t.delivery_id = d.id`.execute(db);
  await sql`
    insert into round_positions (round_id, source, latitude, longitude, recorded_at)
    select x.round_id, 'tracker', 48.8 + x.i / 100000.0, 2.3,
      now() - case x.kind when 17 then interval '5 minutes' when 19 then interval '3 minutes' else interval '5 seconds' end
    from ${rounds} where x.kind <> 18`.execute(db);
  await sql`
    insert into round_positions (round_id, source, latitude, longitude, recorded_at)
    select x.round_id, 'phone', 45.0, 4.0, now() - interval '10 seconds' from ${rounds} where x.kind = 19`.execute(db);
  // Statistics as autovacuum keeps them on a live database: without them the planner takes these
  // freshly filled tables for nearly empty ones and joins them by scanning.
  await sql`analyze`.execute(db);
}

describe("the live map's snapshot", () => {
  let apiVehicle: number;
  before(async () => {
    await seedFleet(bed.account.accountId);
    // One vehicle as the operator sets it up: a planned round is not on the map, nor a vehicle without a round.
    const delivery = await createDelivery(bed.api, bed.account);
    const messenger = await ops.post("/messengers", { name: "Planned Paul" });
    const vehicle = await ops.post("/vehicles", { external_id: "LIVE-PLANNED", provider: "acme" });
    apiVehicle = vehicle.body.id;
    await ops.post("/rounds", { messenger_id: messenger.body.id, vehicle_id: apiVehicle, delivery_ids: [delivery.id] });
    await ops.post("/vehicles", { external_id: "LIVE-IDLE", provider: "acme" });
  });

  test("every vehicle in an active round, with its round, messenger, position and state, in one statement", async () => {
    let statements = 0;
    const count = () => statements++;
    bed.api.pool.on("acquire", count);
    const answer = await ops.get("/fleet/live");
    bed.api.pool.off("acquire", count);
    assert.equal(answer.status, 200, JSON.stringify(answer.body).slice(0, 500));
    assert.equal(statements, 1, "one statement for the whole fleet");
    const vehicles = answer.body.vehicles as LiveVehicle[];
    assert.equal(vehicles.length, FLEET);
    assert.equal(answer.body.next_after, null);
    assert.ok(!vehicles.some((v) => v.vehicle_id === apiVehicle), "a planned round is not live");
    const ids = vehicles.map((v) => v.vehicle_id);
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => a - b),
    );
    const byKind = (kind: number) => vehicles.filter((v) => Number(v.external_id.slice(5)) % 20 === kind);
    const states = (kind: number) => [...new Set(byKind(kind).map((v) => v.state))];
    for (let kind = 0; kind <= 13; kind++) assert.deepEqual(states(kind), ["on_time"], `kind ${kind}`);
    assert.deepEqual(states(14), ["late"]);
    assert.deepEqual(states(15), ["late"]);
    assert.deepEqual(states(16), ["late"], "a slot already over is late without an ETA");
    assert.deepEqual(states(17), ["no_position"], "a position 5 minutes old");
    assert.deepEqual(states(18), ["no_position"], "no position at all");
    assert.ok(byKind(18).every((v) => v.position === null));
    // A stale tracker gives way to a fresh phone (the spec's rule).
    assert.deepEqual(states(19), ["on_time"]);
    assert.ok(byKind(19).every((v) => v.position?.source === "phone" && v.position.latitude === 45));
    const first = vehicles.find((v) => v.external_id === "LIVE-0001") as LiveVehicle;
    assert.equal(first.messenger.name, "Messenger LIVE-0001");
    assert.equal(first.position?.source, "tracker");
    assert.equal(first.position?.latitude, 48.80001);
    assert.ok(first.next_task?.eta && first.next_task.eta < first.next_task.slot_ending_at);
  });

  test("pages of `limit` vehicles follow each other by vehicle id", async () => {
    const seen: number[] = [];
    let after = 0;
    let pages = 0;
    for (; pages < 10; pages++) {
      const page = await ops.get(`/fleet/live?limit=600&after=${after}`);
      assert.equal(page.status, 200);
      seen.push(...page.body.vehicles.map((v: LiveVehicle) => v.vehicle_id));
      if (page.body.next_after === null) break;
      after = page.body.next_after;
    }
    assert.equal(pages + 1, 4);
    assert.equal(seen.length, FLEET);
    assert.equal(new Set(seen).size, FLEET);
  });

  test("measured: the whole fleet's snapshot", async () => {
    const times: number[] = [];
    let bytes = 0;
    for (let i = 0; i < 7; i++) {
      const started = performance.now();
      const answer = await bed.api.app.inject({
        method: "GET",
        url: "/ops/v1/fleet/live",
        headers: { authorization: `Bearer ${(await import("./fixtures.ts")).OPS_TOKEN}` },
      });
      times.push(performance.now() - started);
      bytes = answer.body.length;
      assert.equal(answer.statusCode, 200);
    }
    times.sort((a, b) => a - b);
    const { rows } = await sql<{ ms: number }>`
      select 1 as ms`.execute(bed.api.db);
    assert.equal(rows.length, 1);
    console.log(
      `fleet/live, ${FLEET} vehicles: median ${times[3]?.toFixed(0)} ms, fastest ${times[0]?.toFixed(0)} ms, ` +
        `slowest ${times[6]?.toFixed(0)} ms, ${(bytes / 1024).toFixed(0)} KiB`,
    );
  });

  test("bad parameters are 422s naming them", async () => {
    const cases: Array<[string, string]> = [
      ["limit=0", "querystring.limit must be at least 1"],
      ["limit=5001", "querystring.limit must be at most 5000"],
      ["after=-1", "querystring.after must be at least 0"],
      ["after=1e400", "querystring.after must be"],
      ["state=late", "querystring.state is not a known field"],
    ];
    for (const [query, message] of cases) {
      const answer = await ops.get(`/fleet/live?${query}`);
      assert.equal(answer.status, 422, `${query}: ${JSON.stringify(answer.body)}`);
      assert.ok(
        answer.body.errors.some((e: string) => e.startsWith(message)),
        `${query}: ${JSON.stringify(answer.body.errors)} should name ${message}`,
      );
    }
  });
});
