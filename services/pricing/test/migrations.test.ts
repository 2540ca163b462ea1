import { testMigrations } from "@dos/service-kit/testing-migrations";
import { sql } from "kysely";
import { migrations, SCHEMA } from "../migrations/index.ts";

testMigrations({
  label: "pricing_migrations",
  schema: SCHEMA,
  migrations,
  folder: new URL("../migrations/", import.meta.url),
  rows: "tariffs",
  seed: async (db) => {
    await sql`
      insert into tariffs (account_id, effective_from, base_outbound_cents, base_inbound_cents, base_other_cents,
        weight_bands)
      values (1, now(), 900, 700, 800, '[{"up_to_kg": 5, "cents": 100}]'), (1, now() + interval '1 day', 950, 750, 850, '[]')
    `.execute(db);
  },
  objects: ["relation | tariffs | r |"],
});
