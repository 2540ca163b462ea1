/**
 * Every REST body schema (by convention the exports named `…Input`) bounds each array and
 * string it accepts, so that validation refuses an oversized value by its size alone. The list
 * is read from the module's exports: a new body schema is checked without being added here.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Type } from "@sinclair/typebox";
import { unboundedNumbers, unboundedPaths } from "./bounds.ts";
import * as contracts from "./index.ts";

const bodySchemas = Object.entries(contracts).filter(
  ([name, value]) => name.endsWith("Input") && value !== null && typeof value === "object",
);

test("the body schemas are found from the exports", () => {
  const names = bodySchemas.map(([name]) => name);
  for (const expected of ["DeliveryCreateInput", "DeliveryUpdateInput", "WebhookCreateInput", "GeolocationInput"]) {
    assert.ok(names.includes(expected), `${expected} is not among ${names.join(", ")}`);
  }
});

test("every array and string of every body schema has a maximum size", () => {
  const unbounded = bodySchemas.flatMap(([name, schema]) => unboundedPaths(schema).map((path) => `${name} ${path}`));
  assert.deepEqual(unbounded, []);
});

test("an unbounded array, string or number is found wherever it hides", () => {
  const schema = Type.Object({
    list: Type.Array(Type.Integer(), { maxItems: 3 }),
    nested: Type.Union([Type.Integer(), Type.Object({ names: Type.Array(Type.String({ maxLength: 5 })) })]),
    note: Type.Optional(Type.String()),
    kind: Type.Union([Type.Literal("a"), Type.Literal("b")]),
  });
  assert.deepEqual(unboundedPaths(schema), [
    "#/properties/nested/anyOf/1/properties/names (array without maxItems)",
    "#/properties/note (string without maxLength)",
  ]);
  assert.deepEqual(
    unboundedNumbers(Type.Object({ page: Type.Integer({ minimum: 1 }), n: Type.Number({ maximum: 9 }) })),
    ["#/properties/page"],
  );
});
