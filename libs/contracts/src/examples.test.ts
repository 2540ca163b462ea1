/**
 * The examples a schema carries (they reach the OpenAPI documents and the docs page) are valid by
 * that schema: an example that the API would refuse is worse than none.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { TSchema } from "@sinclair/typebox";
import * as contracts from "./index.ts";
import { compileValidator } from "./validation.ts";

test("every example of an exported schema passes that schema", () => {
  const withExamples = Object.entries(contracts as Record<string, unknown>).filter(
    (entry): entry is [string, TSchema & { examples: unknown[] }] =>
      typeof entry[1] === "object" && entry[1] !== null && Array.isArray((entry[1] as { examples?: unknown }).examples),
  );
  // The documents' request and error examples at least; any schema that gains one is checked too.
  const names = withExamples.map(([name]) => name);
  for (const name of ["DeliveryCreateInput", "ErrorBody", "WebhookCreateInput"]) {
    assert.ok(names.includes(name), `${name} carries an example`);
  }
  for (const [name, schema] of withExamples) {
    const validate = compileValidator(schema);
    for (const example of schema.examples) {
      const checked = validate(example);
      assert.ok(checked.ok, `${name}: ${JSON.stringify(checked.ok ? [] : checked.errors)}`);
    }
  }
});
