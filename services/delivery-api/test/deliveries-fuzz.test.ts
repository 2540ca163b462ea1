/**
 * Fuzzing the write endpoints (create, update, cancel, redelivery, quote) with 2,400 malformed
 * or hostile bodies: random JSON, valid bodies with one field replaced by something hostile,
 * broken JSON, other content types, absurd numbers, NUL characters, deep nesting, prototype
 * keys. Every answer must be below 500 and in the error shape when refused, and a refused
 * request must leave every table exactly as it was.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import fc from "fast-check";
import { sql } from "kysely";
import { type DeliveriesTestbed, json, outboundBody, slot, startDeliveriesTestbed } from "./delivery-fixtures.ts";
import { OPS_TOKEN } from "./fixtures.ts";

const RUNS = 2400;
let bed: DeliveriesTestbed;
let live: number;
let cancelled: number;
let failed: number;

before(async () => {
  bed = await startDeliveriesTestbed();
  const create = async () => {
    const response = await bed.api.app.inject({
      method: "POST",
      url: "/api/v2/deliveries",
      headers: bed.account.headers,
      payload: outboundBody(bed.account),
    });
    return json(response).id as number;
  };
  const status = (id: number, value: string) =>
    bed.api.app.inject({
      method: "PATCH",
      url: `/ops/v1/deliveries/${id}/status`,
      headers: { authorization: `Bearer ${OPS_TOKEN}` },
      payload: { status: value },
    });
  live = await create();
  cancelled = await create();
  await bed.api.app.inject({
    method: "PATCH",
    url: `/api/v2/deliveries/${cancelled}/cancel`,
    headers: bed.account.headers,
  });
  failed = await create();
  await status(failed, "scheduled");
  await status(failed, "failed");
});
after(async () => bed.close());

/** Everything a request could write, summed up: any change shows. */
async function snapshot(): Promise<string> {
  const { rows } = await sql<Record<string, string>>`
    select
      (select count(*) from deliveries) as deliveries,
      (select coalesce(sum(event_sequence), 0) from deliveries) as sequences,
      (select max(updated_at)::text from deliveries) as updated,
      (select count(*) from tasks) as tasks,
      (select count(*) from delivery_packages) as packages,
      (select count(*) from outbox) as outbox,
      (select count(*) from idempotency_keys) as keys
  `.execute(bed.api.db);
  return JSON.stringify(rows[0]);
}

const hostileString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.constantFrom(
    "'; drop table deliveries; --",
    "\u0000",
    "abc\u0000def",
    "\ud800",
    "<script>alert(1)</script>",
    "../../etc/passwd",
    "%00",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a hostile string, sent as it is
    "${jndi:ldap://x}",
    "2026-02-30T10:00:00.000+01:00",
    "2020-01-01T00:00:00.000+00:00",
    "9999-12-31T23:59:59.999+14:00",
    "+33 6 12 34 56 78",
    "75001",
    " ",
  ),
  fc.string({ minLength: 250, maxLength: 3000 }),
);
const hostileNumber = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -1, 1.5, 1e308, -1e308, 2 ** 53, 2 ** 63, Number.MAX_SAFE_INTEGER + 2, 1e21),
);
const hostileValue = fc.oneof(
  hostileString,
  hostileNumber,
  fc.constantFrom(null, true, false, [], {}, [1, 2], { a: 1 }),
  fc.jsonValue({ maxDepth: 3 }),
);

/** The leaf and branch paths of a valid body, to replace or remove one of them. */
function paths(value: unknown, prefix: Array<string | number> = []): Array<Array<string | number>> {
  if (value === null || typeof value !== "object") return [prefix];
  const entries = Array.isArray(value) ? value.map((v, i) => [i, v] as const) : Object.entries(value);
  return [prefix, ...entries.flatMap(([key, child]) => paths(child, [...prefix, key]))];
}
function mutate(body: Record<string, unknown>, path: Array<string | number>, value: unknown, remove: boolean) {
  if (path.length === 0) return remove ? {} : value;
  const copy = structuredClone(body) as Record<string | number, unknown>;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  const last = path[path.length - 1] as string | number;
  if (remove) delete node[last];
  else node[last] = value;
  return copy;
}

