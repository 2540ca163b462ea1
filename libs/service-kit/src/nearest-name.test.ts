import assert from "node:assert/strict";
import { test } from "node:test";
import { editDistance, nearestName } from "./nearest-name.ts";

test("edit distance counts insertions, deletions and substitutions", () => {
  assert.equal(editDistance("kitten", "sitting"), 3);
  assert.equal(editDistance("", "abc"), 3);
  assert.equal(editDistance("same", "same"), 0);
  assert.equal(editDistance("PORT", "PROT"), 2);
});

test("the nearest name within the bound is suggested, else none", () => {
  const known = ["DATABASE_URL", "NATS_URL", "LOG_LEVEL"];
  assert.equal(nearestName("DATABSE_URL", known, 3), "DATABASE_URL");
  assert.equal(nearestName("NAT_URL", known, 3), "NATS_URL");
  assert.equal(nearestName("SOMETHING_ELSE", known, 3), undefined);
});

test("of several near names the nearest wins", () => {
  assert.equal(nearestName("limit", ["limits", "lmit", "limt"], 2), "limits");
  assert.equal(nearestName("lmt", ["limits", "limt"], 2), "limt");
});
