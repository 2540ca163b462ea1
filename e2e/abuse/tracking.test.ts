/**
 * Issue 17's tracking-stream attack, replayed against the running system: 2,000 open
 * `/track/{token}/events` streams took PostgreSQL from 16 to 3,073 transactions/s. Scaled to a
 * 2-core machine: 400 streams on one delivery from 20 client addresses, 40 from one address over
 * 4 more deliveries, then others filling those up. The per-link cap admits 10 and refuses the
 * rest (429, Retry-After); the per-address cap admits 20; the 50 admitted streams cost one batch
 * read per second, not one each.
 */
import assert from "node:assert/strict";
import http from "node:http";
import { after, before, test } from "node:test";
import pg from "pg";
import { type AbuseStage, assertBystandersUnharmed, bootAbuseStage, underAttack } from "../src/abuse.ts";
import { callRetrying503, clientHeaders, outboundDelivery } from "../src/client.ts";

let stage: AbuseStage;
before(async () => {
  stage = await bootAbuseStage();
});
after(async () => stage?.teardown());

interface Opened {
  status: number;
  retryAfter: string | undefined;
  close(): void;
}

/** Opens a tracking stream from a client address (a loopback alias); resolves once it answers. */
function openStream(path: string, from: string): Promise<Opened> {
  return new Promise((resolve, reject) => {
    const request = http.get(`${stage.api}${path}/events`, { localAddress: from, agent: false }, (response) => {
      const opened = {
        status: response.statusCode ?? 0,
        retryAfter: response.headers["retry-after"] as string | undefined,
        close: () => request.destroy(),
      };
      if (opened.status !== 200) response.resume();
      response.once("data", () => resolve(opened));
      response.once("end", () => resolve(opened));
    });
    request.on("error", reject);
  });
}

/** The attacker's delivery with its pickup started: the path of its tracking link. */
async function trackedDelivery(reference: string): Promise<string> {
  const created = await callRetrying503(
    `${stage.api}/api/v2/deliveries`,
    "POST",
    clientHeaders(stage.attacker),
    outboundDelivery(stage.attacker, reference),
  );
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const id = (created.body as { id: number }).id;
  const round = await stage.operator.startRound([id]);
  const started = (await stage.operator.ops("POST", `/tasks/${stage.operator.task(round, id, "pickup")}/start`)) as {
    pickup: { tracking_url: string };
  };
  return new URL(started.pickup.tracking_url).pathname;
}

/**
 * `n` calls, 20 at a time every 100 ms: the attack's pace scaled to a shared 2-core machine, where
 * 400 connections opened in the same millisecond stall every process on it for a while.
 */
async function paced<T>(n: number, call: (i: number) => Promise<T>): Promise<T[]> {
  const calls: Promise<T>[] = [];
  for (let i = 0; i < n; i++) {
    if (i > 0 && i % 20 === 0) await new Promise((resolve) => setTimeout(resolve, 100));
    calls.push(call(i));
  }
  return Promise.all(calls);
}

/** PostgreSQL transactions per second on the system's database over `ms`. */
async function transactionsPerSecond(ms: number): Promise<number> {
  const client = new pg.Client({ connectionString: stage.system.env.DATABASE_URL });
  await client.connect();
  const read = async () =>
    Number(
      (
        await client.query(
          "select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()",
        )
      ).rows[0].n,
    );
  try {
    const before = await read();
    await new Promise((resolve) => setTimeout(resolve, ms));
    // Backends report their counts at most once a second: wait that out before reading.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await client.query("select pg_stat_clear_snapshot()");
    return ((await read()) - before) / ((ms + 1100) / 1000);
  } finally {
    await client.end();
  }
}

test("400 streams on one link and 40 from one address: the caps refuse the rest, the admitted cost one read", async () => {
  const link = await trackedDelivery("stream-flood");
  const others = await Promise.all(["stream-a", "stream-b", "stream-c", "stream-d"].map(trackedDelivery));
  const report = await underAttack(stage, async () => {
    const first = await openStream(link, "127.0.0.2");
    const onePage = await transactionsPerSecond(4000);
    const flood = await paced(400, (i) => openStream(link, `127.0.1.${(i % 20) + 1}`));
    // One address, four more deliveries; then other addresses fill those links up to their cap.
    const crowd = await paced(40, (i) => openStream(others[i % 4] as string, "127.0.2.1"));
    const rest = await paced(40, (i) => openStream(others[i % 4] as string, `127.0.3.${(i % 10) + 1}`));
    const fiftyPages = await transactionsPerSecond(4000);
    for (const stream of [first, ...flood, ...crowd, ...rest]) stream.close();
    return { first, flood, crowd, rest, onePage, fiftyPages };
  });
  const { first, flood, crowd, rest, onePage, fiftyPages } = report.result;
  console.log(
    `one page: ${onePage.toFixed(1)} tx/s; 50 pages on 5 links (411 refused): ${fiftyPages.toFixed(1)} tx/s; ` +
      `attack ${Math.round(report.ms)} ms`,
  );

  const admitted = (list: Opened[]) => list.filter((s) => s.status === 200).length;
  const refused = (list: Opened[]) => list.filter((s) => s.status === 429);
  assert.equal(first.status, 200);
  assert.equal(admitted(flood), 9, "10 streams on one link, the first one included");
  assert.equal(refused(flood).length, 391);
  assert.equal(admitted(crowd), 20, "20 streams from one address");
  assert.equal(refused(crowd).length, 20);
  assert.equal(admitted(rest), 20, "the four links filled up to 10 each");
  const refusals = [...refused(flood), ...refused(crowd), ...refused(rest)];
  assert.ok(
    refusals.every((s) => Number(s.retryAfter) >= 1),
    "every refusal says when to retry",
  );
  // A read per stream and second would add 2 statements per stream and second: about 100 tx/s
  // for the 49 more pages. One batch read for all links adds next to nothing.
  assert.ok(fiftyPages - onePage < 25, `50 pages: ${fiftyPages.toFixed(1)} tx/s, one page: ${onePage.toFixed(1)} tx/s`);
  assertBystandersUnharmed(report);
});
