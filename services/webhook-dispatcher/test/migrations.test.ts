import assert from "node:assert/strict";
import { testMigrations } from "@dos/service-kit/testing-migrations";
import { sql } from "kysely";
import { migrations, SCHEMA } from "../migrations/index.ts";

testMigrations({
  label: "webhooks_migrations",
  schema: SCHEMA,
  migrations,
  folder: new URL("../migrations/", import.meta.url),
  rows: "endpoints, events, messages and attempts",
  seed: async (db) => {
    await sql`
      insert into endpoints (id, account_id, url, secret_ciphertext)
      values ('00000000-0000-4000-8000-000000000001', 7, 'https://example.com/hook', 'ciphertext');
      insert into events (id, account_id, delivery_id, sequence, type, body, occurred_at)
      values ('00000000-0000-4000-8000-0000000000e1', 7, 42, 1, 'delivery.created', '{}', now()),
             ('00000000-0000-4000-8000-0000000000e2', 7, 42, 2, 'delivery.scheduled', '{}', now());
      insert into messages (endpoint_id, event_id, delivery_id, sequence, partition, account_id)
      select '00000000-0000-4000-8000-000000000001', id, delivery_id, sequence, 7, account_id from events;
      insert into attempts (message_id, endpoint_id, attempt, attempted_at, duration_ms, status_code, outcome,
        event_id, event_type, delivery_id, sequence)
      values (null, '00000000-0000-4000-8000-000000000001', 1, now(), 12, 500, 'retrying',
        '00000000-0000-4000-8000-0000000000e1', 'delivery.created', 42, 1);
    `.execute(db);
    // The surviving functions work on these rows: the queue's lowest message becomes its head.
    await sql`select settle_queues(array['00000000-0000-4000-8000-000000000001']::uuid[], array[42]::bigint[])`.execute(
      db,
    );
    const { rows } = await sql<{
      sequence: number;
    }>`select sequence from messages where next_attempt_at is not null`.execute(db);
    assert.deepEqual(rows, [{ sequence: 1 }]);
  },
  objects: ["relation | messages | r |", "function | CREATE OR REPLACE FUNCTION webhooks.settle_queues"],
});
