import assert from "node:assert/strict";
import { test } from "node:test";
import { counterpartOf, pathOf, resourceOf } from "../src/audit/audit-resource.ts";

test("the resource is the route's last parameter and the names before it", () => {
  assert.deepEqual(resourceOf("/vehicles/:id", { id: "7" }, null, false), { type: "vehicles", id: "7" });
  assert.deepEqual(resourceOf("/rounds/:id/start", { id: "3" }, null, false), { type: "rounds", id: "3" });
  assert.deepEqual(resourceOf("/accounts/:accountId/zones", { accountId: "4" }, null, false), {
    type: "accounts",
    id: "4",
  });
  assert.deepEqual(
    resourceOf(
      "/accounts/:accountId/users/:userId/tokens/:tokenId",
      { accountId: "1", userId: "2", tokenId: "9" },
      null,
      false,
    ),
    { type: "accounts/users/tokens", id: "9" },
  );
  assert.deepEqual(resourceOf("/fleet/rebuild", {}, null, false), { type: "fleet/rebuild", id: null });
});

test("`me` after staff is the caller's own id", () => {
  assert.deepEqual(resourceOf("/staff/me/tokens/:tokenId", { tokenId: "5" }, 12, false), {
    type: "staff/tokens",
    id: "5",
  });
  assert.deepEqual(resourceOf("/staff/me/tokens", {}, 12, true, 44), { type: "staff/tokens", id: "44" });
  assert.deepEqual(resourceOf("/staff/:id/tokens", { id: "3" }, null, true, 45), { type: "staff/tokens", id: "45" });
});

test("a create is every name of the route, with the answer's id once known", () => {
  assert.deepEqual(resourceOf("/accounts/:accountId/users", { accountId: "1" }, null, true), {
    type: "accounts/users",
    id: null,
  });
  assert.deepEqual(resourceOf("/accounts", {}, null, true, 8), { type: "accounts", id: "8" });
  assert.deepEqual(resourceOf("/accounts/:accountId/webhooks", { accountId: "1" }, null, true, "a-uuid"), {
    type: "accounts/webhooks",
    id: "a-uuid",
  });
});

test("the GET counterpart is the longest prefix with a GET that holds a parameter, or the route itself", () => {
  const gets = new Set([
    "/vehicles",
    "/vehicles/:id",
    "/rounds/:id",
    "/accounts/:accountId/zones",
    "/staff/me",
    "/staff/me/tokens",
    "/staff/:id/tokens",
    "/accounts",
  ]);
  const has = (route: string) => gets.has(route);
  assert.equal(counterpartOf("/vehicles/:id", has), "/vehicles/:id");
  assert.equal(counterpartOf("/rounds/:id/start", has), "/rounds/:id");
  assert.equal(counterpartOf("/rounds/:id/deliveries/:deliveryId", has), "/rounds/:id");
  assert.equal(counterpartOf("/accounts/:accountId/zones/:postalCode", has), "/accounts/:accountId/zones");
  assert.equal(counterpartOf("/staff/me/tokens/:tokenId", has), "/staff/me/tokens");
  assert.equal(counterpartOf("/staff/:id/tokens/:tokenId", has), "/staff/:id/tokens");
  // Never a whole collection for a route under it without its own parameter.
  assert.equal(counterpartOf("/fleet/rebuild", has), null);
  assert.equal(counterpartOf("/tasks/:id/complete", has), null);
  assert.equal(counterpartOf("/accounts", has), "/accounts");
});

test("a pattern's path, parameters encoded", () => {
  assert.equal(pathOf("/rounds/:id/deliveries/:deliveryId", { id: "1", deliveryId: "2" }), "/rounds/1/deliveries/2");
  assert.equal(
    pathOf("/accounts/:accountId/zones/:postalCode", { accountId: "1", postalCode: "A B/1" }),
    "/accounts/1/zones/A%20B%2F1",
  );
});
