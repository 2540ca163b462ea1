/**
 * Delivery events moved to partitioned subjects (`delivery.events.<partition>.<account>...`, see
 * DELIVERY_EVENT_PARTITIONS in libs/contracts): the events still waiting in the outbox were
 * written with the old subject and are rewritten to the new one, so webhook-dispatcher, which
 * consumes by partition, receives them. Published rows keep the subject they went out on.
 */
import { DELIVERY_EVENT_PARTITIONS } from "@dos/contracts";
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    update outbox
    set subject = regexp_replace(subject, '(^|\\.)delivery\\.events\\.(\\d+)\\.',
      '\\1delivery.events.' || (account_id % ${sql.lit(DELIVERY_EVENT_PARTITIONS)}) || '.\\2.')
    where published_at is null
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    update outbox
    set subject = regexp_replace(subject, '(^|\\.)delivery\\.events\\.\\d+\\.(\\d+)\\.', '\\1delivery.events.\\2.')
    where published_at is null
  `.execute(db);
}
