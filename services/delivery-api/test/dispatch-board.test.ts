/**
 * The dispatch board's reads: a day's deliveries to assign and its rounds with their tasks, the
 * day taken in the time zone asked for, in bounded pages however full the day is, and every bad
 * parameter a 422 naming it.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "kysely";
import { type DeliveriesTestbed, place, startDeliveriesTestbed } from "./delivery-fixtures.ts";
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
  other = await createTestAccount(bed.api.db, { companyName: "Other Shop" });
});
after(async () => bed.close());

/** A dropoff slot of two hours from `start` (an ISO timestamp with offset). */
const dropoffAt = (account: TestAccount, start: string, overrides: Record<string, unknown> = {}) => ({
  dropoff: {
    slot_starting_at: start,
    slot_ending_at: new Date(Date.parse(start) + 2 * 3600_000).toISOString(),
    place: place(account, overrides),
  },
});

interface Page {
  status: number;
  body: {
    total: number;
    starts_at: string;
    ends_at: string;
    deliveries: Array<{ id: number; tasks: Array<{ kind: string; slot_starting_at: string }> }>;
    next_after: string | null;
    errors: string[];
  };
}
const toAssign = (query: string): Promise<Page> => ops.get(`/dispatch/to_assign?${query}`) as Promise<Page>;
const ids = (page: Page) => page.body.deliveries.map((d) => d.id);

/** Every page of a day's deliveries to assign, following next_after. */
async function allToAssign(query: string) {
  const seen: number[] = [];
  let after: string | null = null;
  let pages = 0;
  do {
    const page: Page = await toAssign(`${query}${after ? `&after=${after}` : ""}`);
    assert.equal(page.status, 200, JSON.stringify(page.body));
    seen.push(...ids(page));
    after = page.body.next_after;
    pages++;
  } while (after !== null && pages < 100);
  return { seen, pages };
}

/** The ids of every round of a day, following next_after. */
async function allRounds(day: string) {
  const seen: number[] = [];
  let after = 0;
  for (let pages = 0; pages < 100; pages++) {
    const page = await ops.get(`/dispatch/rounds?date=${day}&after=${after}`);
    assert.equal(page.status, 200, JSON.stringify(page.body));
    seen.push(...page.body.rounds.map((r: { id: number }) => r.id));
    if (page.body.next_after === null) break;
    after = page.body.next_after;
  }
  return seen;
}

