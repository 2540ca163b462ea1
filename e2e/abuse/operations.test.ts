/**
 * The operator API from the internet: delivery-api answers /ops only on its internal listener
 * (API_OPS_PORT), so a stranger on the public port, even holding the operator token, finds no
 * such route, however the path is written, and hammering it harms no one.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type AbuseStage, assertBystandersUnharmed, bootAbuseStage, underAttack } from "../src/abuse.ts";
import { opsHeaders } from "../src/client.ts";

let stage: AbuseStage;
before(async () => {
  stage = await bootAbuseStage();
});
after(async () => stage?.teardown());

const PATHS = [
  "/ops/v1/accounts",
  "/ops/v1/accounts/1/tariffs",
  "/ops/v1/fleet/rebuild",
  "/ops",
  "//ops/v1/accounts",
  "/%6Fps/v1/accounts",
  "/OPS/v1/accounts",
  "/api/../ops/v1/accounts",
  "/ops/v1/accounts?x=1",
];

test("/ops on the public listener is an unknown route (404) for every spelling, token or not; bystanders unharmed", async () => {
  const statuses = new Map<string, number>();
  const report = await underAttack(stage, async () => {
    // Reachability, not volume (floods are the rate limits' files): every spelling, twice a second.
    let sent = 0;
    for (let round = 0; round < 3; round++) {
      for (const path of PATHS) {
        for (const method of ["GET", "POST"]) {
          const response = await fetch(`${stage.api}${path}`, {
            method,
            headers: { ...opsHeaders, "content-type": "application/json" },
            body: method === "POST" ? "{}" : undefined,
            signal: AbortSignal.timeout(10_000),
          });
          await response.arrayBuffer();
          statuses.set(`${method} ${path}`, response.status);
          sent++;
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    return sent;
  });
  for (const [request, status] of statuses) assert.equal(status, 404, `${request} → ${status}`);
  assertBystandersUnharmed(report);
  // The same token on the internal listener is the operator's, as it should be.
  const internal = await fetch(`${stage.system.opsUrl}/ops/v1/accounts`, { headers: opsHeaders });
  assert.equal(internal.status, 200);
});
