/**
 * The fleet's lists under /ops/v1 (vehicles, messengers) come by pages, like every operator list:
 * `page` and `per_page` (at most 500, 100 by default) and a Link to the next page while more
 * follow, so that a fleet of 100,000 vehicles is never one answer.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type DeliveriesTestbed, startDeliveriesTestbed } from "./delivery-fixtures.ts";
import { opsClient } from "./dispatch-fixtures.ts";
import type { OpsClient } from "./ops-client.ts";

let bed: DeliveriesTestbed;
let ops: OpsClient;
before(async () => {
  bed = await startDeliveriesTestbed();
  ops = opsClient(bed.api);
});
after(async () => bed.close());

for (const [list, create] of [
  ["vehicles", (n: number) => ({ external_id: `LIST-VAN-${n}`, provider: "acme-trackers" })],
  ["messengers", (n: number) => ({ name: `List courier ${n}` })],
] as const) {
  test(`${list}: by id, in pages, with a Link to the next one; 101 of them need two default pages`, async () => {
    for (let n = 0; n < 101; n++) assert.equal((await ops.post(`/${list}`, create(n))).status, 201);
    const all = (await bed.api.db
      .selectFrom(list)
      .select("id")
      .orderBy("id")
      .execute()
      .then((rows) => rows.map((row) => row.id))) as number[];
    const first = await ops.get(`/${list}`);
    assert.equal(first.status, 200);
    assert.deepEqual(
      first.body.map((x: { id: number }) => x.id),
      all.slice(0, 100),
    );
    assert.equal(first.headers.link, `</ops/v1/${list}?page=2&per_page=100>; rel="next"`);
    const second = await ops.get(`/${list}?page=2&per_page=100`);
    assert.deepEqual(
      second.body.map((x: { id: number }) => x.id),
      all.slice(100),
    );
    assert.equal(second.headers.link, undefined, "the last page");
    const small = await ops.get(`/${list}?per_page=2&page=3`);
    assert.deepEqual(
      small.body.map((x: { id: number }) => x.id),
      all.slice(4, 6),
    );
    const bad = await ops.get(`/${list}?per_page=501&page=10001`);
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.body.errors.sort(), [
      "querystring.page must be at most 10000",
      "querystring.per_page must be at most 500",
    ]);
  });
}
