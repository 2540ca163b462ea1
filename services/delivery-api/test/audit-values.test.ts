import assert from "node:assert/strict";
import { test } from "node:test";
import { auditJson, MAX_VALUE_BYTES, parseAnswer, REDACTED, redactSecrets } from "../src/audit/audit-values.ts";

const SECRET = "dos_staff_0123456789abcdefghijABCDEFGHIJ_-0123456789ab";

test("secrets are redacted by the field's name, at any depth; booleans and nulls under such names stay", () => {
  assert.deepEqual(
    redactSecrets({
      token: "abc",
      secret: "whatever",
      password: "p",
      provider_token: "tracker",
      signing_key: 42,
      nested: [{ api_token: "x", label: "keep" }],
      has_provider_token: true,
      previous_secret_expires_at: "2026-01-01T00:00:00.000+00:00",
      tracker_token: null,
      tokens: [{ id: 1, label: "cli" }],
    }),
    {
      token: REDACTED,
      secret: REDACTED,
      password: REDACTED,
      provider_token: REDACTED,
      signing_key: REDACTED,
      nested: [{ api_token: REDACTED, label: "keep" }],
      has_provider_token: true,
      previous_secret_expires_at: "2026-01-01T00:00:00.000+00:00",
      tracker_token: null,
      tokens: [{ id: 1, label: "cli" }],
    },
  );
});

test("a string shaped like a minted secret is redacted under any name", () => {
  assert.deepEqual(redactSecrets({ note: SECRET, list: ["whsec_abc", "fine"] }), {
    note: REDACTED,
    list: [REDACTED, "fine"],
  });
});

test("a shown-once answer loses every long string but timestamps and what other answers show anyway", () => {
  const answer = {
    id: "7f4709b2-6595-4451-9dc2-bc85d06df52f",
    url: "https://shop.example/hooks/very/long/path",
    label: "console session 1234567890",
    key_material: "c2VjcmV0LXRoYXQtaXMtbG9uZy1lbm91Z2g",
    short: "abc",
    created_at: "2026-11-26T10:46:51.230+00:00",
  };
  assert.deepEqual(redactSecrets(answer, true), { ...answer, key_material: REDACTED });
  assert.deepEqual(redactSecrets(answer, false), answer);
});

test("size is bounded: long strings and lists cut with a marker, then harder, then only a note", () => {
  const long = auditJson({ text: "x".repeat(5000), items: Array.from({ length: 80 }, (_v, i) => i) }) as string;
  const value = JSON.parse(long);
  assert.equal(value.text, `${"x".repeat(1000)}… (4000 more characters)`);
  assert.equal(value.items.length, 51);
  assert.equal(value.items[50], "… (30 more items)");

  // 50 items of 900 characters: over 16 KiB at the first bounds, under at the second.
  const wide = JSON.parse(auditJson(Array.from({ length: 60 }, () => "y".repeat(900))) as string);
  assert.equal(wide.length, 6);
  assert.equal(wide[0], `${"y".repeat(100)}… (800 more characters)`);

  const objectOfMany = Object.fromEntries(Array.from({ length: 2000 }, (_v, i) => [`field_${i}`, "z".repeat(50)]));
  const note = auditJson(objectOfMany) as string;
  assert.ok(Buffer.byteLength(note) <= MAX_VALUE_BYTES);
  assert.deepEqual(JSON.parse(note), { truncated: "over 16384 bytes even when cut; not kept" });

  let deep: unknown = "bottom";
  for (let i = 0; i < 20; i++) deep = { down: deep };
  assert.match(auditJson(deep) as string, /nested too deep/);
  assert.equal(auditJson(null), null);
  assert.equal(auditJson(undefined), null);
});

test("answers are read as JSON only when they are JSON", () => {
  assert.deepEqual(parseAnswer('{"a":1}', "application/json; charset=utf-8"), { a: 1 });
  assert.deepEqual(parseAnswer(Buffer.from("[1]"), "application/json"), [1]);
  assert.equal(parseAnswer("<html>", "text/html"), undefined);
  assert.equal(parseAnswer("", "application/json"), undefined);
  assert.equal(parseAnswer("{broken", "application/json"), undefined);
  assert.equal(parseAnswer({ pipe: () => undefined }, "application/json"), undefined);
});
