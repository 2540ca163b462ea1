import assert from "node:assert/strict";
import { test } from "node:test";
import { jsonBody } from "./validation.ts";

const message = (text: string) => ({ json: () => JSON.parse(text) as unknown });

test("jsonBody reads a JSON body, and answers undefined for an empty or broken one", () => {
  assert.deepEqual(jsonBody(message('{"a":1}')), { a: 1 });
  assert.equal(jsonBody(message("")), undefined);
  assert.equal(jsonBody(message("{not json")), undefined);
});
