import assert from "node:assert/strict";
import { test } from "node:test";
import { natsNames } from "@dos/contracts";
import pg from "pg";
import { createTestDatabase, isStaleTestStream, randomNamespace, randomSuffix } from "./testing.ts";

test("the sweep of old test namespaces takes their streams and KV buckets, never production's or a recent run's", () => {
  const now = Date.parse("2026-11-22T12:00:00Z");
  const cutoff = now - 60 * 60 * 1000;
  const old = "2026-11-22T10:00:00.000Z";
  const recent = "2026-11-22T11:30:00.000Z";
  const test = natsNames(randomNamespace());
  const production = natsNames();

  assert.equal(isStaleTestStream(test.streams.deliveryEvents, old, cutoff), true);
  assert.equal(isStaleTestStream(`KV_${test.buckets.fleet}`, old, cutoff), true);
  assert.equal(isStaleTestStream(test.streams.deliveryEvents, recent, cutoff), false, "a run still going");
  assert.equal(isStaleTestStream(production.streams.deliveryEvents, old, cutoff), false);
  assert.equal(isStaleTestStream(`KV_${production.buckets.fleet}`, old, cutoff), false);
  assert.equal(isStaleTestStream(natsNames("staging").streams.deliveryEvents, old, cutoff), false);
});

test("a database copied from a template holds what the template's prepare wrote, prepared once per key", async () => {
  let prepared = 0;
  const key = `kittest${randomSuffix()}`;
  const template = {
    key,
    async prepare(url: string) {
      prepared += 1;
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query("create table marks (label text); insert into marks values ('from the template')");
      await client.end();
    },
  };
  const first = await createTestDatabase("tmpl", template);
  const second = await createTestDatabase("tmpl", template);
  try {
    assert.equal(prepared, 1);
    for (const database of [first, second]) {
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      const { rows } = await client.query("select label from marks");
      await client.query("insert into marks values ('own')");
      await client.end();
      assert.deepEqual(
        rows,
        [{ label: "from the template" }],
        "each copy starts as the template, whatever the other did",
      );
    }
  } finally {
    await first.drop();
    await second.drop();
    const admin = new pg.Client({ connectionString: new URL(first.url).href.replace(/\/[^/]*$/, "/postgres") });
    await admin.connect();
    const made = await admin.query("select datname from pg_database where starts_with(datname, $1)", [`tmpl_${key}_`]);
    for (const { datname } of made.rows) await admin.query(`drop database "${datname}"`);
    assert.equal(made.rows.length, 1, "one template made");
    await admin.end();
  }
});
