/**
 * The API documents as files consumers build from (libs/contracts/openapi/): what the routes
 * produce, valid by Redocly's recommended rules with an operationId on every operation; and the
 * operator API's document, served behind the operator token.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { DOCUMENT_FILES, DOCUMENTS_DIR, renderDocuments } from "../src/openapi/write-documents.ts";
import { OPS_TOKEN, startTestApi, type TestApi } from "./fixtures.ts";

const REDOCLY = join(createRequire(import.meta.url).resolve("@redocly/cli/package.json"), "../bin/cli.js");
const LINT_CONFIG = join(DOCUMENTS_DIR, "redocly.yaml");

let api: TestApi;
before(async () => {
  api = await startTestApi();
});
after(async () => api.close());

// biome-ignore lint/suspicious/noExplicitAny: an OpenAPI document, read field by field
type Doc = any;

/** Redocly's problems in `file`, each as `<rule> at <file>#<JSON pointer>: <message>`. */
function lint(file: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [REDOCLY, "lint", "--config", LINT_CONFIG, "--format=json", file],
      // No telemetry and no update check: the lint reads the files and nothing else.
      { env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" }, timeout: 60_000 },
      (error, stdout, stderr) => {
        try {
          const report = JSON.parse(stdout) as {
            problems: Array<{
              ruleId: string;
              message: string;
              location: Array<{ source: { ref: string }; pointer: string }>;
            }>;
          };
          resolve(
            report.problems.map((p) => {
              const where = p.location[0];
              return `${p.ruleId} at ${where?.source.ref.split("/").pop()}${where?.pointer}: ${p.message}`;
            }),
          );
        } catch {
          reject(new Error(`redocly lint gave no report (${error?.message}): ${stderr.slice(0, 2000)}`));
        }
      },
    );
  });
}

test("the committed documents are what the routes produce", () => {
  const produced = renderDocuments(api.app);
  for (const [name, file] of Object.entries(DOCUMENT_FILES)) {
    const committed = readFileSync(join(DOCUMENTS_DIR, file), "utf8");
    const routes = produced[name as keyof typeof DOCUMENT_FILES];
    if (committed === routes) continue;
    const committedLines = committed.split("\n");
    const routeLines = routes.split("\n");
    const line = committedLines.findIndex((text, i) => text !== routeLines[i]);
    assert.fail(
      `libs/contracts/openapi/${file} differs from the routes at line ${line + 1} ` +
        `(file: ${JSON.stringify(committedLines[line])}, routes: ${JSON.stringify(routeLines[line])}): ` +
        "run `npm run openapi -w @dos/delivery-api` and commit the result",
    );
  }
});

test("both documents pass the lint: recommended rules, an operationId everywhere, no unresolved $ref", async () => {
  for (const file of Object.values(DOCUMENT_FILES)) assert.deepEqual(await lint(join(DOCUMENTS_DIR, file)), []);
});

test("the lint refuses a document without an operationId or with a dangling $ref, naming rule and path", async () => {
  const doc: Doc = JSON.parse(readFileSync(join(DOCUMENTS_DIR, DOCUMENT_FILES.ops), "utf8"));
  delete doc.paths["/ops/v1/accounts"].get.operationId;
  doc.paths["/ops/v1/accounts"].post.responses["201"] = {
    description: "Created.",
    content: { "application/json": { schema: { $ref: "#/components/schemas/Nowhere" } } },
  };
  const broken = join(mkdtempSync(join(tmpdir(), "openapi-")), "broken.json");
  writeFileSync(broken, JSON.stringify(doc));
  const problems = await lint(broken);
  assert.ok(
    problems.includes(
      "operation-operationId at broken.json#/paths/~1ops~1v1~1accounts/get/operationId: " +
        "Operation object should contain `operationId` field.",
    ),
    problems.join("\n"),
  );
  assert.ok(
    problems.some((p) => p.startsWith("no-unresolved-refs at broken.json#/paths/~1ops~1v1~1accounts/post/")),
    problems.join("\n"),
  );
});

