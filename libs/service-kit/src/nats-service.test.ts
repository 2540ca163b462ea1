/**
 * A JSON service on the machine's NATS, asked as another service asks it: its answer, and each
 * kind of refusal as an error reply whose code is the HTTP status and whose body an ErrorBody —
 * never a silent timeout.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { headers as natsHeaders } from "@nats-io/nats-core";
import { Type } from "@sinclair/typebox";
import { HttpError } from "./errors.ts";
import { createLogger } from "./logger.ts";
import { connectNats, type NatsHandle } from "./nats.ts";
import { type JsonService, startJsonService } from "./nats-service.ts";
import { randomNamespace, testInfra } from "./testing.ts";

const logger = createLogger("nats-service-test", process.env.TEST_LOG_LEVEL ?? "silent");
const subject = (name: string) => `${prefix}.${name}`;
const prefix = randomNamespace();
let nats: NatsHandle;
let json: JsonService;

before(async () => {
  nats = await connectNats(testInfra().natsUrl, "nats-service-test", logger);
  json = await startJsonService({
    nc: nats.nc,
    name: `${prefix}-svc`,
    version: "1.0.0",
    description: "test",
    queue: `${prefix}-q`,
    logger,
    tracer: "nats-service-test",
    unavailable: "storage is down, retry later",
  });
  json.endpoint<{ n: number }>("double", subject("double"), (request) => ({ n: request.n * 2 }), {
    ...Type.Object({ n: Type.Integer({ maximum: 100 }) }, { additionalProperties: false }),
  });
  json.endpoint("later", subject("later"), async () => ({ done: true }));
  json.endpoint("refuse", subject("refuse"), () => {
    throw new HttpError(409, ["already there", "and this too"]);
  });
  json.endpoint("down", subject("down"), async () => {
    throw Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
  });
  json.endpoint("broken", subject("broken"), () => {
    throw new Error("a secret detail");
  });
  json.endpoint("nothing", subject("nothing"), () => undefined);
});

after(async () => {
  await json?.service.stop();
  await nats?.drain();
});

/** Asks as the services do: the status from the services framework's headers, and the JSON body. */
async function ask(name: string, body: string) {
  const reply = await nats.nc.request(subject(name), body, { timeout: 5000, headers: natsHeaders() });
  const code = reply.headers?.get("Nats-Service-Error-Code");
  return { status: code ? Number(code) : 200, body: reply.json() as unknown };
}

test("an answer: the handler's value as JSON, from a synchronous or an asynchronous handler", async () => {
  assert.deepEqual(await ask("double", '{"n":21}'), { status: 200, body: { n: 42 } });
  assert.deepEqual(await ask("later", "{}"), { status: 200, body: { done: true } });
  assert.deepEqual(await ask("nothing", "{}"), { status: 200, body: {} });
});

test("refusals: not JSON 400, against the schema 422 naming the fields, an HttpError its own status", async () => {
  assert.deepEqual(await ask("double", "{not json"), { status: 400, body: { errors: ["body is not valid JSON"] } });
  const invalid = await ask("double", '{"n":1000,"extra":1}');
  assert.equal(invalid.status, 422);
  assert.deepEqual((invalid.body as { errors: string[] }).errors.sort(), [
    "extra is not a known field",
    "n must be at most 100",
  ]);
  assert.deepEqual(await ask("refuse", "{}"), { status: 409, body: { errors: ["already there", "and this too"] } });
});

test("PostgreSQL down is a 503 with the service's message; anything else a 500 that tells nothing of it", async () => {
  assert.deepEqual(await ask("down", "{}"), { status: 503, body: { errors: ["storage is down, retry later"] } });
  const broken = await ask("broken", "{}");
  assert.equal(broken.status, 500);
  assert.doesNotMatch(JSON.stringify(broken.body), /secret/);
});
