/**
 * GET list, get and latest: order, filter and pagination of the list, 404s for what the caller
 * cannot see, tenant isolation across every operation, and 401 on every route.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "kysely";
import {
  type DeliveriesTestbed,
  json,
  outboundBody,
  place,
  slot,
  startDeliveriesTestbed,
} from "./delivery-fixtures.ts";
import { createTestAccount, type TestAccount } from "./fixtures.ts";

let bed: DeliveriesTestbed;
let account: TestAccount;
const ids: number[] = [];

async function create(body: object, headers = account.headers) {
  const response = await bed.api.app.inject({ method: "POST", url: "/api/v2/deliveries", headers, payload: body });
  assert.equal(response.statusCode, 201, response.body);
  return json(response);
}
const get = (url: string, headers = account.headers) => bed.api.app.inject({ method: "GET", url, headers });

before(async () => {
  bed = await startDeliveriesTestbed();
  account = await createTestAccount(bed.api.db);
  // Five deliveries: references A, B, A, B, A (the last one inbound).
  for (const [i, reference] of ["A", "B", "A", "B"].entries()) {
    ids.push(
      (
        await create(
          outboundBody(account, {
            client_order_reference: reference,
            dropoff: { ...slot(24 + i), place: place(account) },
          }),
        )
      ).id,
    );
  }
  const inbound = {
    client_order_reference: "A",
    pickup: { ...slot(40, 3), place: place(account) },
    packages: [{ package_type_id: account.packageTypeIds[0], amount: 1 }],
  };
  ids.push((await create(inbound)).id);
});
after(async () => bed.close());

describe("list", () => {
  test("newest first, each item as the spec shows it, with the slot of the main task", async () => {
    const response = await get("/api/v2/deliveries");
    assert.equal(response.statusCode, 200);
    const items = json(response);
    assert.deepEqual(
      items.map((i: { id: number }) => i.id),
      [...ids].reverse(),
    );
    assert.deepEqual(Object.keys(items[0]).sort(), [
      "created_at",
      "id",
      "price_cents",
      "slot_ending_at",
      "slot_starting_at",
      "status",
    ]);
    const inbound = json(await get(`/api/v2/deliveries/${ids[4]}`));
    assert.equal(items[0].slot_starting_at, inbound.pickup.slot_starting_at, "inbound: the pickup's slot");
    const outbound = json(await get(`/api/v2/deliveries/${ids[3]}`));
    assert.equal(items[1].slot_starting_at, outbound.dropoff.slot_starting_at, "outbound: the dropoff's slot");
    assert.deepEqual(items[1], {
      id: outbound.id,
      created_at: outbound.created_at,
      status: "saved",
      slot_starting_at: outbound.dropoff.slot_starting_at,
      slot_ending_at: outbound.dropoff.slot_ending_at,
      price_cents: 700,
    });
    assert.equal(response.headers["x-total-count"], "5");
  });

  test("filtered by client_order_reference", async () => {
    const response = await get("/api/v2/deliveries?client_order_reference=B");
    assert.deepEqual(
      json(response).map((i: { id: number }) => i.id),
      [ids[3], ids[1]],
    );
    assert.equal(response.headers["x-total-count"], "2");
    assert.deepEqual(json(await get("/api/v2/deliveries?client_order_reference=none")), []);
  });

  test("pages keep the array body; Link and X-Total-Count describe them", async () => {
    const response = await get("/api/v2/deliveries?client_order_reference=A&per_page=2&page=2");
    assert.equal(response.statusCode, 200);
    assert.deepEqual(
      json(response).map((i: { id: number }) => i.id),
      [ids[0]],
    );
    assert.equal(response.headers["x-total-count"], "3");
    assert.equal(
      response.headers.link,
      '</api/v2/deliveries?client_order_reference=A&per_page=2&page=1>; rel="first", ' +
        '</api/v2/deliveries?client_order_reference=A&per_page=2&page=1>; rel="prev", ' +
        '</api/v2/deliveries?client_order_reference=A&per_page=2&page=2>; rel="last"',
    );
    const first = await get("/api/v2/deliveries?per_page=2");
    assert.equal(
      first.headers.link,
      '</api/v2/deliveries?per_page=2&page=1>; rel="first", </api/v2/deliveries?per_page=2&page=2>; rel="next", ' +
        '</api/v2/deliveries?per_page=2&page=3>; rel="last"',
    );
    assert.deepEqual(json(await get("/api/v2/deliveries?page=9")), [], "past the last page: an empty array");
  });

  test("page bounds are refused with 422", async () => {
    const tooMany = await get("/api/v2/deliveries?per_page=101");
    assert.equal(tooMany.statusCode, 422);
    assert.deepEqual(json(tooMany), { errors: ["querystring.per_page must be at most 100"] });
    const zero = await get("/api/v2/deliveries?page=0");
    assert.deepEqual(json(zero), { errors: ["querystring.page must be at least 1"] });
    const text = await get("/api/v2/deliveries?page=two");
    assert.deepEqual(json(text), { errors: ["querystring.page must be an integer"] });
  });
});

describe("list filters: status and days", () => {
  const day = (offsetDays: number) => new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);
  const idsOf = async (url: string) => {
    const response = await get(url);
    assert.equal(response.statusCode, 200, response.body);
    return json(response).map((i: { id: number }) => i.id);
  };

  test("status, creation day and slot day filter the list and its count, combined with the reference", async () => {
    // Ten days ahead: a slot day no other delivery of the account has.
    const far = await create(
      outboundBody(account, { client_order_reference: "F", dropoff: { ...slot(240), place: place(account) } }),
    );
    const cancel = await bed.api.app.inject({
      method: "PATCH",
      url: `/api/v2/deliveries/${far.id}/cancel`,
      headers: account.headers,
    });
    assert.equal(cancel.statusCode, 200, cancel.body);
    const farDay = far.dropoff.slot_starting_at
      ? new Date(far.dropoff.slot_starting_at).toISOString().slice(0, 10)
      : "";

    assert.deepEqual(await idsOf("/api/v2/deliveries?status=cancelled"), [far.id]);
    const saved = await get("/api/v2/deliveries?status=saved&client_order_reference=A");
    assert.equal(saved.headers["x-total-count"], "3");
    assert.deepEqual(await idsOf(`/api/v2/deliveries?slot_from=${farDay}&slot_to=${farDay}`), [far.id]);
    assert.equal((await idsOf(`/api/v2/deliveries?slot_to=${day(9)}`)).includes(far.id), false);
    assert.equal((await idsOf(`/api/v2/deliveries?created_from=${day(0)}&created_to=${day(0)}`)).length, 6);
    assert.deepEqual(await idsOf(`/api/v2/deliveries?created_to=${day(-1)}`), [], "none created before today");
    assert.deepEqual(await idsOf(`/api/v2/deliveries?created_from=${day(1)}`), [], "none created after today");
    const link = (await get("/api/v2/deliveries?status=cancelled&per_page=1")).headers.link;
    assert.match(String(link), /status=cancelled/, "the page links keep the filters");
  });

  test("a bad filter is a 422 naming its parameter", async () => {
    const long = "querystring.created_from must be at most 10 characters";
    const cases: [string, ...string[]][] = [
      ["status=lost", "querystring.status must be one of saved, scheduled, picked_up, delivered, cancelled, failed"],
      ["created_from=2026-02-30", "querystring.created_from is not a real date"],
      ["slot_from=0000-01-01", "querystring.slot_from is not a real date"],
      ["created_to=0000-12-31", "querystring.created_to is not a real date"],
      ["slot_to=tomorrow", "querystring.slot_to must be a date (YYYY-MM-DD)"],
      [`created_from=${"9".repeat(300)}`, long, "querystring.created_from must be a date (YYYY-MM-DD)"],
      ["slot_from=2026-05-02&slot_to=2026-05-01", "querystring.slot_to must not be before querystring.slot_from"],
      [
        "created_from=2026-05-02&created_to=2026-05-01",
        "querystring.created_to must not be before querystring.created_from",
      ],
    ];
    for (const [query, ...messages] of cases) {
      const response = await get(`/api/v2/deliveries?${query}`);
      assert.equal(response.statusCode, 422, query);
      assert.deepEqual(json(response), { errors: messages }, query);
    } // The calendar's ends are days like any other (the day after 9999-12-31 is past 4 digits).
    for (const query of ["created_from=0001-01-01&slot_from=0001-01-01", "created_to=9999-12-31&slot_to=9999-12-31"]) {
      assert.equal((await get(`/api/v2/deliveries?${query}`)).statusCode, 200, query);
    }
  });
});

describe("get and latest", () => {
  test("get answers the delivery as create did", async () => {
    const created = await create(outboundBody(account, { client_order_reference: "GET-1" }));
    const response = await get(`/api/v2/deliveries/${created.id}`);
    assert.equal(response.statusCode, 200);
    assert.deepEqual(json(response), created);
  });

  test("latest: the newest, for the reference when given", async () => {
    const newest = await create(outboundBody(account, { client_order_reference: "LATEST" }));
    assert.equal(json(await get("/api/v2/deliveries/latest")).id, newest.id);
    assert.equal(json(await get("/api/v2/deliveries/latest?client_order_reference=B")).id, ids[3]);
  });

  test("latest with nothing to find: 404", async () => {
    const response = await get("/api/v2/deliveries/latest?client_order_reference=NOPE");
    assert.equal(response.statusCode, 404);
    assert.deepEqual(json(response), { errors: ["delivery with client_order_reference NOPE not found"] });
    const empty = await createTestAccount(bed.api.db);
    const none = await get("/api/v2/deliveries/latest", empty.headers);
    assert.equal(none.statusCode, 404);
    assert.deepEqual(json(none), { errors: ["delivery not found"] });
  });

  test("an unknown id, or one that cannot exist, is a 404", async () => {
    for (const [id, message] of [
      ["999999", "delivery 999999 not found"],
      ["abc", "delivery abc not found"],
      ["0", "delivery 0 not found"],
      ["99999999999999999999", "delivery 99999999999999999999 not found"],
    ] as const) {
      const response = await get(`/api/v2/deliveries/${id}`);
      assert.equal(response.statusCode, 404, id);
      assert.deepEqual(json(response), { errors: [message] });
    }
  });

  test("a delivery has one URL: its id written any other way names nothing, and nothing is changed", async () => {
    const id = ids[0] as number;
    for (const written of [`0${id}`, `${id}.0`, `${id}e0`, `0x${id.toString(16)}`, `%20${id}`, `+${id}`]) {
      const shown = decodeURIComponent(written);
      const read = await get(`/api/v2/deliveries/${written}`);
      assert.deepEqual([read.statusCode, json(read)], [404, { errors: [`delivery ${shown} not found`] }], written);
      const cancel = await bed.api.app.inject({
        method: "PATCH",
        url: `/api/v2/deliveries/${written}/cancel`,
        headers: account.headers,
      });
      assert.deepEqual([cancel.statusCode, json(cancel)], [404, { errors: [`delivery ${shown} not found`] }], written);
      const update = await bed.api.app.inject({
        method: "PATCH",
        url: `/api/v2/deliveries/${written}`,
        headers: account.headers,
        payload: { comments: 5 },
      });
      assert.deepEqual([update.statusCode, json(update)], [404, { errors: [`delivery ${shown} not found`] }], written);
    }
    assert.equal(json(await get(`/api/v2/deliveries/${id}`)).status, "saved");
  });
});

describe("timeline (a delivery's events)", () => {
  test("every event of the delivery, oldest first, with the status after it; 404 for another account's", async () => {
    const created = await create(outboundBody(account, { client_order_reference: "T" }));
    const url = `/api/v2/deliveries/${created.id}`;
    const patch = await bed.api.app.inject({
      method: "PATCH",
      url,
      headers: account.headers,
      payload: { comments: "ring twice" },
    });
    assert.equal(patch.statusCode, 200, patch.body);
    const cancel = await bed.api.app.inject({ method: "PATCH", url: `${url}/cancel`, headers: account.headers });
    assert.equal(cancel.statusCode, 200, cancel.body);

    const response = await get(`${url}/events`);
    assert.equal(response.statusCode, 200, response.body);
    const events = json(response) as Array<Record<string, unknown>>;
    assert.deepEqual(
      events.map(({ type, sequence, status, previous_status }) => ({ type, sequence, status, previous_status })),
      [
        { type: "delivery.created", sequence: 1, status: "saved", previous_status: null },
        { type: "delivery.updated", sequence: 2, status: "saved", previous_status: null },
        { type: "delivery.cancelled", sequence: 3, status: "cancelled", previous_status: "saved" },
      ],
    );
    assert.match(String(events[0]?.occurred_at), /^\d{4}-\d{2}-\d{2}T.*\+00:00$/);

    const stranger = await createTestAccount(bed.api.db);
    const foreign = await get(`${url}/events`, stranger.headers);
    assert.equal(foreign.statusCode, 404);
    assert.deepEqual(json(foreign), { errors: [`delivery ${created.id} not found`] });
    assert.equal((await get("/api/v2/deliveries/01/events")).statusCode, 404);
  });

  test("bounded: the latest 200 events only", async () => {
    const created = await create(outboundBody(account));
    // 250 more events than create wrote, as a long-lived delivery's changes would add them.
    await sql`
      insert into outbox (id, account_id, delivery_id, sequence, type, subject, event, published_at)
      select gen_random_uuid(), ${account.accountId}, ${created.id}, n, 'delivery.updated', 'x',
        '{"payload":{"delivery":{"status":"saved"}}}', now()
      from generate_series(2, 251) as n
    `.execute(bed.api.db);
    const events = json(await get(`/api/v2/deliveries/${created.id}/events`)) as Array<{ sequence: number }>;
    assert.equal(events.length, 200);
    assert.equal(events[0]?.sequence, 52);
    assert.equal(events.at(-1)?.sequence, 251);
  });
});

describe("price with its breakdown", () => {
  test("the price, its tariff and its lines as quoted, the statement's lines; 404 for another account's", async () => {
    const url = `/api/v2/deliveries/${ids[3]}`;
    const response = await get(`${url}/price`);
    assert.equal(response.statusCode, 200, response.body);
    const price = json(response) as { price_cents: number; tariff_id: number; lines: Array<{ amount_cents: number }> };
    assert.equal(price.price_cents, json(await get(url)).price_cents);
    assert.equal(price.price_cents, 700);
    assert.ok(price.lines.length > 0, "at least one line");
    assert.equal(
      price.lines.reduce((sum, line) => sum + line.amount_cents, 0),
      price.price_cents,
      "the lines add up to the price",
    );
    const row = await bed.api.db
      .selectFrom("deliveries")
      .select(["price_tariff_id", "price_lines"])
      .where("id", "=", ids[3] as number)
      .executeTakeFirstOrThrow();
    assert.deepEqual(
      { tariff_id: price.tariff_id, lines: price.lines },
      { tariff_id: row.price_tariff_id, lines: row.price_lines },
    );

    const stranger = await createTestAccount(bed.api.db);
    const foreign = await get(`${url}/price`, stranger.headers);
    assert.equal(foreign.statusCode, 404);
    assert.deepEqual(json(foreign), { errors: [`delivery ${ids[3]} not found`] });
  });
});

describe("tenant isolation", () => {
  test("another account's delivery is a 404 on every operation, never a 403 or a leak", async () => {
    const stranger = await createTestAccount(bed.api.db);
    const id = ids[0];
    const notFound = { errors: [`delivery ${id} not found`] };
    const calls = [
      { method: "GET", url: `/api/v2/deliveries/${id}` },
      { method: "PATCH", url: `/api/v2/deliveries/${id}`, payload: { comments: "mine now" } },
      { method: "PUT", url: `/api/v2/deliveries/${id}`, payload: { comments: "mine now" } },
      { method: "PATCH", url: `/api/v2/deliveries/${id}/cancel` },
      { method: "POST", url: `/api/v2/deliveries/${id}/redelivery`, payload: {} },
    ] as const;
    for (const call of calls) {
      const response = await bed.api.app.inject({ ...call, headers: stranger.headers });
      assert.equal(response.statusCode, 404, `${call.method} ${call.url}`);
      assert.deepEqual(json(response), notFound);
    }
    assert.deepEqual(json(await get("/api/v2/deliveries", stranger.headers)), []);
    assert.equal(
      (await get("/api/v2/deliveries?client_order_reference=A", stranger.headers)).headers["x-total-count"],
      "0",
    );
    assert.equal((await get("/api/v2/deliveries/latest", stranger.headers)).statusCode, 404);
    const untouched = json(await get(`/api/v2/deliveries/${id}`));
    assert.equal(untouched.status, "saved");
    assert.equal(untouched.comments, null);
  });
});

describe("authentication", () => {
  test("every delivery route answers 401 without credentials", async () => {
    const routes = [
      ["GET", "/api/v2/deliveries"],
      ["POST", "/api/v2/deliveries"],
      ["POST", "/api/v2/deliveries/quote"],
      ["GET", "/api/v2/deliveries/latest"],
      ["GET", `/api/v2/deliveries/${ids[0]}`],
      ["GET", `/api/v2/deliveries/${ids[0]}/events`],
      ["GET", `/api/v2/deliveries/${ids[0]}/price`],
      ["PATCH", `/api/v2/deliveries/${ids[0]}`],
      ["PUT", `/api/v2/deliveries/${ids[0]}`],
      ["PATCH", `/api/v2/deliveries/${ids[0]}/cancel`],
      ["POST", `/api/v2/deliveries/${ids[0]}/redelivery`],
    ] as const;
    for (const [method, url] of routes) {
      const missing = await bed.api.app.inject({ method, url, payload: method === "GET" ? undefined : {} });
      assert.equal(missing.statusCode, 401, `${method} ${url}`);
      assert.deepEqual(json(missing), { errors: ["X-User-Email and X-User-Token headers are required"] });
      const wrong = await bed.api.app.inject({ method, url, headers: { ...account.headers, "x-user-token": "nope" } });
      assert.equal(wrong.statusCode, 401, `${method} ${url}`);
      assert.deepEqual(json(wrong), { errors: ["X-User-Email or X-User-Token is invalid"] });
    }
  });
});
