/**
 * Abuse: bodies as large as the limit allows, in their worst shape (a long array where a short
 * one is expected), and numbers too large for a query string. Each is refused at once with a
 * short 4xx in the error shape, and nobody else notices (see e2e/src/abuse.ts).
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import {
  type AbuseStage,
  assertBystandersUnharmed,
  bootAbuseStage,
  countStatuses,
  describeBystanders,
  flood,
  underAttack,
} from "../src/abuse.ts";
import { clientHeaders } from "../src/client.ts";

let stage: AbuseStage;
before(async () => {
  stage = await bootAbuseStage();
});
after(async () => stage?.teardown());

/** delivery-api's body limit (API_BODY_LIMIT_BYTES' default). */
const BODY_LIMIT = 256 * 1024;

/** `{"<field>":[1,1,...]}` with `count` numbers. */
const numbers = (field: string, count: number) => `{"${field}":[${"1,".repeat(count - 1)}1]}`;
/** The longest such body under the limit. */
const largestNumbers = (field: string) => numbers(field, Math.floor((BODY_LIMIT - field.length - 8) / 2));

interface Refusal {
  what: string;
  status: number;
  ms: number;
  bytes: number;
}

async function send(what: string, method: string, path: string, body?: string): Promise<Refusal> {
  const started = performance.now();
  const response = await fetch(`${stage.api}${path}`, {
    method,
    headers: { ...clientHeaders(stage.attacker), ...(body ? { "content-type": "application/json" } : {}) },
    body,
  });
  const text = await response.text();
  const refusal = { what, status: response.status, ms: performance.now() - started, bytes: text.length };
  assert.ok(Array.isArray((JSON.parse(text) as { errors?: unknown }).errors), `${what}: ${text.slice(0, 200)}`);
  return refusal;
}

test("arrays of 16,000, 100,000 and the most numbers the body limit holds are refused at once, on every write, also as a flood", async () => {
  const report = await underAttack(stage, async () => {
    const refusals: Refusal[] = [];
    for (const body of [numbers("packages", 16_000), numbers("packages", 100_000), largestNumbers("packages")]) {
      const size = `${Math.round(body.length / 1024)} KB`;
      refusals.push(await send(`create, packages of ${size}`, "POST", "/api/v2/deliveries", body));
      refusals.push(await send(`quote, packages of ${size}`, "POST", "/api/v2/deliveries/quote", body));
      refusals.push(
        await send(`update, packages of ${size}`, "PATCH", `/api/v2/deliveries/${stage.bystanderDeliveryId}`, body),
      );
    }
    refusals.push(
      await send("replace, packages of 256 KiB", "PUT", "/api/v2/deliveries/1", largestNumbers("packages")),
    );
    refusals.push(await send("webhook, events of 256 KiB", "POST", "/api/v2/webhooks", largestNumbers("events")));
    // Then a flood of the worst of them: four senders, back to back, for 3 s.
    const largest = largestNumbers("packages");
    const flooded = await flood({ senders: 4, forMs: 3000 }, () =>
      send("flood, packages of 256 KiB", "POST", "/api/v2/deliveries", largest),
    );
    return { refusals, flooded };
  });
  const { refusals, flooded } = report.result;
  console.log(refusals.map((r) => `${r.what}: ${r.status} in ${r.ms.toFixed(1)} ms, ${r.bytes} B`).join("\n"));
  const slowest = Math.max(...flooded.map((r) => r.ms));
  const counts = [...countStatuses(flooded.map((r) => r.status))].map(([status, n]) => `${n} × ${status}`);
  console.log(
    `flood: ${flooded.length} bodies of 256 KiB in 3 s (${counts.join(", ")}), slowest answer ${slowest.toFixed(1)} ms`,
  );
  console.log(describeBystanders(report.bystanders));
  // Another account's delivery is a 404 before its body is judged; any other answer is a 422,
  // or, once the flood has spent the account's budget, a 429 before the body is read.
  for (const [list, expected] of [
    [refusals, [404, 422]],
    [flooded, [422, 429]],
  ] as const) {
    for (const refusal of list) {
      assert.ok((expected as readonly number[]).includes(refusal.status), `${refusal.what}: ${refusal.status}`);
      assert.ok(refusal.bytes < 4096, `${refusal.what}: an error body of ${refusal.bytes} bytes`);
      assert.ok(refusal.ms < 250, `${refusal.what}: answered in ${refusal.ms.toFixed(0)} ms`);
    }
  }
  assertBystandersUnharmed(report);
});

test("a page number beyond any page, or beyond what a number can hold, is a 422 naming page", async () => {
  const report = await underAttack(stage, async () =>
    Promise.all(
      ["99999999999999999999", "9007199254740993", "1e400"].map(async (page) => {
        const response = await fetch(`${stage.api}/api/v2/deliveries?page=${page}`, {
          headers: clientHeaders(stage.attacker),
        });
        return { page, status: response.status, body: (await response.json()) as { errors: string[] } };
      }),
    ),
  );
  for (const answer of report.result) {
    assert.equal(answer.status, 422, `page=${answer.page}: ${JSON.stringify(answer.body)}`);
    assert.match(answer.body.errors.join(" "), /page/, `page=${answer.page}`);
  }
  assertBystandersUnharmed(report);
});