describe("a day's deliveries to assign", () => {
  const day = "2030-06-02";
  const made: Record<string, number> = {};
  before(async () => {
    const shop = bed.account;
    const create = async (name: string, account: TestAccount, body: Record<string, unknown>) => {
      made[name] = (await createDelivery(bed.api, account, { client_order_reference: name, ...body })).id;
    };
    await create("morning", shop, dropoffAt(shop, "2030-06-02T09:00:00.000+02:00"));
    await create("late-evening", shop, dropoffAt(shop, "2030-06-02T23:30:00.000+02:00"));
    // 00:30 in Paris on the 3rd is 22:30 UTC on the 2nd.
    await create("after-midnight-paris", shop, dropoffAt(shop, "2030-06-03T00:30:00.000+02:00"));
    await create("next-day", shop, dropoffAt(shop, "2030-06-04T10:00:00.000+02:00"));
    await create("other-shop", other, dropoffAt(other, "2030-06-02T14:00:00.000+02:00"));
    await create("cancelled", shop, dropoffAt(shop, "2030-06-02T15:00:00.000+02:00"));
    await bed.api.app.inject({
      method: "PATCH",
      url: `/api/v2/deliveries/${made.cancelled}/cancel`,
      headers: shop.headers,
    });
    // Inbound: the pickup is the main task; its dropoff (at the default place) comes after.
    await create("inbound", shop, {
      dropoff: undefined,
      pickup: {
        slot_starting_at: "2030-06-02T16:00:00.000+02:00",
        slot_ending_at: "2030-06-02T18:00:00.000+02:00",
        place: place(shop),
      },
    });
    await create("assigned", shop, dropoffAt(shop, "2030-06-02T12:00:00.000+02:00"));
    const messenger = await ops.post("/messengers", { name: "Lucie Coursier" });
    const round = await ops.post("/rounds", { messenger_id: messenger.body.id, delivery_ids: [made.assigned] });
    assert.equal(round.status, 201, JSON.stringify(round.body));
  });

  test("saved deliveries on no round whose main slot starts in the UTC day, earliest first, every account", async () => {
    const page = await toAssign(`date=${day}`);
    assert.equal(page.status, 200, JSON.stringify(page.body));
    assert.equal(page.body.starts_at, "2030-06-02T00:00:00.000+00:00");
    assert.equal(page.body.ends_at, "2030-06-03T00:00:00.000+00:00");
    assert.deepEqual(ids(page), [
      made.morning,
      made["other-shop"],
      made.inbound,
      made["late-evening"],
      made["after-midnight-paris"],
    ]);
    assert.equal(page.body.total, 5);
    assert.equal(page.body.next_after, null);
    const morning = page.body.deliveries[0] as unknown as Record<string, unknown>;
    const account = morning.account as { id: number; name: string; environment: string };
    assert.deepEqual([account.id, account.environment], [bed.account.accountId, "production"]);
    assert.match(account.name, /^Shop [0-9a-f]{8}$/);
    assert.equal(morning.client_order_reference, "morning");
    assert.equal(morning.status, "saved");
    const tasks = morning.tasks as Array<Record<string, unknown>>;
    assert.deepEqual(
      tasks.map((t) => t.kind),
      ["pickup", "dropoff"],
    );
    assert.deepEqual(
      { ...tasks[1], task_id: undefined },
      {
        task_id: undefined,
        delivery_id: made.morning,
        kind: "dropoff",
        state: "to_do",
        slot_starting_at: "2030-06-02T07:00:00.000+00:00",
        slot_ending_at: "2030-06-02T09:00:00.000+00:00",
        eta: null,
        started_at: null,
        completed_at: null,
        recipient_name: "Jeanne Martin",
        company_name: null,
        address: `12 Rue de la Paix, ${bed.account.postalCodes[0]} Paris`,
      },
    );
  });

  test("in the operator's time zone the day starts at its local midnight", async () => {
    const paris = await toAssign(`date=${day}&time_zone=Europe/Paris`);
    assert.equal(paris.status, 200, JSON.stringify(paris.body));
    assert.equal(paris.body.starts_at, "2030-06-01T22:00:00.000+00:00");
    assert.equal(paris.body.ends_at, "2030-06-02T22:00:00.000+00:00");
    assert.deepEqual(ids(paris), [made.morning, made["other-shop"], made.inbound, made["late-evening"]]);
    // The tz database's names, in any case, as PostgreSQL and the runtime both read them.
    assert.equal((await toAssign(`date=${day}&time_zone=europe/paris`)).body.starts_at, paris.body.starts_at);
    assert.equal(
      (await toAssign(`date=${day}&time_zone=Etc/GMT-2`)).body.starts_at,
      paris.body.starts_at,
      "Etc/GMT-2 is two hours ahead of UTC, as the tz database writes it",
    );
    const nextParisDay = await toAssign("date=2030-06-03&time_zone=Europe/Paris");
    assert.deepEqual(ids(nextParisDay), [made["after-midnight-paris"]]);
    // A day of 23 hours: the spring change in Paris.
    const spring = await toAssign("date=2030-03-31&time_zone=Europe/Paris");
    assert.equal(Date.parse(spring.body.ends_at) - Date.parse(spring.body.starts_at), 23 * 3600_000);
  });

  test("pages follow each other without a gap or a repeat", async () => {
    const first = await toAssign(`date=${day}&limit=2`);
    assert.deepEqual(ids(first), [made.morning, made["other-shop"]]);
    assert.equal(first.body.total, 5);
    assert.match(first.body.next_after ?? "", /^[0-9]+-[0-9]+$/);
    const { seen, pages } = await allToAssign(`date=${day}&limit=2`);
    assert.equal(pages, 3);
    assert.deepEqual(seen, ids(await toAssign(`date=${day}`)));
  });

  test("bad parameters are 422s naming the parameter; nothing is read for them", async () => {
    const cases: Array<[string, string]> = [
      ["", "querystring.date is required"],
      ["date=2030-02-30", "querystring.date is not a real date"],
      ["date=20300-01-01", "querystring.date must be at most 10 characters"],
      ["date=2030-6-2", "querystring.date must be a date (YYYY-MM-DD)"],
      ["date=9999-12-31", "querystring.date must be from 1900-01-01 to 2199-12-31"],
      ["date=0000-01-01", "querystring.date must be from 1900-01-01 to 2199-12-31"],
      [`date=${day}&time_zone=Mars/Olympus_Mons`, "querystring.time_zone Mars/Olympus_Mons is not a known time zone"],
      [`date=${day}&time_zone=%2B05:00`, "querystring.time_zone must be an IANA time zone name"],
      [`date=${day}&time_zone=UTC%2B5`, "querystring.time_zone UTC+5 is not a known time zone"],
      [`date=${day}&time_zone=${"x".repeat(65)}`, "querystring.time_zone must be at most 64 characters"],
      [`date=${day}&limit=0`, "querystring.limit must be at least 1"],
      [`date=${day}&limit=100000000000000000000`, "querystring.limit must be at most 1000"],
      [`date=${day}&limit=ten`, "querystring.limit must be an integer"],
      [`date=${day}&after=yesterday`, "querystring.after has an invalid format"],
      [`date=${day}&after=${"9".repeat(40)}-1`, "querystring.after must be at most 32 characters"],
      [`date=${day}&colour=blue`, "querystring.colour is not a known field"],
    ];
    for (const [query, message] of cases) {
      const answer = await toAssign(query);
      assert.equal(answer.status, 422, `${query}: ${JSON.stringify(answer.body)}`);
      assert.ok(
        answer.body.errors.some((e) => e.startsWith(message)),
        `${query}: ${JSON.stringify(answer.body.errors)} should name ${message}`,
      );
    }
  });
});

