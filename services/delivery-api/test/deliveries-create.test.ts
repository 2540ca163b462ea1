/**
 * POST /api/v2/deliveries: every rule of the spec on a create body, over HTTP against real
 * PostgreSQL and NATS (the pricing double answers on the bus), with the exact error bodies.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  type DeliveriesTestbed,
  deliveryCount,
  inHours,
  json,
  outboundBody,
  place,
  slot,
  startDeliveriesTestbed,
} from "./delivery-fixtures.ts";
import { createTestAccount } from "./fixtures.ts";

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/;
let bed: DeliveriesTestbed;

before(async () => {
  bed = await startDeliveriesTestbed();
});
after(async () => bed.close());

function create(payload: unknown, headers = bed.account.headers) {
  return bed.api.app.inject({ method: "POST", url: "/api/v2/deliveries", headers, payload: payload as object });
}

async function expect422(payload: unknown, errors: string[]) {
  const response = await create(payload);
  assert.equal(response.statusCode, 422, response.body);
  assert.deepEqual(json(response), { errors });
}

describe("a valid create", () => {
  test("outbound: 201, saved, the pickup filled in from the default place, the phone normalised", async () => {
    const body = outboundBody(bed.account);
    const response = await create(body);
    assert.equal(response.statusCode, 201, response.body);
    const delivery = json(response);
    assert.equal(delivery.status, "saved");
    assert.equal(delivery.direction, "outbound");
    assert.match(delivery.created_at, TIMESTAMP);
    assert.equal(delivery.client_order_reference, "ORDER-1");
    assert.equal(delivery.price_cents, 700);
    assert.equal(delivery.bring_back_containers, false);
    assert.equal(delivery.original_delivery_id, null);
    assert.equal(delivery.redelivery_id, null);
    assert.deepEqual(delivery.reversed_packages, []);
    assert.deepEqual(delivery.dropoff, {
      slot_starting_at: body.dropoff.slot_starting_at,
      slot_ending_at: body.dropoff.slot_ending_at,
      place: {
        recipient_name: "Jeanne Martin",
        recipient_phone: "+33 6 12 34 56 78",
        recipient_email: "jeanne@example.com",
        company_name: null,
        address: "12 Rue de la Paix",
        postal_code: "75001",
        city: "Paris",
        address_instructions: "Code 1234, 3e étage",
      },
      tracking_url: null,
      eta: null,
      completed_at: null,
      failure_reason: null,
      notes: null,
      completion_signature: null,
      completion_pictures: [],
      completion_text: null,
    });
    // Default settings: the pickup ends when the dropoff starts (gap 0) and lasts 60 minutes.
    const dropoffStart = Date.parse(body.dropoff.slot_starting_at);
    assert.equal(Date.parse(delivery.pickup.slot_ending_at), dropoffStart);
    assert.equal(Date.parse(delivery.pickup.slot_starting_at), dropoffStart - 60 * 60_000);
    assert.equal(delivery.pickup.place.recipient_name, "Warehouse Team");
    assert.equal(delivery.pickup.place.address, "10 Rue de Rivoli");
    assert.deepEqual(delivery.packages, [
      {
        package_type_id: bed.account.packageTypeIds[0],
        type: "Box M",
        name: "Box M",
        amount: 2,
        volume_dm3: 30,
        weight_kg: 5,
        fragility: null,
        temperature: null,
        client_reference: null,
      },
    ]);
    const row = await bed.api.db
      .selectFrom("deliveries")
      .selectAll()
      .where("id", "=", delivery.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.price_tariff_id, 7);
    assert.deepEqual(
      row.price_lines.map((l) => l.amount_cents),
      [500, 200],
    );
  });

  test("the quote request carries the client's task, resolved packages and the request time", async () => {
    const body = outboundBody(bed.account);
    const before = bed.pricing.requests.length;
    assert.equal((await create(body)).statusCode, 201);
    const request = bed.pricing.requests[before];
    assert.equal(request?.account_id, bed.account.accountId);
    assert.equal(request?.direction, "outbound");
    assert.deepEqual(
      request?.tasks,
      [{ kind: "dropoff", ...body.dropoff, place: undefined }].map(({ place: _, ...t }) => t),
    );
    assert.deepEqual(request?.packages, [{ amount: 2, volume_dm3: 30, weight_kg: 5 }]);
  });

  test("inbound: only a pickup; the dropoff at the default place starts when the pickup ends", async () => {
    const pickup = { ...slot(30, 2), place: place(bed.account) };
    const response = await create({
      pickup,
      packages: [{ package_type_id: bed.account.packageTypeIds[0], amount: 1 }],
    });
    assert.equal(response.statusCode, 201, response.body);
    const delivery = json(response);
    assert.equal(delivery.direction, "inbound");
    assert.equal(delivery.dropoff.place.address, "10 Rue de Rivoli");
    assert.equal(Date.parse(delivery.dropoff.slot_starting_at), Date.parse(pickup.slot_ending_at));
    assert.equal(Date.parse(delivery.dropoff.slot_ending_at), Date.parse(pickup.slot_ending_at) + 60 * 60_000);
  });

  test("other: a pickup and a dropoff, both as given", async () => {
    const pickup = { ...slot(20, 1), place: place(bed.account, { recipient_name: "Shop A" }) };
    const dropoff = { ...slot(22, 2), place: place(bed.account, { recipient_name: "Client B" }) };
    const response = await create({
      pickup,
      dropoff,
      packages: [{ package_type_id: bed.account.packageTypeIds[0], amount: 1 }],
    });
    assert.equal(response.statusCode, 201, response.body);
    const delivery = json(response);
    assert.equal(delivery.direction, "other");
    assert.equal(delivery.pickup.place.recipient_name, "Shop A");
    assert.equal(delivery.pickup.slot_starting_at, pickup.slot_starting_at);
    assert.equal(delivery.dropoff.place.recipient_name, "Client B");
  });

  test("the default-place slot follows the account's gap and duration settings", async () => {
    const account = await createTestAccount(bed.api.db);
    await bed.api.db
      .updateTable("accounts")
      .set({ default_task_gap_minutes: 30, default_task_duration_minutes: 90, bring_back_containers: true })
      .where("id", "=", account.accountId)
      .execute();
    const body = outboundBody(account);
    const response = await create(body, account.headers);
    assert.equal(response.statusCode, 201, response.body);
    const delivery = json(response);
    const end = Date.parse(body.dropoff.slot_starting_at) - 30 * 60_000;
    assert.equal(Date.parse(delivery.pickup.slot_ending_at), end);
    assert.equal(Date.parse(delivery.pickup.slot_starting_at), end - 90 * 60_000);
    assert.equal(delivery.bring_back_containers, true, "the account default applies");
  });

  test("a computed pickup never starts in the past: it is shortened to start now", async () => {
    const started = Date.now();
    const response = await create(
      outboundBody(bed.account, { dropoff: { ...slot(0.25, 1), place: place(bed.account) } }),
    );
    assert.equal(response.statusCode, 201, response.body);
    const pickupStart = Date.parse(json(response).pickup.slot_starting_at);
    assert.ok(pickupStart >= started && pickupStart <= Date.now(), "the pickup starts at the request time");
  });

  test("a task given as a saved address number takes that place and a computed slot", async () => {
    const dropoff = { ...slot(26, 2), place: place(bed.account) };
    const response = await create({
      pickup: bed.account.savedAddressIds[0],
      dropoff,
      packages: [{ package_type_id: bed.account.packageTypeIds[0], amount: 1 }],
    });
    assert.equal(response.statusCode, 201, response.body);
    const delivery = json(response);
    assert.equal(delivery.direction, "other");
    assert.deepEqual(delivery.pickup.place, {
      recipient_name: "Store Manager",
      recipient_phone: "+33 4 12 34 56 78",
      recipient_email: null,
      company_name: null,
      address: "5 Place Bellecour",
      postal_code: "69001",
      city: "Lyon",
      address_instructions: null,
    });
    assert.equal(Date.parse(delivery.pickup.slot_ending_at), Date.parse(dropoff.slot_starting_at));
  });

  test("inline packages, with every optional field; bring_back_containers given", async () => {
    const packages = [
      {
        name: "Wine case",
        amount: 3,
        volume_dm3: 12.5,
        weight_kg: 9.2,
        fragility: "fragile",
        temperature: "chilled",
        client_reference: "SKU-42",
      },
      { name: "Bag", amount: 1, volume_dm3: 2, weight_kg: 0.5 },
    ];
    const response = await create(outboundBody(bed.account, { packages, bring_back_containers: true }));
    assert.equal(response.statusCode, 201, response.body);
    const delivery = json(response);
    assert.equal(delivery.bring_back_containers, true);
    assert.equal(delivery.price_cents, 900);
    assert.deepEqual(delivery.packages, [
      { package_type_id: null, type: "custom", ...packages[0] },
      {
        package_type_id: null,
        type: "custom",
        ...packages[1],
        fragility: null,
        temperature: null,
        client_reference: null,
      },
    ]);
  });

  test("a size category alone with amount 1 is accepted", async () => {
    const response = await create(
      outboundBody(bed.account, { packages: [{ package_type_id: bed.account.packageTypeIds[1], amount: 1 }] }),
    );
    assert.equal(response.statusCode, 201, response.body);
    assert.equal(json(response).packages[0].type, "Size L");
  });

  test("timestamps with Z or without milliseconds are accepted and answered in UTC with milliseconds", async () => {
    const start = new Date(Date.now() + 48 * 3600_000);
    start.setUTCMilliseconds(0);
    const end = new Date(start.getTime() + 7200_000);
    const dropoff = {
      slot_starting_at: start.toISOString().replace(".000Z", "Z"),
      slot_ending_at: end.toISOString().replace(".000Z", "+00:00").replace("Z", ""),
      place: place(bed.account),
    };
    const response = await create(outboundBody(bed.account, { dropoff }));
    assert.equal(response.statusCode, 201, response.body);
    assert.equal(json(response).dropoff.slot_starting_at, start.toISOString().replace("Z", "+00:00"));
  });

  test("a slot given with another offset is the same instant", async () => {
    const start = new Date(Date.now() + 50 * 3600_000);
    start.setUTCMinutes(0, 0, 0);
    const local = (date: Date) => `${new Date(date.getTime() + 2 * 3600_000).toISOString().slice(0, 23)}+02:00`;
    const end = new Date(start.getTime() + 3600_000);
    const response = await create(
      outboundBody(bed.account, {
        dropoff: { slot_starting_at: local(start), slot_ending_at: local(end), place: place(bed.account) },
      }),
    );
    assert.equal(response.statusCode, 201, response.body);
    assert.equal(json(response).dropoff.slot_starting_at, start.toISOString().replace("Z", "+00:00"));
  });

  test("an account allowed to omit phones creates without one", async () => {
    const account = await createTestAccount(bed.api.db);
    await bed.api.db
      .updateTable("accounts")
      .set({ recipient_phone_optional: true })
      .where("id", "=", account.accountId)
      .execute();
    const { recipient_phone: _, ...noPhone } = place(account);
    const response = await create(outboundBody(account, { dropoff: { ...slot(), place: noPhone } }), account.headers);
    assert.equal(response.statusCode, 201, response.body);
    assert.equal(json(response).dropoff.place.recipient_phone, null);
  });

  test("the same national number is read in each account's own region", async () => {
    const belgian = await createTestAccount(bed.api.db);
    await bed.api.db
      .updateTable("accounts")
      .set({ phone_default_region: "BE" })
      .where("id", "=", belgian.accountId)
      .execute();
    const phoneOf = async (account: typeof belgian) => {
      const dropoff = { ...slot(), place: place(account, { recipient_phone: "0470 12 34 56" }) };
      const response = await create(outboundBody(account, { dropoff }), account.headers);
      assert.equal(response.statusCode, 201, response.body);
      return json(response).dropoff.place.recipient_phone;
    };
    assert.equal(await phoneOf(belgian), "+32 470 12 34 56");
    assert.equal(await phoneOf(bed.account), "+33 4 70 12 34 56");
    assert.equal(await phoneOf(belgian), "+32 470 12 34 56");
  });

  test("a postal code is trimmed and put in capitals, as zones keep it", async () => {
    await bed.api.db
      .insertInto("delivery_zones")
      .values({ account_id: bed.account.accountId, postal_code: "SW1A 1AA", latitude: 51.5, longitude: -0.14 })
      .execute();
    const response = await create(
      outboundBody(bed.account, { dropoff: { ...slot(), place: place(bed.account, { postal_code: " sw1a 1aa " }) } }),
    );
    assert.equal(response.statusCode, 201, response.body);
    assert.equal(json(response).dropoff.place.postal_code, "SW1A 1AA");
  });

  test("a null price (account without tariff) is stored as null", async () => {
    bed.pricing.mode = "null";
    try {
      const response = await create(outboundBody(bed.account));
      assert.equal(response.statusCode, 201, response.body);
      assert.equal(json(response).price_cents, null);
    } finally {
      bed.pricing.mode = "price";
    }
  });
});

describe("refused creates", () => {
  const dropoffWith = (overrides: Record<string, unknown>) =>
    outboundBody(bed.account, { dropoff: { ...slot(), place: place(bed.account, overrides) } });

  test("no task at all", () =>
    expect422({ packages: [{ name: "Box", amount: 1, volume_dm3: 1, weight_kg: 1 }] }, [
      "dropoff or pickup is required",
    ]));

  test("no package", async () => {
    await expect422(outboundBody(bed.account, { packages: [] }), ["packages must have at least 1 entry"]);
    const { packages: _, ...withoutPackages } = outboundBody(bed.account);
    await expect422(withoutPackages, ["packages is required"]);
  });

  test("an unknown, archived or other account's package type names packages and the unknown type", async () => {
    await expect422(outboundBody(bed.account, { packages: [{ package_type_id: 999999, amount: 1 }] }), [
      "packages[0].package_type_id 999999 is an unknown package type",
    ]);
    const other = await createTestAccount(bed.api.db);
    const foreign = other.packageTypeIds[0];
    await expect422(
      outboundBody(bed.account, {
        packages: [
          { name: "Box", amount: 1, volume_dm3: 1, weight_kg: 1 },
          { package_type_id: foreign, amount: 1 },
        ],
      }),
      [`packages[1].package_type_id ${foreign} is an unknown package type`],
    );
    const archived = await bed.api.db
      .insertInto("package_types")
      .values({
        account_id: bed.account.accountId,
        name: "Old crate",
        volume_dm3: 1,
        weight_kg: 1,
        fragility: null,
        temperature: null,
        archived_at: new Date(),
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    await expect422(outboundBody(bed.account, { packages: [{ package_type_id: archived.id, amount: 1 }] }), [
      `packages[0].package_type_id ${archived.id} is an unknown package type`,
    ]);
  });

  test("a size category with amount 2, or beside another package", async () => {
    const message = "packages must hold exactly one package, with amount 1, when the size category Size L is used";
    const size = bed.account.packageTypeIds[1];
    await expect422(outboundBody(bed.account, { packages: [{ package_type_id: size, amount: 2 }] }), [message]);
    await expect422(
      outboundBody(bed.account, {
        packages: [
          { package_type_id: size, amount: 1 },
          { package_type_id: bed.account.packageTypeIds[0], amount: 1 },
        ],
      }),
      [message],
    );
  });

  test("an inline package missing its required fields, or with an unknown fragility", async () => {
    await expect422(outboundBody(bed.account, { packages: [{ name: "Box", amount: 1 }] }), [
      "packages[0].volume_dm3 is required",
      "packages[0].weight_kg is required",
    ]);
    await expect422(
      outboundBody(bed.account, {
        packages: [{ name: "Box", amount: 1, volume_dm3: 1, weight_kg: 1, fragility: "glass" }],
      }),
      ["packages[0].fragility must be one of not_fragile, fragile, very_fragile, null"],
    );
    await expect422(
      outboundBody(bed.account, { packages: [{ name: "Box", amount: 0, volume_dm3: 1, weight_kg: 1 }] }),
      ["packages[0].amount must be at least 1"],
    );
  });

  test("slots: no offset, end before start, already started, impossible date", async () => {
    const start = inHours(24);
    await expect422(
      outboundBody(bed.account, {
        dropoff: { slot_starting_at: start.slice(0, 23), slot_ending_at: inHours(26), place: place(bed.account) },
      }),
      ["dropoff.slot_starting_at must be an ISO 8601 timestamp with UTC offset (YYYY-MM-DDThh:mm:ss.sss+hh:mm)"],
    );
    await expect422(
      outboundBody(bed.account, {
        dropoff: { slot_starting_at: start, slot_ending_at: start, place: place(bed.account) },
      }),
      ["dropoff.slot_ending_at must be after dropoff.slot_starting_at"],
    );
    await expect422(outboundBody(bed.account, { dropoff: { ...slot(-1, 2), place: place(bed.account) } }), [
      "dropoff.slot_starting_at has already started; slots must start in the future",
    ]);
    await expect422(
      outboundBody(bed.account, {
        dropoff: {
          slot_starting_at: "2031-02-30T10:00:00.000+01:00",
          slot_ending_at: "2031-03-01T10:00:00.000+01:00",
          place: place(bed.account),
        },
      }),
      ["dropoff.slot_starting_at is not a real date"],
    );
    const { slot_ending_at: _, ...withoutEnd } = { ...slot(), place: place(bed.account) };
    await expect422(outboundBody(bed.account, { dropoff: withoutEnd }), ["dropoff.slot_ending_at is required"]);
  });

  test("a pickup slot that ends after the dropoff", () =>
    expect422(
      {
        pickup: { ...slot(30, 1), place: place(bed.account) },
        dropoff: { ...slot(20, 1), place: place(bed.account) },
        packages: [{ package_type_id: bed.account.packageTypeIds[0], amount: 1 }],
      },
      ["dropoff.slot_ending_at must be after pickup.slot_starting_at"],
    ));

  test("a saved address that is unknown or another account's", async () => {
    const other = await createTestAccount(bed.api.db);
    const foreign = other.savedAddressIds[0];
    await expect422(
      {
        pickup: foreign,
        dropoff: { ...slot(), place: place(bed.account) },
        packages: [{ package_type_id: bed.account.packageTypeIds[0], amount: 1 }],
      },
      [`pickup ${foreign} is not a saved address of this account`],
    );
  });

  test("no slot anywhere: a lone saved address number", () =>
    expect422(outboundBody(bed.account, { dropoff: bed.account.savedAddressIds[0] }), [
      "dropoff or pickup must be given as an object with slot_starting_at, slot_ending_at and place",
    ]));

  test("an account without a default place must give both tasks", async () => {
    const account = await createTestAccount(bed.api.db);
    await bed.api.db
      .deleteFrom("places")
      .where("account_id", "=", account.accountId)
      .where("kind", "=", "default")
      .execute();
    const response = await create(outboundBody(account), account.headers);
    assert.equal(response.statusCode, 422);
    assert.deepEqual(json(response), {
      errors: ["pickup is required: this account has no default place to fill it in"],
    });
  });

  test("the recipient phone: missing, or not a phone number", async () => {
    const { recipient_phone: _, ...noPhone } = place(bed.account);
    await expect422(outboundBody(bed.account, { dropoff: { ...slot(), place: noPhone } }), [
      "dropoff.place.recipient_phone is required",
    ]);
    await expect422(dropoffWith({ recipient_phone: "12" }), [
      "dropoff.place.recipient_phone is not a valid phone number (international format such as +33 1 23 45 67 89)",
    ]);
    await expect422(dropoffWith({ recipient_phone: null }), ["dropoff.place.recipient_phone is required"]);
  });

  test("an address holding more than number and street points to address_instructions", async () => {
    const message =
      "dropoff.place.address must hold only the street number and street name; put any other information " +
      "(building, floor, apartment, access code...) in dropoff.place.address_instructions";
    for (const address of [
      "12 Rue de la Paix, 3e étage",
      "12 Rue de la Paix apt 4",
      "12 Rue de la Paix 75002",
      "12 Rue de la Paix\nBâtiment B",
      "12 Rue de la Paix code 1234",
      "Bât C 12 Rue de la Paix",
      "12 Rue de la Paix floor 2",
    ]) {
      await expect422(dropoffWith({ address }), [message]);
    }
  });

  test("street names with dates, bis numbers and commas after the number are accepted", async () => {
    for (const address of ["12 bis, rue du 4 Septembre", "3 Avenue du 8 Mai 1945", "Place Bellecour"]) {
      const response = await create(dropoffWith({ address }));
      assert.equal(response.statusCode, 201, `${address}: ${response.body}`);
    }
  });

  test("a postal code outside the account's zones", () =>
    expect422(dropoffWith({ postal_code: "13001" }), ["dropoff.place.postal_code 13001 is not in a delivered zone"]));

  test("blank texts, unknown fields and wrong types", async () => {
    await expect422(dropoffWith({ recipient_name: "   " }), ["dropoff.place.recipient_name must not be blank"]);
    await expect422(dropoffWith({ recipient_name: "Jeanne\u0000" }), [
      "dropoff.place.recipient_name must not contain the NUL character",
    ]);
    await expect422(dropoffWith({ floor: 3 }), ["dropoff.place.floor is not a known field"]);
    await expect422(outboundBody(bed.account, { status: "delivered" }), ["status is not a known field"]);
    await expect422(outboundBody(bed.account, { dropoff: "tomorrow" }), [
      "dropoff must be an integer or TaskObjectInput",
    ]);
    await expect422(dropoffWith({ recipient_email: "not-an-email" }), [
      "dropoff.place.recipient_email must be a valid e-mail address",
    ]);
    await expect422(outboundBody(bed.account, { client_order_reference: "x".repeat(256) }), [
      "client_order_reference must be at most 255 characters",
    ]);
  });

  test("every problem of a body is listed at once", () =>
    expect422(
      outboundBody(bed.account, {
        dropoff: {
          ...slot(-2, 1),
          place: place(bed.account, { postal_code: "99999", recipient_phone: "abc", address: "1 rue X, apt 2" }),
        },
        packages: [{ package_type_id: 424242, amount: 1 }],
      }),
      [
        "dropoff.slot_starting_at has already started; slots must start in the future",
        "dropoff.place.address must hold only the street number and street name; put any other information (building, floor, apartment, access code...) in dropoff.place.address_instructions",
        "dropoff.place.postal_code 99999 is not in a delivered zone",
        "dropoff.place.recipient_phone is not a valid phone number (international format such as +33 1 23 45 67 89)",
        "packages[0].package_type_id 424242 is an unknown package type",
      ],
    ));

  test("malformed JSON is a 400, another content type a 415, a body over the limit a 413", async () => {
    const headers = { ...bed.account.headers, "content-type": "application/json" };
    const bad = await bed.api.app.inject({
      method: "POST",
      url: "/api/v2/deliveries",
      headers,
      payload: '{"dropoff": ',
    });
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(json(bad), { errors: ["body is not valid JSON"] });
    const text = await bed.api.app.inject({
      method: "POST",
      url: "/api/v2/deliveries",
      headers: { ...bed.account.headers, "content-type": "text/plain" },
      payload: "hello",
    });
    assert.equal(text.statusCode, 415);
    assert.deepEqual(json(text), { errors: ["Content-Type must be application/json"] });
    const big = await bed.api.app.inject({
      method: "POST",
      url: "/api/v2/deliveries",
      headers,
      payload: JSON.stringify({ comments: "x".repeat(300_000) }),
    });
    assert.equal(big.statusCode, 413);
    assert.deepEqual(json(big), { errors: ["body must be at most 262144 bytes"] });
  });

  test("without credentials: 401 before anything is read", async () => {
    const response = await create(outboundBody(bed.account), {});
    assert.equal(response.statusCode, 401);
    assert.deepEqual(json(response), { errors: ["X-User-Email and X-User-Token headers are required"] });
  });

  test("a refused create writes nothing", async () => {
    const count = () => deliveryCount(bed);
    const before = await count();
    await expect422(dropoffWith({ postal_code: "13001" }), [
      "dropoff.place.postal_code 13001 is not in a delivered zone",
    ]);
    assert.equal(await count(), before);
  });
});

describe("pricing", () => {
  test("pricing not answering: 503 with Retry-After, and nothing saved", async () => {
    const counts = async () => {
      const deliveries = await bed.api.db
        .selectFrom("deliveries")
        .select((eb) => eb.fn.countAll().as("n"))
        .executeTakeFirstOrThrow();
      const outbox = await bed.api.db
        .selectFrom("outbox")
        .select((eb) => eb.fn.countAll().as("n"))
        .executeTakeFirstOrThrow();
      return [Number(deliveries.n), Number(outbox.n)];
    };
    const before = await counts();
    bed.pricing.mode = "silent";
    try {
      const response = await create(outboundBody(bed.account));
      assert.equal(response.statusCode, 503);
      assert.equal(response.headers["retry-after"], "5");
      assert.deepEqual(json(response), { errors: ["pricing did not answer within 2000 ms; retry later"] });
    } finally {
      bed.pricing.mode = "price";
    }
    assert.deepEqual(await counts(), before);
  });

  test("quote: the price and direction of a create body, nothing saved", async () => {
    const before = await bed.api.db
      .selectFrom("deliveries")
      .select((eb) => eb.fn.countAll().as("n"))
      .executeTakeFirstOrThrow();
    const response = await bed.api.app.inject({
      method: "POST",
      url: "/api/v2/deliveries/quote",
      headers: bed.account.headers,
      payload: outboundBody(bed.account, { dropoff: { ...slot(24, 0.5), place: place(bed.account) } }),
    });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(json(response), { price_cents: 1000, direction: "outbound" });
    const after = await bed.api.db
      .selectFrom("deliveries")
      .select((eb) => eb.fn.countAll().as("n"))
      .executeTakeFirstOrThrow();
    assert.equal(Number(after.n), Number(before.n));
  });

  test("quote applies every rule of create, and needs credentials", async () => {
    const refused = await bed.api.app.inject({
      method: "POST",
      url: "/api/v2/deliveries/quote",
      headers: bed.account.headers,
      payload: outboundBody(bed.account, { packages: [{ package_type_id: 999999, amount: 1 }] }),
    });
    assert.equal(refused.statusCode, 422);
    assert.deepEqual(json(refused), { errors: ["packages[0].package_type_id 999999 is an unknown package type"] });
    const anonymous = await bed.api.app.inject({
      method: "POST",
      url: "/api/v2/deliveries/quote",
      payload: outboundBody(bed.account),
    });
    assert.equal(anonymous.statusCode, 401);
  });

  test("quote with pricing silent: 503", async () => {
    bed.pricing.mode = "silent";
    try {
      const response = await bed.api.app.inject({
        method: "POST",
        url: "/api/v2/deliveries/quote",
        headers: bed.account.headers,
        payload: outboundBody(bed.account),
      });
      assert.equal(response.statusCode, 503);
      assert.equal(response.headers["retry-after"], "5");
    } finally {
      bed.pricing.mode = "price";
    }
  });
});
