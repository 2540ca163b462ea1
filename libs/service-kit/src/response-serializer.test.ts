import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { Type } from "@sinclair/typebox";
import { createHttpApp } from "./http.ts";
import { createLifecycle } from "./lifecycle.ts";
import { createLogger } from "./logger.ts";
import { withNullableUnions } from "./response-serializer.ts";

const Nullable = <T extends ReturnType<typeof Type.String> | ReturnType<typeof Type.Object>>(schema: T) =>
  Type.Union([schema, Type.Null()]);
const Signature = Type.Object({ url: Type.String(), by: Type.String() }, { additionalProperties: false });
const Answer = Type.Object(
  {
    status: Type.Union([Type.Literal("saved"), Type.Literal("done")]),
    note: Nullable(Type.String()),
    signature: Nullable(Signature),
    tags: Type.Array(Nullable(Type.String())),
  },
  { additionalProperties: false },
);

const logger = createLogger("serializer-test", "silent");
const { app } = createHttpApp({ service: "serializer-test", logger, lifecycle: createLifecycle(logger), checks: {} });
app.post("/echo", { schema: { response: { 200: Answer } } }, async (request) => request.body);
before(async () => app.ready());
after(async () => app.close());

const echo = (payload: object) => app.inject({ method: "POST", url: "/echo", payload });

test("nullable fields are answered with their value or null, in schema order", async () => {
  const full = { tags: ["a", null], signature: { by: "Jo", url: "https://x/s.png" }, note: "ring", status: "done" };
  const response = await echo(full);
  assert.equal(response.statusCode, 200);
  assert.equal(
    response.body,
    '{"status":"done","note":"ring","signature":{"url":"https://x/s.png","by":"Jo"},"tags":["a",null]}',
  );
  const empty = await echo({ status: "saved", note: null, signature: null, tags: [] });
  assert.equal(empty.body, '{"status":"saved","note":null,"signature":null,"tags":[]}');
});

test("a field the schema does not name is never answered", async () => {
  const response = await echo({ status: "saved", note: null, signature: { url: "u", by: "b", secret: 1 }, tags: [] });
  assert.equal(response.statusCode, 200);
  assert.deepEqual(response.json().signature, { url: "u", by: "b" });
});

test("the route's own schema is left as written (validation and OpenAPI read it)", () => {
  const before = JSON.stringify(Answer);
  const rewritten = withNullableUnions(Answer) as { properties: Record<string, unknown> };
  assert.equal(JSON.stringify(Answer), before);
  assert.deepEqual(rewritten.properties.note, { type: "string", nullable: true });
  assert.deepEqual(rewritten.properties.status, { type: "string", enum: ["saved", "done"] });
});
