/**
 * Indexes of the staff console's dispatch reads: the dispatch board finds a day's deliveries and
 * rounds by the tasks' slot start and the rounds' creation, its deliveries to assign among the
 * saved ones (few, against every delivery ever made: without it PostgreSQL scanned them all), and
 * a vehicle's page its latest tracker position through its rounds. Without them each of those
 * reads every task, delivery or round ever written.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create index tasks_slot_start_idx on tasks (slot_starting_at);
    create index deliveries_saved_idx on deliveries (id) where status = 'saved';
    create index rounds_created_idx on rounds (created_at);
    create index rounds_vehicle_idx on rounds (vehicle_id, id) where vehicle_id is not null;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop index rounds_vehicle_idx;
    drop index rounds_created_idx;
    drop index deliveries_saved_idx;
    drop index tasks_slot_start_idx;
  `.execute(db);
}