const deep = (depth: number) => `${'{"comments":'.repeat(1)}${"[".repeat(depth)}${"]".repeat(depth)}}`;
const rawBodies = fc.oneof(
  fc.string({ maxLength: 60 }),
  fc.constantFrom(
    '{"dropoff": ',
    "{'a': 1}",
    '{"__proto__": {"polluted": true}}',
    '{"constructor": {"prototype": {"polluted": true}}}',
    "[".repeat(5000),
    deep(20_000),
    '{"packages": [{"amount": 1e999}]}',
    "null",
    "NaN",
    '"just a string"',
    "\u0000",
  ),
);

type Case = { target: string; method: "POST" | "PATCH" | "PUT"; url: string };
const targets = (): Case[] => [
  { target: "create", method: "POST", url: "/api/v2/deliveries" },
  { target: "quote", method: "POST", url: "/api/v2/deliveries/quote" },
  { target: "update", method: "PATCH", url: `/api/v2/deliveries/${live}` },
  { target: "update", method: "PUT", url: `/api/v2/deliveries/${live}` },
  { target: "cancel", method: "PATCH", url: `/api/v2/deliveries/${cancelled}/cancel` },
  { target: "redelivery", method: "POST", url: `/api/v2/deliveries/${failed}/redelivery` },
  { target: "unknown id", method: "PATCH", url: "/api/v2/deliveries/abc%00" },
];

test(`${RUNS} malformed or hostile bodies: no 5xx, the error shape, nothing written when refused`, async () => {
  const valid = outboundBody(bed.account, {
    dropoff: { ...slot(), place: { ...outboundBody(bed.account).dropoff.place } },
  });
  const validPaths = paths(valid);
  const request = fc.record({
    target: fc.constantFrom(...targets()),
    body: fc.oneof(
      {
        weight: 4,
        arbitrary: fc
          .tuple(fc.constantFrom(...validPaths), hostileValue, fc.boolean())
          .map(([path, value, remove]) => ({ kind: "json" as const, value: mutate(valid, path, value, remove) })),
      },
      { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((value) => ({ kind: "json" as const, value })) },
      { weight: 2, arbitrary: rawBodies.map((text) => ({ kind: "raw" as const, value: text })) },
    ),
    contentType: fc.oneof(
      { weight: 8, arbitrary: fc.constant("application/json") },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          "text/plain",
          "application/x-www-form-urlencoded",
          "application/xml",
          "multipart/form-data; boundary=x",
          "application/json; charset=latin1",
        ),
      },
    ),
    idempotencyKey: fc.option(fc.oneof(fc.string({ maxLength: 300 }), fc.uuid()), { freq: 4 }),
  });

  const statuses = new Map<number, number>();
  let refused = 0;
  await fc.assert(
    fc.asyncProperty(request, async ({ target, body, contentType, idempotencyKey }) => {
      const headers: Record<string, string> = { ...bed.account.headers, "content-type": contentType };
      if (idempotencyKey !== null) headers["idempotency-key"] = idempotencyKey;
      const payload = body.kind === "raw" ? body.value : JSON.stringify(body.value);
      const before = await snapshot();
      const response = await bed.api.app.inject({ method: target.method, url: target.url, headers, payload });
      statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
      const context = `${target.method} ${target.url} ${contentType} ${payload.slice(0, 300)} → ${response.statusCode} ${response.body.slice(0, 300)}`;
      assert.ok(response.statusCode < 500, context);
      if (response.statusCode >= 400) {
        refused++;
        const answer = json(response);
        assert.deepEqual(Object.keys(answer), ["errors"], context);
        assert.ok(Array.isArray(answer.errors) && answer.errors.length > 0, context);
        assert.ok(
          answer.errors.every((e: unknown) => typeof e === "string" && e.length > 0),
          context,
        );
        assert.equal(await snapshot(), before, `a refused request wrote something: ${context}`);
      }
    }),
    { numRuns: RUNS, endOnFailure: true },
  );
  // The run must mostly exercise refusals, and each kind of refusal must have shown up.
  assert.ok(refused > RUNS * 0.8, `only ${refused} refusals`);
  for (const status of [400, 404, 415, 422])
    assert.ok(statuses.has(status), `no ${status} in ${JSON.stringify([...statuses])}`);
});
