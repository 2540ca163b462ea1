/**
 * A body's validation costs what the route's limits allow, whatever was sent: an oversized array
 * or string is refused by its size, the answer lists at most 20 problems and never repeats an
 * attacker-sized value, and a number in a query string beyond its bound is a 422.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { DeliveryCreateInput, DeliveryListQuery, WebhookCreateInput } from "@dos/contracts";
import { Type } from "@sinclair/typebox";
import { holdsAtMost } from "./bounded-validation.ts";
import { createHttpApp } from "./http.ts";
import { jsonShapeProblem } from "./json-shape.ts";
import { createLifecycle } from "./lifecycle.ts";
import { createLogger } from "./logger.ts";

/** The walk as the body parsers call it, on the raw bytes. */
const shape = (text: string) => jsonShapeProblem(Buffer.from(text));

const logger = createLogger("bounded-test", "silent");
const newApp = () =>
  createHttpApp({ service: "bounded-test", logger, lifecycle: createLifecycle(logger), checks: {}, bodyLimit: 4 << 20 })
    .app;

describe("bounded validation", () => {
  const app = newApp();
  app.post("/deliveries", { schema: { body: DeliveryCreateInput } }, async () => ({ ok: true }));
  app.post("/webhooks", { schema: { body: WebhookCreateInput } }, async () => ({ ok: true }));
  app.get("/deliveries", { schema: { querystring: DeliveryListQuery } }, async (request) => request.query);
  before(() => app.ready());
  after(() => app.close());

  const post = async (url: string, body: unknown) => {
    const payload = JSON.stringify(body);
    const started = performance.now();
    const response = await app.inject({
      method: "POST",
      url,
      payload,
      headers: { "content-type": "application/json" },
    });
    return { response, ms: performance.now() - started, bytes: payload.length };
  };

  // Up to 10,000 entries the route's validator names its own maxItems; beyond, the walk before
  // parsing names the bound every body has.
  for (const [count, most] of [
    [9_000, 100],
    [16_000, 10_000],
    [100_000, 10_000],
  ] as const) {
    test(`${count} numbers where packages are expected: one size problem, at once`, async () => {
      const { response, ms, bytes } = await post("/deliveries", { packages: Array.from({ length: count }, () => 1) });
      console.log(
        `${count} packages (${bytes} bytes): ${response.statusCode} in ${ms.toFixed(1)} ms, ${response.body.length} bytes`,
      );
      assert.equal(response.statusCode, 422);
      assert.deepEqual(response.json(), { errors: [`packages must have at most ${most} entries`] });
      // Was 6.6 s (16,000) and about 11 minutes (100,000) on a quiet machine; now a few ms there.
      // The bound leaves room for a loaded 2-core machine.
      assert.ok(ms < 2000, `${ms} ms`);
    });
  }

  test("a thousand unknown event kinds: refused by their count", async () => {
    const { response } = await post("/webhooks", { url: "https://x.test/h", events: Array(1000).fill("nope") });
    assert.equal(response.statusCode, 422);
    assert.deepEqual(response.json(), {
      errors: [`events must have at most ${WebhookCreateInput.properties.events.anyOf[0].maxItems} entries`],
    });
  });

  test("a small body with many problems lists 20 of them and counts the rest", async () => {
    const packages = Array.from({ length: 60 }, () => ({ package_type_id: 1, amount: 0 }));
    const { response } = await post("/deliveries", { packages: packages.slice(0, 100) });
    const { errors } = response.json() as { errors: string[] };
    assert.equal(response.statusCode, 422);
    assert.equal(errors.length, 21);
    assert.equal(errors[0], "packages[0].amount must be at least 1");
    assert.equal(errors[19], "packages[19].amount must be at least 1");
    assert.equal(errors[20], "and 40 more problems");
  });

  test("each package's union is judged on its own: one message per bad package", async () => {
    const inline = { name: "Box", amount: 1, volume_dm3: 2, weight_kg: 1 };
    const { response } = await post("/deliveries", {
      packages: [
        inline,
        { ...inline, weight_kg: undefined },
        { package_type_id: 3, amount: 1 },
        { package_type_id: 0, amount: 1 },
      ],
    });
    assert.deepEqual(response.json(), {
      errors: ["packages[1].weight_kg is required", "packages[3].package_type_id must be at least 1"],
    });
  });

  test("a long unknown field name is not repeated whole", async () => {
    const key = "k".repeat(100_000);
    const { response } = await post("/deliveries", { packages: [{ package_type_id: 1, amount: 1 }], [key]: 1 });
    assert.equal(response.statusCode, 422);
    assert.ok(response.body.length < 300, response.body);
    assert.match(response.body, /k{64}… is not a known field/);
  });

  test("a huge body whose first problem is not its size is answered with that problem only", async () => {
    const many = Array.from({ length: 20_000 }, (_, i) => ({ [`field${i}`]: i }));
    const { response, ms } = await post("/deliveries", {
      comments: 5,
      packages: [{ package_type_id: 1, amount: 1 }],
      extra: many,
    });
    assert.equal(response.statusCode, 422);
    assert.equal((response.json() as { errors: string[] }).errors.length, 1, response.body);
    // Parsing 450 KB of JSON is most of it; the full report over 40,000 values would be seconds.
    assert.ok(ms < 1000, `${ms} ms`);
  });

  test("a page number beyond its maximum is a 422 naming it, not a database error", async () => {
    const response = await app.inject({ method: "GET", url: "/deliveries?page=99999999999999999999" });
    assert.equal(response.statusCode, 422);
    assert.deepEqual(response.json(), { errors: ["querystring.page must be at most 10000"] });
  });
});

