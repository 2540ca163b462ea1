/**
 * The commands come from the operator API's document: every operation is one, a route added to
 * the document is a new command with its flags, and argv becomes the request the API expects.
 * The CLI against a running delivery-api: services/delivery-api/test/ops-cli.test.ts.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { commandsOf, type OpenApiDocument } from "../src/commands.ts";
import { loadDocument, runOps } from "../src/ops.ts";
import { buildRequest, UsageError } from "../src/request.ts";

const document = loadDocument();
const commands = commandsOf(document);

test("every operation of the operator API's document is a command named by its operationId", () => {
  const operationIds = Object.values(document.paths).flatMap((item) =>
    Object.values(item as Record<string, { operationId: string }>).map((operation) => operation.operationId),
  );
  assert.ok(operationIds.length >= 60, `${operationIds.length} operations`);
  assert.deepEqual([...commands.keys()].sort(), operationIds.map((id) => id.replace(".", " ")).sort());
  const create = commands.get("accounts create");
  assert.deepEqual([create?.method, create?.path, create?.summary], ["POST", "/accounts", "Create a client account"]);
});

test("a route added to the document is a command, with flags from its parameters and body", async () => {
  const drones: OpenApiDocument = {
    ...document,
    paths: {
      ...document.paths,
      "/ops/v1/accounts/{accountId}/drones/{id}/launch": {
        post: {
          operationId: "drones.launch",
          summary: "Launch a drone",
          parameters: [
            { in: "path", name: "accountId", required: true, schema: { type: "string" } },
            { in: "path", name: "id", required: true, schema: { type: "string" } },
            { in: "query", name: "dry_run", required: false, schema: { type: "boolean" } },
          ],
          requestBody: {
            content: {
              "application/json": {
                schema: {
                  type: "object",
                  required: ["altitude_m", "payload"],
                  properties: {
                    altitude_m: { type: "integer", minimum: 10, maximum: 120, description: "Cruising altitude." },
                    payload: {
                      anyOf: [
                        { const: "parcel", type: "string" },
                        { const: "letter", type: "string" },
                      ],
                    },
                    waypoints: {
                      type: "array",
                      items: {
                        type: "object",
                        properties: { latitude: { type: "number" }, longitude: { type: "number" } },
                      },
                    },
                    note: { anyOf: [{ type: "string" }, { type: "null" }] },
                    options: { type: "object", properties: { lights: { type: "boolean" } } },
                  },
                },
              },
            },
          },
        },
      },
    },
  };
  const launch = commandsOf(drones).get("drones launch");
  assert.ok(launch);
  assert.deepEqual(
    launch.flags.map((flag) => `${flag.name} ${flag.at} ${flag.kind}${flag.required ? " required" : ""}`),
    [
      "account path string required",
      "drone path string required",
      "dry-run query boolean",
      "altitude-m body integer required",
      "payload body string required",
      "waypoints body records",
      "note body string",
      "options.lights body boolean",
    ],
  );
  assert.deepEqual(
    buildRequest(launch, [
      "--account=3",
      "--drone",
      "d 1",
      "--dry-run",
      "--altitude-m",
      "80",
      "--payload",
      "parcel",
      "--waypoints",
      "48.85:2.35,48.86:2.36",
      "--note",
      "",
      "--no-options.lights",
    ]),
    {
      method: "POST",
      path: "/accounts/3/drones/d%201/launch?dry_run=true",
      body: {
        altitude_m: 80,
        payload: "parcel",
        waypoints: [
          { latitude: 48.85, longitude: 2.35 },
          { latitude: 48.86, longitude: 2.36 },
        ],
        note: null,
        options: { lights: false },
      },
    },
  );
  const lines: string[] = [];
  const code = await runOps(
    ["help", "drones", "launch"],
    {},
    { out: (t) => lines.push(t), err: (t) => lines.push(t) },
    drones,
  );
  assert.equal(code, 0);
  assert.match(lines.join(""), /--altitude-m INTEGER\s+Cruising altitude; 10 to 120 \(required\)/);
  assert.match(lines.join(""), /--payload parcel\|letter\s+\(required\)/);
  assert.match(lines.join(""), /--waypoints LATITUDE:LONGITUDE,\.\.\./);
});

test("argv mistakes are usage errors that name the flag, before any request", () => {
  const command = (name: string) => {
    const found = commands.get(name);
    assert.ok(found, name);
    return found;
  };
  const refused = (name: string, argv: string[]) => {
    try {
      buildRequest(command(name), argv);
    } catch (error) {
      assert.ok(error instanceof UsageError, String(error));
      return error.message;
    }
    assert.fail(`${name} ${argv.join(" ")} was accepted`);
  };
  assert.equal(refused("accounts create", ["--compny", "X"]), "unknown flag --compny for 'accounts create'");
  assert.equal(
    refused("accounts create", ["--company-nme", "X"]),
    "unknown flag --company-nme for 'accounts create' (did you mean --company-name?)",
  );
  assert.equal(
    refused("accounts create", ["--company", "X"]),
    "unknown flag --company for 'accounts create' (did you mean --company-name?)",
  );
  assert.equal(refused("accounts get", []), "--account is required (the account id)");
  assert.equal(
    refused("zones remove", ["--account", "1", "--postal-codes", "75001,,75002"]),
    "--postal-codes must be comma-separated values without blanks (got '75001,,75002')",
  );
  assert.equal(refused("rounds create", ["--messenger-id", "1.5"]), "--messenger-id must be an integer (got '1.5')");
  assert.equal(refused("tariffs create", ["--account", "1", "--json", "[1]"]), "--json must be a JSON object");
  assert.equal(
    refused("tariffs create", ["--account", "1", "--json", "{}", "--file", "x.json"]),
    "give --json or --file, not both",
  );
  assert.match(
    refused("tariffs create", ["--account", "1", "--file", "/nowhere/tariff.json"]),
    /^--file cannot be read: ENOENT/,
  );
});

test("the whole body from --json, completed by flags; no body for an operation without one", () => {
  const create = commands.get("tariffs create");
  const start = commands.get("rounds start");
  assert.ok(create && start);
  const request = buildRequest(create, [
    "--account",
    "4",
    "--json",
    '{"base_cents": {"outbound": 900}}',
    "--minimum-cents",
    "500",
  ]);
  assert.deepEqual(request, {
    method: "POST",
    path: "/accounts/4/tariffs",
    body: { base_cents: { outbound: 900 }, minimum_cents: 500 },
  });
  assert.deepEqual(buildRequest(start, ["--round", "7"]), { method: "POST", path: "/rounds/7/start", body: undefined });
});
