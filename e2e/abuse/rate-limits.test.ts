/**
 * Client API rate limits against the running system (issue 17): a flood of wrong tokens and an
 * authenticated flood, each while the bystanders (another shop on the same loopback address,
 * every service's /livez, a tracker) keep calling. The limits are the defaults of `npm start`.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
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

const FAILURE_QUOTA = 30;
const QUOTA = 100;
const WINDOW_SECONDS = 5;

/** `total` requests from `senders` loops; the count of each status. */
async function statusesOf(total: number, senders: number, send: () => Promise<Response>) {
  const statuses = await flood({ senders, total }, async () => {
    const response = await send();
    await response.arrayBuffer();
    return response.status;
  });
  return countStatuses(statuses);
}

describe("abuse: client API rate limits", () => {
  let stage: AbuseStage;
  before(async () => {
    stage = await bootAbuseStage({
      API_RATE_LIMIT_QUOTA: String(QUOTA),
      API_RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_SECONDS),
      API_AUTH_FAILURE_QUOTA: String(FAILURE_QUOTA),
      // An hour: no failure is refilled while the flood lasts, however slow the machine.
      API_AUTH_FAILURE_WINDOW_SECONDS: "3600",
    });
  });
  after(async () => stage?.teardown());

  const tokenLookups = async () => {
    const text = await (await fetch(`${stage.api}/metrics`)).text();
    return Number(/^api_token_lookups_total(?:\{[^}]*\})? (\d+)/m.exec(text)?.[1] ?? "0");
  };

  test("4,000 wrong tokens from one address: 429 before any lookup past the budget; the shop there is unharmed", async () => {
    const lookupsBefore = await tokenLookups();
    const report = await underAttack(stage, () =>
      statusesOf(4000, 32, () =>
        fetch(`${stage.api}/api/v2/deliveries`, {
          headers: { "x-user-email": stage.attacker.email, "x-user-token": randomBytes(24).toString("base64url") },
        }),
      ),
    );
    const lookups = (await tokenLookups()) - lookupsBefore;
    console.log(
      `wrong-token flood: ${JSON.stringify(Object.fromEntries(report.result))} in ${Math.round(report.ms)} ms, ` +
        `${lookups} token lookups; ${describeBystanders(report.bystanders)}`,
    );
    assert.equal(report.result.get(401), FAILURE_QUOTA, "the budget's failures are answered 401");
    assert.equal(report.result.get(429), 4000 - FAILURE_QUOTA, "the rest are refused");
    // The budget's lookups, plus the bystander shop's (its login is remembered 5 s at a time).
    assert.ok(lookups <= FAILURE_QUOTA + Math.ceil(report.ms / 5000) + 2, `${lookups} token lookups`);
    assertBystandersUnharmed(report);
    // The attacked e-mail's owner, from the same address, still gets in.
    const owner = await fetch(`${stage.api}/api/v2/deliveries`, { headers: clientHeaders(stage.attacker) });
    assert.equal(owner.status, 200);
  });

  test("an authenticated flood: the account gets its quota and 429s with Retry-After; another account is unharmed", async () => {
    const report = await underAttack(stage, async () => {
      // The flood's own last refusal is the one checked: a request sent after it could find the
      // budget refilled (a unit every 50 ms), the more so as the attacker runs at the lowest priority.
      let refusal: { headers: Headers; body: object } | undefined;
      const answers = await flood({ senders: 32, total: 3000 }, async () => {
        const response = await fetch(`${stage.api}/api/v2/deliveries`, { headers: clientHeaders(stage.attacker) });
        if (response.status === 429) refusal = { headers: response.headers, body: (await response.json()) as object };
        else await response.arrayBuffer();
        return response.status;
      });
      return { statuses: countStatuses(answers), refusal };
    });
    const { statuses, refusal } = report.result;
    const admitted = statuses.get(200) ?? 0;
    console.log(
      `authenticated flood: ${JSON.stringify(Object.fromEntries(statuses))} in ${Math.round(report.ms)} ms; ` +
        describeBystanders(report.bystanders),
    );
    // The burst, plus what refilled while the flood lasted (QUOTA per WINDOW_SECONDS), never more.
    const refilled = Math.ceil((report.ms / 1000) * (QUOTA / WINDOW_SECONDS));
    assert.ok(admitted >= QUOTA - 1 && admitted <= QUOTA + refilled + 1, `${admitted} admitted, ${refilled} refilled`);
    assert.equal(admitted + (statuses.get(429) ?? 0), 3000, "every other request is a 429");
    assertBystandersUnharmed(report);

    assert.ok(refusal, "the flood was refused");
    assert.ok(Number(refusal.headers.get("retry-after")) >= 1);
    assert.equal(refusal.headers.get("ratelimit-policy"), `"account";q=${QUOTA};w=${WINDOW_SECONDS}`);
    assert.match(refusal.headers.get("ratelimit") ?? "", /^"account";r=0;t=\d+$/);
    assert.deepEqual(Object.keys(refusal.body), ["errors"]);
  });
});
