/**
 * The floor of a create: the rows a create writes (the delivery, its two tasks, its packages and
 * its `delivery.created` outbox event) in one transaction with the same durability
 * (synchronous_commit on), and nothing else: no validation, authentication, rate limit,
 * catalogue read, pricing, group commit or relay. One statement per request (data-modifying
 * CTEs, one round trip), prepared, on a database of its own migrated with delivery-api's own
 * migrations, so the tables, indexes and constraints are the ones a create writes to.
 *
 * The body is the create body the benchmark sends: its dropoff and packages are written as sent,
 * the pickup is a fixed place (a create copies the account's default place), and the event
 * carries the body where a create's carries the delivery it answers (about the same size).
 */
import { randomBytes, randomUUID } from "node:crypto";
import { createDatabase, migrate } from "@dos/service-kit";
import { createTestDatabase } from "@dos/service-kit/testing";
import type { FastifyInstance } from "fastify";
import type { Kysely } from "kysely";
import { migrations, SCHEMA } from "../migrations/index.ts";
import type { DB } from "../src/db/database.ts";

interface Place {
  recipient_name: string;
  recipient_phone?: string | null;
  recipient_email?: string | null;
  company_name?: string | null;
  address: string;
  postal_code: string;
  city: string;
  address_instructions?: string | null;
}
interface FloorBody {
  comments?: string | null;
  client_order_reference?: string | null;
  dropoff: { slot_starting_at: string; slot_ending_at: string; place: Place };
  packages: Array<{ package_type_id?: number; amount: number } & Partial<FloorPackage>>;
}

/** A package as written: a catalogue entry's fields are copied, as a create copies them. */
export interface FloorPackage {
  type: string;
  name: string;
  volume_dm3: number;
  weight_kg: number;
  fragility: string | null;
  temperature: string | null;
  client_reference: string | null;
}

const PICKUP: Place = {
  recipient_name: "Shop warehouse",
  recipient_phone: "+33 1 23 45 67 89",
  company_name: "Shop",
  address: "1 Rue du Dépôt",
  postal_code: "75001",
  city: "Paris",
};

const STATEMENT = `
  with d as (
    insert into deliveries (account_id, direction, comments, client_order_reference, bring_back_containers,
      event_sequence)
    values ($1, 'outbound', $2, $3, false, 1)
    returning id
  ),
  t as (
    insert into tasks (delivery_id, kind, at_default_place, slot_starting_at, slot_ending_at, recipient_name,
      recipient_phone, recipient_email, company_name, address, postal_code, city, address_instructions,
      tracking_token)
    select d.id, r.* from d, jsonb_to_recordset($4::jsonb) as r(kind text, at_default_place boolean,
      slot_starting_at timestamptz, slot_ending_at timestamptz, recipient_name text, recipient_phone text,
      recipient_email text, company_name text, address text, postal_code text, city text,
      address_instructions text, tracking_token text)
  ),
  p as (
    insert into delivery_packages (delivery_id, position, package_type_id, type, name, amount, volume_dm3,
      weight_kg, fragility, temperature, client_reference)
    select d.id, r.position, r.package_type_id, r.type, r.name, r.amount, r.volume_dm3, r.weight_kg, r.fragility, r.temperature,
      r.client_reference
    from d, jsonb_to_recordset($5::jsonb) as r(position integer, package_type_id bigint, type text, name text, amount integer,
      volume_dm3 numeric, weight_kg numeric, fragility text, temperature text, client_reference text)
  ),
  o as (
    insert into outbox (id, account_id, delivery_id, sequence, type, subject, event, occurred_at)
    select $6, $1, d.id, 1, 'delivery.created', $7, $8, clock_timestamp() from d
  )
  select id from d
`;

export interface Floor {
  /** The database's name, for the CPU meter. */
  database: string;
  close(): Promise<void>;
}

/**
 * Registers `POST /floor` on `app`, writing to a database of its own; `catalogue` holds the
 * package types the body names, by id (the floor reads no catalogue).
 */
export async function registerFloorRoute(app: FastifyInstance, catalogue: Map<number, FloorPackage>): Promise<Floor> {
  const testDb = await createTestDatabase("delivery_bench_floor");
  const database = createDatabase({ url: testDb.url, schema: SCHEMA, applicationName: "delivery-bench-floor" });
  await migrate(database.db, { schema: SCHEMA, migrations });
  const db = database.db as Kysely<DB>;
  const account = await db
    .insertInto("accounts")
    .values({ company_name: "Floor shop", environment: "production" })
    .returning("id")
    .executeTakeFirstOrThrow();
  const accountId = Number(account.id);
  // The same package types in the floor's database, so its package rows carry the same reference.
  const types = new Map<number, FloorPackage & { package_type_id: number }>();
  for (const [id, entry] of catalogue) {
    const row = await db
      .insertInto("package_types")
      .values({
        account_id: accountId,
        name: entry.name,
        volume_dm3: entry.volume_dm3,
        weight_kg: entry.weight_kg,
        fragility: entry.fragility,
        temperature: entry.temperature,
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    types.set(id, { ...entry, package_type_id: Number(row.id) });
  }

  app.post("/floor", async (request, reply) => {
    const body = request.body as FloorBody;
    const task = (kind: string, slot: { slot_starting_at: string; slot_ending_at: string }, place: Place) => ({
      kind,
      at_default_place: kind === "pickup",
      ...slot,
      ...place,
      tracking_token: randomBytes(16).toString("base64url"),
    });
    const pickupSlot = { slot_starting_at: new Date().toISOString(), slot_ending_at: body.dropoff.slot_starting_at };
    const tasks = [task("pickup", pickupSlot, PICKUP), task("dropoff", body.dropoff, body.dropoff.place)];
    const packages = body.packages.map(({ package_type_id, ...item }, position) => ({
      ...(package_type_id === undefined ? { type: "custom" } : types.get(package_type_id)),
      ...item,
      position,
    }));
    const eventId = randomUUID();
    const event = JSON.stringify({ id: eventId, type: "delivery.created", account_id: accountId, payload: body });
    const { rows } = await database.pool.query({
      name: "floor_create",
      text: STATEMENT,
      values: [
        accountId,
        body.comments ?? null,
        body.client_order_reference ?? null,
        JSON.stringify(tasks),
        JSON.stringify(packages),
        eventId,
        `delivery.events.floor.${accountId}`,
        event,
      ],
    });
    return reply.code(201).send({ id: Number(rows[0]?.id) });
  });

  return {
    database: testDb.name,
    async close() {
      await database.close();
      await testDb.drop();
    },
  };
}
