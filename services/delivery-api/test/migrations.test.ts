import { testMigrations } from "@dos/service-kit/testing-migrations";
import { sql } from "kysely";
import { migrations, SCHEMA } from "../migrations/index.ts";

testMigrations({
  label: "delivery_migrations",
  schema: SCHEMA,
  migrations,
  folder: new URL("../migrations/", import.meta.url),
  rows: "accounts, deliveries, rounds, staff and audit entries",
  seed: async (db) => {
    // Rows in every table a reference reaches, so down must take them in the right order.
    await sql`
      insert into accounts (company_name) values ('Acme');
      insert into users (account_id, email) values (1, 'ops@acme.test');
      insert into api_tokens (user_id, token_sha256, token_hint) values (1, '\\x01', 'ab12');
      insert into places (account_id, kind, recipient_name, address, postal_code, city)
      values (1, 'default', 'Depot', '1 rue de la Paix', '75002', 'Paris');
      insert into package_types (account_id, name, volume_dm3, weight_kg) values (1, 'box', 10, 2);
      insert into deliveries (account_id, direction, bring_back_containers) values (1, 'outbound', false);
      insert into tasks (delivery_id, kind, saved_address_id, slot_starting_at, slot_ending_at, recipient_name,
        address, postal_code, city)
      values (1, 'dropoff', 1, now(), now() + interval '1 hour', 'Ada', '2 rue Lepic', '75018', 'Paris');
      insert into delivery_packages (delivery_id, position, package_type_id, type, name, amount, volume_dm3, weight_kg)
      values (1, 0, 1, 'box', 'box', 1, 10, 2);
      insert into outbox (id, account_id, delivery_id, sequence, type, subject, event)
      values (gen_random_uuid(), 1, 1, 1, 'delivery.created', 'delivery.events.1.1.1.created', '{}');
      insert into idempotency_keys (account_id, operation, key, request_sha256, response_status, response_body)
      values (1, 'create', 'k1', '\\x02', 201, '{}');
      insert into messengers (name) values ('Max');
      insert into vehicles (external_id, provider) values ('van-1', 'test');
      insert into rounds (messenger_id, vehicle_id, status) values (1, 1, 'active');
      insert into round_tasks (round_id, task_id, position) values (1, 1, 0);
      insert into sms_messages (task_id, recipient, sender, body) values (1, '+33600000000', 'Acme', 'On its way');
      insert into fleet_outbox (fleet_key, entry) values ('van-1', '{}');
      insert into staff (email, name, role) values ('ada@operator.test', 'Ada', 'admin');
      insert into staff_tokens (staff_id, label, token_sha256) values (1, 'cli', '\\x03');
      insert into audit_log (actor_kind, actor_id, actor_name, method, route, resource_type, resource_id,
        status_code, before, after, request_id)
      values ('staff', 1, 'Ada', 'PATCH', '/ops/v1/vehicles/{id}', 'vehicles', '1', 200, '{}', '{}', 'r1');
    `.execute(db);
  },
  objects: [
    "relation | deliveries | r |",
    "relation | rounds | r |",
    "index | outbox_occurred_brin | CREATE INDEX",
    "relation | staff_tokens | r |",
    "relation | audit_log | r |",
    "index | tasks_slot_start_idx | CREATE INDEX",
  ],
});
