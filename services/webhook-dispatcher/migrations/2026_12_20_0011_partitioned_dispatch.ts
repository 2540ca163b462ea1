/**
 * Dispatch by partition (src/partitions, src/intake, src/worker): the replica that owns an
 * account's partition of DELIVERY_EVENTS POSTs its webhooks straight from the stream, and a
 * webhook delivered at the first attempt leaves one row, its attempt. Only a webhook that fails
 * or waits too long is queued here (messages, with its event), and only the owner retries it.
 *
 * - attempts carry their event (id, kind, delivery, sequence): most have no message or event
 *   row to join. `attempts_event` finds the attempts of an event, so an event seen again (a
 *   redelivery, a re-publish) is not sent twice; `attempts_message` served only retention.
 *   Attempts are appended in time order, so a BRIN index serves retention for next to nothing.
 * - messages carry their account's partition: the owner claims due heads of its partitions
 *   only. Claims no longer count leases per endpoint (one owner sends all of an endpoint's
 *   POSTs and limits them in memory), so messages_due and messages_leased go.
 * - The slot and intake functions of migrations 0002-0010 go; lock_queues and settle_queues stay.
 */
import { DELIVERY_EVENT_PARTITIONS } from "@dos/contracts";
import { type Kysely, sql } from "kysely";
import * as queueFunctions from "./2026_11_21_0002_queue_functions.ts";
import * as serialisedClaims from "./2026_12_11_0004_serialised_claims.ts";
import * as takeIn from "./2026_12_11_0005_take_in.ts";
import * as intakeClaims from "./2026_12_11_0006_intake_claims.ts";
import * as queueWalks from "./2026_12_12_0008_queue_walks.ts";
import * as slotsKeepTheirQueues from "./2026_12_12_0010_slots_keep_their_queues.ts";

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table attempts add column event_id uuid, add column event_type text, add column delivery_id bigint,
      add column sequence integer, alter column message_id drop not null;
    update attempts a set event_id = m.event_id, event_type = ev.type, delivery_id = m.delivery_id, sequence = m.sequence
    from messages m join events ev on ev.id = m.event_id
    where m.id = a.message_id;
    alter table attempts alter column event_id set not null, alter column event_type set not null,
      alter column delivery_id set not null, alter column sequence set not null;
    drop index attempts_message;
    create index attempts_event on attempts (event_id, endpoint_id);
    create index attempts_time on attempts using brin (attempted_at);

    alter table messages add column partition smallint;
    update messages m set partition = e.account_id % ${sql.lit(DELIVERY_EVENT_PARTITIONS)}
    from endpoints e where e.id = m.endpoint_id;
    alter table messages alter column partition set not null;
    create index messages_due_in_partition on messages (partition, next_attempt_at)
      where state = 'pending' and next_attempt_at is not null;
    drop index messages_due, messages_leased;

    drop function finish_and_claim(bigint[], uuid[], uuid[], bigint[], int[], timestamptz[], int[], int[], uuid[], int, int, int, float8, float8);
    drop function continue_queues(uuid[], bigint[], uuid[], int, float8, float8);
    drop function take_in_and_claim(uuid[], bigint[], bigint[], int[], text[], text[], text[], timestamptz[], float8, int, int, int, float8, float8);
    drop function claim_due_among(int, int, int, float8, float8, uuid[]);
    drop function take_in(uuid[], bigint[], bigint[], int[], text[], text[], text[], timestamptz[], float8);
    drop function claim_due(int, int, int, float8, float8);
    drop function record_delivered(bigint[], uuid[], uuid[], bigint[], int[], timestamptz[], int[], int[]);
    drop function lock_endpoint_claims(uuid[]);
    drop type claimed_message;
  `.execute(db);
}

/** Back to migration 0010: the functions are created again by the migrations that made them. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop function settle_queues(uuid[], bigint[]);
    drop function lock_queues(uuid[], bigint[]);
    drop index messages_due_in_partition;
    alter table messages drop column partition;
    create index messages_due on messages (endpoint_id, next_attempt_at)
      where state = 'pending' and next_attempt_at is not null;
    create index messages_leased on messages (endpoint_id) where state = 'pending' and lease_until is not null;
    -- Attempts of webhooks that had no message cannot be kept without one.
    delete from attempts where message_id is null;
    drop index attempts_event, attempts_time;
    alter table attempts drop column event_id, drop column event_type, drop column delivery_id,
      drop column sequence, alter column message_id set not null;
    create index attempts_message on attempts (message_id);
  `.execute(db);
  for (const migration of [queueFunctions, serialisedClaims, takeIn, intakeClaims, queueWalks, slotsKeepTheirQueues]) {
    await migration.up(db);
  }
}