test("a route whose body or query schema is unbounded does not start", async () => {
  for (const [part, schema] of [
    ["body", Type.Object({ tags: Type.Array(Type.String({ maxLength: 9 })) })],
    ["body", Type.Object({ note: Type.String() })],
    ["querystring", Type.Object({ page: Type.Integer({ minimum: 1 }) })],
  ] as const) {
    const app = newApp();
    app.post("/things", { schema: { [part]: schema } }, async () => ({}));
    await assert.rejects(async () => {
      await app.ready();
    }, /POST \/things: the (body|querystring) schema is unbounded at #\/properties\/\w+/);
    await app.close();
  }
});

test("values are counted without walking past the limit", () => {
  assert.equal(holdsAtMost({ a: [1, 2, { b: 3 }] }, 6), true);
  assert.equal(holdsAtMost({ a: [1, 2, { b: 3 }] }, 5), false);
  assert.equal(holdsAtMost(Array(1e6).fill(0), 2000), false);
});

test("a body nested deeper than the limit is refused before it is parsed", async () => {
  const app = newApp();
  app.post("/deliveries", { schema: { body: DeliveryCreateInput } }, async () => ({ ok: true }));
  await app.ready();
  const depth = 120_000;
  const payload = `{"packages":${"[".repeat(depth)}${"]".repeat(depth)}}`;
  const started = performance.now();
  const response = await app.inject({
    method: "POST",
    url: "/deliveries",
    payload,
    headers: { "content-type": "application/json" },
  });
  const ms = performance.now() - started;
  console.log(`nesting ${depth} deep (${payload.length} bytes): ${response.statusCode} in ${ms.toFixed(1)} ms`);
  assert.equal(response.statusCode, 422);
  assert.deepEqual(response.json(), { errors: ["body must not nest more than 32 levels deep"] });
  // The message proves the count ran before the parser; the bound is for a loaded machine.
  assert.ok(ms < 1000, `${ms} ms`);
  await app.close();
});

test("nesting, fields and objects in an array are counted outside strings only, and named", () => {
  const deep = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;
  assert.equal(shape(deep(32)), null);
  assert.equal(shape(deep(33)), "body must not nest more than 32 levels deep");
  assert.equal(shape(`{"a":"${"[".repeat(50)}\\"{{{"}`), null);
  const object = (n: number) => `{${Array.from({ length: n }, (_, i) => `"k${i}":1`).join(",")}}`;
  assert.equal(shape(object(256)), null);
  assert.equal(shape(object(257)), "body must not have more than 256 fields");
  assert.equal(shape(`{"zones":[{"a":1},{"b":[1,2]},${object(300)}]}`), "zones[2] must not have more than 256 fields");
  const objects = (n: number) => `[${Array(n).fill('{"a":1}').join(",")}]`;
  assert.equal(shape(`{"packages":${objects(10_000)}}`), null);
  assert.equal(shape(`{"x":{"y":"}"},"packages":${objects(10_001)}}`), "packages must have at most 10000 entries");
  // Numbers count as entries too; commas inside strings do not.
  assert.equal(shape(`{"packages":[${"1,".repeat(9_999)}1]}`), null);
  assert.equal(shape(`{"packages":[${"1,".repeat(10_000)}1]}`), "packages must have at most 10000 entries");
  // Read as bytes: a multi-byte character neither hides nor fakes a bracket, and names keep theirs.
  assert.equal(shape(`{"Zoné":{"ß€😀":[${'"é,[",'.repeat(10_000)}1]}}`), "Zoné.ß€😀 must have at most 10000 entries");
  assert.equal(shape(`{"a":{"b":[["x",${'"y",'.repeat(20_000)}"z"]]}}`), "a.b[0] must have at most 10000 entries");
  assert.equal(shape(`{"a":"${",".repeat(20_000)}"}`), null);
});

test("an object of thousands of fields, or an array of thousands of objects, is refused before it is parsed", async () => {
  const app = newApp();
  app.post("/deliveries", { schema: { body: DeliveryCreateInput } }, async () => ({ ok: true }));
  await app.ready();
  for (const [payload, message] of [
    [`{${Array.from({ length: 20_000 }, (_, i) => `"k${i}":1`).join(",")}}`, "body must not have more than 256 fields"],
    [`{"packages":[${'{"a":1},'.repeat(30_000)}{"a":1}]}`, "packages must have at most 10000 entries"],
  ]) {
    const response = await app.inject({
      method: "POST",
      url: "/deliveries",
      payload,
      headers: { "content-type": "application/json" },
    });
    assert.equal(response.statusCode, 422);
    assert.deepEqual(response.json(), { errors: [message] });
  }
  await app.close();
});

test("a route whose schema allows more than a body may hold is refused when compiled", async () => {
  const app = newApp();
  app.post(
    "/zones",
    { schema: { body: Type.Array(Type.Integer({ maximum: 9 }), { maxItems: 20_000 }) } },
    async () => ({}),
  );
  await assert.rejects(async () => {
    await app.ready();
  }, /maxItems 20000 over the 10000 entries a body may hold/);
  await app.close();
});
