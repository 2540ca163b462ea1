/**
 * Creates are written in groups (one statement per batch) and answered from what was written,
 * not read back: concurrent creates of several accounts must each be answered exactly as they
 * are stored, announced by one `delivery.created` event carrying the same body, and never mixed
 * up between accounts.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  type DeliveriesTestbed,
  deliveryCount,
  json,
  outboundBody,
  place,
  slot,
  startDeliveriesTestbed,
} from "./delivery-fixtures.ts";
import { createTestAccount, type TestAccount } from "./fixtures.ts";

describe("creates written together", () => {
  let bed: DeliveriesTestbed;
  let other: TestAccount;
  before(async () => {
    bed = await startDeliveriesTestbed();
    other = await createTestAccount(bed.api.db);
  });
  after(async () => bed.close());

  const create = (account: TestAccount, body: unknown) =>
    bed.api.app.inject({
      method: "POST",
      url: "/api/v2/deliveries",
      headers: account.headers,
      payload: body as object,
    });
  const get = (account: TestAccount, id: number) =>
    bed.api.app.inject({ method: "GET", url: `/api/v2/deliveries/${id}`, headers: account.headers });

  test("60 concurrent creates of two accounts: each 201 is the stored delivery and its one event", async () => {
    const calls = Array.from({ length: 60 }, (_, n) => {
      const account = n % 2 === 0 ? bed.account : other;
      return { account, body: outboundBody(account, { client_order_reference: `GROUP-${n}` }) };
    });
    const responses = await Promise.all(calls.map(({ account, body }) => create(account, body)));
    const created = responses.map((response) => {
      assert.equal(response.statusCode, 201, response.body);
      return json(response);
    });
    assert.equal(new Set(created.map((d) => d.id)).size, 60, "every create has its own id");

    for (const [n, delivery] of created.entries()) {
      const { account } = calls[n] as (typeof calls)[number];
      assert.equal(delivery.client_order_reference, `GROUP-${n}`);
      const stored = await get(account, delivery.id);
      assert.equal(stored.statusCode, 200);
      assert.deepEqual(json(stored), delivery, "the 201 body is the delivery as stored");
      const otherAccount = account === bed.account ? other : bed.account;
      assert.equal((await get(otherAccount, delivery.id)).statusCode, 404);
    }

    const ids = created.map((d) => d.id);
    const events = await bed.api.db
      .selectFrom("outbox")
      .select(["delivery_id", "account_id", "sequence", "type", "event"])
      .where("delivery_id", "in", ids)
      .execute();
    assert.equal(events.length, 60, "one event per delivery");
    for (const event of events) {
      const delivery = created.find((d) => d.id === event.delivery_id);
      const { account } = calls[created.indexOf(delivery)] as (typeof calls)[number];
      assert.equal(event.type, "delivery.created");
      assert.equal(event.sequence, 1);
      assert.equal(event.account_id, account.accountId);
      const published = JSON.parse(event.event ?? "");
      assert.equal(published.sequence, 1);
      assert.equal(published.delivery_id, delivery.id);
      assert.deepEqual(published.payload.delivery, delivery, "the event carries the body answered");
    }
    const sequences = await bed.api.db
      .selectFrom("deliveries")
      .select("event_sequence")
      .where("id", "in", ids)
      .execute();
    assert.ok(sequences.every((row) => row.event_sequence === 1));
  });

  test("a lone UTF-16 surrogate is refused, naming each field, and nothing is stored in its place", async () => {
    const count = () => deliveryCount(bed);
    const before = await count();
    const body = outboundBody(bed.account, {
      comments: "left \ud800 alone",
      dropoff: { ...slot(), place: place(bed.account, { recipient_name: "Jeanne \udc00 Martin" }) },
    });
    const response = await create(bed.account, body);
    assert.equal(response.statusCode, 422, response.body);
    assert.deepEqual(json(response), {
      errors: [
        "dropoff.place.recipient_name must be valid Unicode text (\\udc00 is half of a surrogate pair)",
        "comments must be valid Unicode text (\\ud800 is half of a surrogate pair)",
      ],
    });
    assert.equal(await count(), before);
  });
});
