import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { DOCUMENTS, generatedFile, generateTypes } from "../scripts/generate.ts";

for (const name of DOCUMENTS) {
  test(`generated/${name}.ts is what openapi-typescript makes of libs/contracts/openapi/${name}.json`, async () => {
    assert.equal(
      await generateTypes(name),
      readFileSync(generatedFile(name), "utf8"),
      `generated/${name}.ts is stale: npm run generate -w @dos/api-types`,
    );
  });
}