describe("a day with thousands of deliveries and rounds", () => {
  const day = "2031-01-15";
  const BULK = 5000;
  const roundIds: number[] = [];
  let bigRound = 0;
  before(async () => {
    // Written in SQL: what matters here is reading a full day, not creating it.
    await sql`
      with d as (
        insert into deliveries (account_id, direction, bring_back_containers, client_order_reference)
        select ${bed.account.accountId}, 'outbound', false, 'BULK-' || i from generate_series(1, ${BULK}) as i
        returning id
      )
      insert into tasks (delivery_id, kind, slot_starting_at, slot_ending_at, recipient_name, address, postal_code, city)
      select d.id, k.kind,
        timestamptz '2031-01-15T06:00:00Z' + (d.id % 720) * interval '1 minute' - k.before,
        timestamptz '2031-01-15T08:00:00Z' + (d.id % 720) * interval '1 minute' - k.before,
        'Recipient ' || d.id, d.id || ' Rue du Test', '75001', 'Paris'
      from d cross join (values ('pickup', interval '1 hour'), ('dropoff', interval '0')) as k (kind, before)
    `.execute(bed.api.db);
    const messenger = await ops.post("/messengers", { name: "Bulk Messenger" });
    // 12 rounds of 100 deliveries (200 tasks each), then one of 500 (1,000 tasks): put on rounds
    // in SQL too, as assignment would leave them (scheduled, tasks in order).
    const bulk = await sql<{ id: number }>`
      select id from deliveries where client_order_reference like 'BULK-%' and account_id = ${bed.account.accountId}
      order by id`.execute(bed.api.db);
    const deliveryIds = bulk.rows.map((r) => r.id);
    const sizes = [...Array(12).fill(100), 500];
    let next = 0;
    for (const size of sizes) {
      const round = await ops.post("/rounds", { messenger_id: messenger.body.id });
      const taken = deliveryIds.slice(next, next + size);
      next += size;
      await sql`
        insert into round_tasks (round_id, task_id, position)
        select ${round.body.id}, t.id, row_number() over (order by t.delivery_id, t.kind desc)
        from tasks t where t.delivery_id = any(${taken})`.execute(bed.api.db);
      await sql`update deliveries set status = 'scheduled' where id = any(${taken})`.execute(bed.api.db);
      roundIds.push(round.body.id);
    }
    bigRound = roundIds.at(-1) as number;
  });

  test("to assign: the day's 3,300 left, in pages of at most 1,000, each read in a constant number of statements", async () => {
    let statements = 0;
    const count = () => statements++;
    bed.api.pool.on("acquire", count);
    const first = await toAssign(`date=${day}&limit=1000`);
    bed.api.pool.off("acquire", count);
    assert.equal(first.status, 200);
    assert.equal(first.body.deliveries.length, 1000);
    assert.equal(first.body.total, BULK - 1700);
    assert.ok(statements <= 4, `${statements} statements for a page of 1,000`);
    const started = performance.now();
    const { seen, pages } = await allToAssign(`date=${day}&limit=1000`);
    const ms = performance.now() - started;
    assert.equal(pages, 4);
    assert.equal(seen.length, BULK - 1700);
    assert.equal(new Set(seen).size, seen.length);
    // Earliest slot first across the pages.
    const starts = await sql<{ id: number; s: Date }>`
      select delivery_id as id, slot_starting_at as s from tasks where kind = 'dropoff' and delivery_id = any(${seen})`.execute(
      bed.api.db,
    );
    const slotOf = new Map(starts.rows.map((r) => [r.id, r.s.getTime()]));
    const order = seen.map((id) => slotOf.get(id) as number);
    assert.deepEqual(
      order,
      [...order].sort((a, b) => a - b),
    );
    console.log(`to_assign: ${BULK - 1700} deliveries in ${pages} pages of 1,000: ${ms.toFixed(0)} ms`);
  });

  test("rounds: whole rounds per page, no more than 2,000 tasks unless one round alone holds more", async () => {
    const pages: Array<{ rounds: Array<{ id: number; tasks: unknown[] }>; next_after: number | null }> = [];
    let after = 0;
    const started = performance.now();
    for (;;) {
      const page = await ops.get(`/dispatch/rounds?date=${day}&after=${after}`);
      assert.equal(page.status, 200, JSON.stringify(page.body));
      pages.push(page.body);
      if (page.body.next_after === null) break;
      after = page.body.next_after;
    }
    const ms = performance.now() - started;
    const perPage = pages.map((p) => p.rounds.map((r) => r.tasks.length));
    // The first page ends where the 11th round would pass 2,000 tasks.
    assert.deepEqual(perPage, [Array(10).fill(200), [200, 200, 1000]]);
    assert.deepEqual(
      pages.flatMap((p) => p.rounds.map((r) => r.id)),
      roundIds,
    );
    assert.equal(pages.at(-1)?.rounds.at(-1)?.id, bigRound);
    console.log(`rounds: ${roundIds.length} rounds, 3,400 tasks in ${pages.length} pages: ${ms.toFixed(0)} ms`);
  });

  test("the rounds' limit, and a bad after, are checked", async () => {
    const one = await ops.get(`/dispatch/rounds?date=${day}&limit=1`);
    assert.equal(one.body.rounds.length, 1);
    assert.equal(one.body.next_after, one.body.rounds[0].id);
    const cases: Array<[string, string]> = [
      ["limit=101", "querystring.limit must be at most 100"],
      ["after=-1", "querystring.after must be at least 0"],
      ["after=99999999999999999999", "querystring.after must be at most 9007199254740991"],
    ];
    for (const [query, message] of cases) {
      const answer = await ops.get(`/dispatch/rounds?date=${day}&${query}`);
      assert.equal(answer.status, 422, query);
      assert.ok(answer.body.errors[0].startsWith(message), `${query}: ${answer.body.errors}`);
    }
  });
});

