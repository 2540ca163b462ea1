import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { startTestApi, type TestApi } from "./fixtures.ts";
import { type OpsClient, opsClient, TIMESTAMP } from "./ops-client.ts";

const warehouse = {
  label: "Warehouse",
  recipient_name: "Warehouse Team",
  recipient_phone: "01 23 45 67 89",
  company_name: "Shop",
  address: "10 Rue de Rivoli",
  postal_code: "75001",
  city: "Paris",
  address_instructions: "Gate B",
};
const customer = {
  label: "Regular customer",
  recipient_name: "Jeanne Martin",
  recipient_phone: "+33612345678",
  recipient_email: "jeanne@example.com",
  address: "3 Rue du Louvre",
  postal_code: "75001",
  city: "Paris",
  latitude: 48.861,
  longitude: 2.341,
};

describe("operator API: default place and saved addresses", () => {
  let api: TestApi;
  let ops: OpsClient;
  let accountId: number;
  let otherAccountId: number;
  before(async () => {
    api = await startTestApi();
    ops = opsClient(api);
    accountId = (await ops.post("/accounts", { company_name: "Shop" })).body.id;
    otherAccountId = (await ops.post("/accounts", { company_name: "Other" })).body.id;
    for (const id of [accountId, otherAccountId]) {
      const zones = await ops.post(`/accounts/${id}/zones`, {
        zones: [
          { postal_code: "75001", latitude: 48.862, longitude: 2.336 },
          { postal_code: "75002", latitude: 48.868, longitude: 2.343 },
        ],
      });
      assert.equal(zones.status, 200);
    }
  });
  after(async () => api.close());

  describe("default place", () => {
    test("404 before it is set; PUT creates it, then replaces it in place", async () => {
      const none = await ops.get(`/accounts/${accountId}/default_place`);
      assert.deepEqual([none.status, none.body], [404, { errors: ["default place not found"] }]);

      const created = await ops.put(`/accounts/${accountId}/default_place`, warehouse);
      assert.equal(created.status, 200);
      assert.match(created.body.created_at, TIMESTAMP);
      assert.deepEqual(created.body, {
        ...warehouse,
        id: created.body.id,
        recipient_phone: "+33 1 23 45 67 89",
        recipient_email: null,
        latitude: null,
        longitude: null,
        created_at: created.body.created_at,
      });

      const replaced = await ops.put(`/accounts/${accountId}/default_place`, {
        recipient_name: "Hub",
        address: "1 Avenue de France",
        postal_code: "94200",
        city: "Ivry-sur-Seine",
      });
      assert.equal(replaced.status, 200);
      assert.equal(replaced.body.id, created.body.id, "one default place per account, same id");
      assert.equal(replaced.body.recipient_phone, null, "optional on the default place; PUT replaces every field");
      assert.equal(replaced.body.postal_code, "94200", "the default place may lie outside the zones (a hub)");
      assert.deepEqual((await ops.get(`/accounts/${accountId}/default_place`)).body, replaced.body);
      const rows = await api.db
        .selectFrom("places")
        .select("id")
        .where("account_id", "=", accountId)
        .where("kind", "=", "default")
        .execute();
      assert.equal(rows.length, 1);
    });

    test("refuses an invalid place with every problem named", async () => {
      const response = await ops.put(`/accounts/${accountId}/default_place`, {
        recipient_name: " ",
        recipient_phone: "12",
        address: "10 Rue de Rivoli",
        postal_code: "75 001!",
        city: "Paris",
        latitude: 48.8,
      });
      assert.equal(response.status, 422);
      assert.deepEqual(
        new Set(response.body.errors),
        new Set([
          "recipient_name must not be blank",
          "recipient_phone is not a valid phone number (international format such as +33 1 23 45 67 89)",
          "postal_code must hold letters, digits, spaces or hyphens only",
          "latitude and longitude must be given together",
        ]),
      );
      const schema = await ops.put(`/accounts/${accountId}/default_place`, { address: 3, latitude: 91, floor: 2 });
      assert.deepEqual(
        new Set(schema.body.errors),
        new Set([
          "recipient_name is required",
          "postal_code is required",
          "city is required",
          "address must be a string",
          "latitude must be at most 90",
          "floor is not a known field",
        ]),
      );
    });

    test("an unknown account is 404", async () => {
      const response = await ops.put("/accounts/999999/default_place", warehouse);
      assert.deepEqual([response.status, response.body], [404, { errors: ["account 999999 not found"] }]);
    });
  });

  describe("saved addresses", () => {
    test("create, list, get, patch and delete", async () => {
      const created = await ops.post(`/accounts/${accountId}/addresses`, customer);
      assert.equal(created.status, 201);
      const id = created.body.id;
      assert.deepEqual(created.body, {
        ...customer,
        id,
        recipient_phone: "+33 6 12 34 56 78",
        company_name: null,
        address_instructions: null,
        created_at: created.body.created_at,
      });
      const listed = await ops.get(`/accounts/${accountId}/addresses`);
      assert.deepEqual(listed.body, [created.body]);
      assert.deepEqual((await ops.get(`/accounts/${accountId}/addresses/${id}`)).body, created.body);

      const patched = await ops.patch(`/accounts/${accountId}/addresses/${id}`, {
        address_instructions: "Code 1234, 3rd floor",
        postal_code: "75002",
        latitude: null,
        longitude: null,
      });
      assert.equal(patched.status, 200);
      assert.deepEqual(patched.body, {
        ...created.body,
        address_instructions: "Code 1234, 3rd floor",
        postal_code: "75002",
        latitude: null,
        longitude: null,
      });

      const deleted = await ops.delete(`/accounts/${accountId}/addresses/${id}`);
      assert.equal(deleted.status, 204);
      assert.equal(deleted.body, undefined);
      const gone = await ops.get(`/accounts/${accountId}/addresses/${id}`);
      assert.deepEqual([gone.status, gone.body], [404, { errors: [`address ${id} not found`] }]);
      assert.equal((await ops.delete(`/accounts/${accountId}/addresses/${id}`)).status, 404);
    });

    test("a saved address must lie in a zone and have a phone, unless the account waives phones", async () => {
      const outside = await ops.post(`/accounts/${accountId}/addresses`, { ...customer, postal_code: "69001" });
      assert.deepEqual(
        [outside.status, outside.body],
        [422, { errors: ["postal_code 69001 is not in a delivery zone of the account; add the zone first"] }],
      );
      const { recipient_phone: _phone, ...withoutPhone } = customer;
      const noPhone = await ops.post(`/accounts/${accountId}/addresses`, withoutPhone);
      assert.deepEqual([noPhone.status, noPhone.body], [422, { errors: ["recipient_phone is required"] }]);

      const waived = (
        await ops.post("/accounts", { company_name: "B2B", settings: { recipient_phone_optional: true } })
      ).body;
      await ops.post(`/accounts/${waived.id}/zones`, {
        zones: [{ postal_code: "75001", latitude: 48.86, longitude: 2.34 }],
      });
      const accepted = await ops.post(`/accounts/${waived.id}/addresses`, withoutPhone);
      assert.equal(accepted.status, 201);
      assert.equal(accepted.body.recipient_phone, null);

      const created = (await ops.post(`/accounts/${accountId}/addresses`, customer)).body;
      const moved = await ops.patch(`/accounts/${accountId}/addresses/${created.id}`, { postal_code: "13001" });
      assert.deepEqual(moved.body, {
        errors: ["postal_code 13001 is not in a delivery zone of the account; add the zone first"],
      });
      const cleared = await ops.patch(`/accounts/${accountId}/addresses/${created.id}`, { recipient_phone: null });
      assert.deepEqual(cleared.body, { errors: ["recipient_phone is required"] });
      const blank = await ops.patch(`/accounts/${accountId}/addresses/${created.id}`, {
        city: null,
        recipient_name: "",
      });
      assert.deepEqual(
        new Set(blank.body.errors),
        new Set(["city must be a string", "recipient_name must not be blank"]),
      );
      assert.deepEqual((await ops.get(`/accounts/${accountId}/addresses/${created.id}`)).body, created);
    });

    test("another account's address is 404 on every route", async () => {
      const theirs = (await ops.post(`/accounts/${otherAccountId}/addresses`, customer)).body;
      const expected = { errors: [`address ${theirs.id} not found`] };
      for (const response of [
        await ops.get(`/accounts/${accountId}/addresses/${theirs.id}`),
        await ops.patch(`/accounts/${accountId}/addresses/${theirs.id}`, { city: "Lyon" }),
        await ops.delete(`/accounts/${accountId}/addresses/${theirs.id}`),
      ]) {
        assert.deepEqual([response.status, response.body], [404, expected]);
      }
      assert.ok(
        !(await ops.get(`/accounts/${accountId}/addresses`)).body.some((a: { id: number }) => a.id === theirs.id),
      );
      assert.equal((await ops.get(`/accounts/${otherAccountId}/addresses/${theirs.id}`)).body.city, "Paris");
      assert.equal((await ops.get(`/accounts/${accountId}/addresses/x1`)).status, 404);
    });

    test("deleting an address that deliveries were made from keeps their copy of the place", async () => {
      const address = (await ops.post(`/accounts/${accountId}/addresses`, customer)).body;
      const delivery = await api.db
        .insertInto("deliveries")
        .values({ account_id: accountId, direction: "outbound", bring_back_containers: false })
        .returning("id")
        .executeTakeFirstOrThrow();
      await api.db
        .insertInto("tasks")
        .values({
          delivery_id: delivery.id,
          kind: "dropoff",
          saved_address_id: address.id,
          slot_starting_at: "2030-01-01T10:00:00Z",
          slot_ending_at: "2030-01-01T12:00:00Z",
          recipient_name: address.recipient_name,
          address: address.address,
          postal_code: address.postal_code,
          city: address.city,
        })
        .execute();
      assert.equal((await ops.delete(`/accounts/${accountId}/addresses/${address.id}`)).status, 204);
      const task = await api.db
        .selectFrom("tasks")
        .selectAll()
        .where("delivery_id", "=", delivery.id)
        .executeTakeFirstOrThrow();
      assert.equal(task.saved_address_id, null);
      assert.deepEqual([task.recipient_name, task.address, task.city], ["Jeanne Martin", "3 Rue du Louvre", "Paris"]);
    });

    test("the default place is not a saved address", async () => {
      const place = (await ops.get(`/accounts/${accountId}/default_place`)).body;
      const response = await ops.get(`/accounts/${accountId}/addresses/${place.id}`);
      assert.deepEqual([response.status, response.body], [404, { errors: [`address ${place.id} not found`] }]);
      assert.equal((await ops.delete(`/accounts/${accountId}/addresses/${place.id}`)).status, 404);
    });
  });
});