test("/ops/v1/openapi.json: the operator API's document, behind the operator token", async () => {
  const refused = await api.app.inject({ method: "GET", url: "/ops/v1/openapi.json" });
  assert.equal(refused.statusCode, 401);
  const response = await api.app.inject({
    method: "GET",
    url: "/ops/v1/openapi.json",
    headers: { authorization: `Bearer ${OPS_TOKEN}` },
  });
  assert.equal(response.statusCode, 200);
  const doc: Doc = response.json();
  assert.equal(doc.openapi, "3.1.0");
  assert.deepEqual(doc.security, [{ operatorToken: [] }]);
  const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods as Record<string, { operationId: string }>).map(([method, op]) => ({ path, method, op })),
  );
  assert.ok(
    operations.every(({ path }) => path.startsWith("/ops/v1/")),
    "only operator routes",
  );
  const ids = operations.map(({ op }) => op.operationId);
  assert.equal(new Set(ids).size, ids.length, "operationIds are unique");
  for (const id of [
    "accounts.create",
    "tokens.revoke",
    "zones.add",
    "tariffs.create",
    "webhooks.enable",
    "rounds.start",
  ]) {
    assert.ok(ids.includes(id), `${id} missing from ${ids.join(", ")}`);
  }
  // The body schemas are the ones that validate the requests.
  const createAccount = doc.paths["/ops/v1/accounts"].post;
  assert.deepEqual(createAccount.requestBody.content["application/json"].schema.required, ["company_name"]);
  assert.equal(
    createAccount.responses["401"].content["application/json"].schema.$ref,
    "#/components/schemas/ErrorBody",
  );
  const setStatus = doc.paths["/ops/v1/deliveries/{delivery_id}/status"].patch;
  assert.equal(setStatus.responses["200"].content["application/json"].schema.$ref, "#/components/schemas/Delivery");
});

test("every operator operation declares its success answer, so generated clients need no hand-written type", () => {
  const doc: Doc = JSON.parse(renderDocuments(api.app).ops);
  const undeclared: string[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods as Record<string, Doc>)) {
      const successes = Object.entries(op.responses as Record<string, Doc>).filter(([status]) =>
        status.startsWith("2"),
      );
      // JSON, or the images of GET /media/{id}: each answer's type has its schema.
      const declared = successes.some(
        ([status, answer]) =>
          status === "204" ||
          Object.values((answer.content ?? {}) as Record<string, Doc>).some((type) => type.schema !== undefined),
      );
      if (!declared) undeclared.push(`${method.toUpperCase()} ${path}`);
    }
  }
  assert.deepEqual(undeclared, []);
  // The statement's answer, which the console once declared by hand, is a shared component.
  const statement = doc.paths["/ops/v1/accounts/{accountId}/statement"].get.responses["200"];
  assert.equal(statement.content["application/json"].schema.$ref, "#/components/schemas/Statement");
  assert.equal(doc.components.schemas.Statement.properties.deliveries.items.$ref, "#/components/schemas/StatementLine");
});

test("shared components, declared headers and an error example in the client document", async () => {
  const doc: Doc = (await api.app.inject({ method: "GET", url: "/api/v2/openapi.json" })).json();
  const create = doc.paths["/api/v2/deliveries"].post;
  assert.equal(create.operationId, "deliveries.create");
  assert.equal(create.responses["201"].content["application/json"].schema.$ref, "#/components/schemas/Delivery");
  assert.equal(doc.components.schemas.Delivery.title, "Delivery");
  // The contracts' examples: the request's, and the error body's on every error answer.
  assert.equal(create.requestBody.content["application/json"].example.client_order_reference, "ORDER-1042");
  assert.deepEqual(create.responses["422"].content["application/json"].example, {
    errors: ["recipient_phone is not a valid phone number"],
  });
  assert.equal(create.responses["422"].description, "Refused: each message names the field and the problem.");
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods as Record<string, Doc>)) {
      for (const [status, answer] of Object.entries(op.responses as Record<string, Doc>)) {
        const where = `${method.toUpperCase()} ${path} ${status}`;
        assert.equal(answer.headers?.RateLimit?.$ref, "#/components/headers/RateLimit", where);
        assert.equal(answer.headers?.["RateLimit-Policy"]?.$ref, "#/components/headers/RateLimit-Policy", where);
      }
      assert.equal(op.responses["429"].headers["Retry-After"].$ref, "#/components/headers/Retry-After");
    }
  }
  assert.ok(doc.paths["/api/v2/webhooks"].post.responses["201"].headers.location, "a created webhook's Location");
});