describe("the day's rounds", () => {
  const day = "2030-07-01";
  test("each round with its messenger, vehicle and tasks in order: state, slot, ETA, address, reference, account", async () => {
    const shop = bed.account;
    const a = await createDelivery(bed.api, shop, {
      client_order_reference: "R-A",
      ...dropoffAt(shop, "2030-07-01T10:00:00.000+02:00"),
    });
    const b = await createDelivery(bed.api, other, {
      client_order_reference: "R-B",
      ...dropoffAt(other, "2030-07-01T11:00:00.000+02:00", { address: "3 Rue Lepic", company_name: "Atelier B" }),
    });
    const messenger = await ops.post("/messengers", { name: "Marc Livreur" });
    const vehicle = await ops.post("/vehicles", { external_id: "BOARD-VAN-1", provider: "acme", label: "Van 1" });
    const round = await ops.post("/rounds", {
      messenger_id: messenger.body.id,
      vehicle_id: vehicle.body.id,
      delivery_ids: [a.id, b.id],
    });
    const empty = await ops.post("/rounds", { messenger_id: messenger.body.id });
    // A round created today for a day of 2030 shows on today's board (planned today), not on that day's.
    const today = new Date().toISOString().slice(0, 10);
    const page = await ops.get(`/dispatch/rounds?date=${day}`);
    assert.equal(page.status, 200, JSON.stringify(page.body));
    assert.deepEqual(
      page.body.rounds.map((r: { id: number }) => r.id),
      [round.body.id],
    );
    const shown = page.body.rounds[0];
    assert.deepEqual(shown.messenger, { id: messenger.body.id, name: "Marc Livreur" });
    assert.deepEqual(shown.vehicle, { id: vehicle.body.id, external_id: "BOARD-VAN-1", label: "Van 1" });
    assert.equal(shown.status, "planned");
    assert.deepEqual(
      shown.tasks.map((t: Record<string, unknown>) => [t.position, t.delivery_id, t.kind, t.state, t.delivery_status]),
      [
        [1, a.id, "pickup", "to_do", "scheduled"],
        [2, a.id, "dropoff", "to_do", "scheduled"],
        [3, b.id, "pickup", "to_do", "scheduled"],
        [4, b.id, "dropoff", "to_do", "scheduled"],
      ],
    );
    const dropoffB = shown.tasks[3];
    assert.equal(dropoffB.client_order_reference, "R-B");
    assert.deepEqual(dropoffB.account, { id: other.accountId, name: "Other Shop" });
    assert.equal(dropoffB.address, `3 Rue Lepic, ${other.postalCodes[0]} Paris`);
    assert.equal(dropoffB.company_name, "Atelier B");
    assert.equal(dropoffB.slot_starting_at, "2030-07-01T09:00:00.000+00:00");
    assert.equal(dropoffB.eta, null);
    assert.ok((await allRounds(today)).includes(empty.body.id), "a round created today is on today's board");

    // A read-only person reads the board too.
    const viewer = await createTestStaff(bed.api, "read_only");
    assert.equal((await viewer.ops.get(`/dispatch/rounds?date=${day}`)).status, 200);
    assert.equal((await viewer.ops.get(`/dispatch/to_assign?date=${day}`)).status, 200);
  });
});
