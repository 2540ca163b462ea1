/**
 * The courier simulator setting of an account (/ops/v1/accounts/{id}/courier_simulator):
 * test-environment accounts only — a production delivery is never simulated.
 */
import { formatTimestamp } from "@dos/contracts";
import { unprocessable } from "@dos/service-kit";
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { type Kysely, sql } from "kysely";
import { requireAccount } from "../../accounts/accounts.service.ts";
import type { DB } from "../../db/database.ts";
import { pathId } from "../../http/request-input.ts";

export const DEFAULT_STEP_MS = 10_000;

const SimulatorBody = Type.Object(
  { enabled: Type.Boolean(), step_ms: Type.Optional(Type.Integer({ minimum: 200, maximum: 3_600_000 })) },
  { additionalProperties: false },
);

async function view(db: Kysely<DB>, accountId: number) {
  const row = await db
    .selectFrom("courier_simulators")
    .selectAll()
    .where("account_id", "=", accountId)
    .executeTakeFirst();
  return row
    ? { account_id: accountId, enabled: row.enabled, step_ms: row.step_ms, enabled_at: formatTimestamp(row.enabled_at) }
    : { account_id: accountId, enabled: false, step_ms: DEFAULT_STEP_MS, enabled_at: null };
}

export async function simulatorOpsRoutes(app: FastifyInstance, options: { db: Kysely<DB> }) {
  const { db } = options;
  app.get<{ Params: { id: string } }>(
    "/accounts/:id/courier_simulator",
    { schema: { operationId: "simulator.get", summary: "Show the courier simulator setting of an account" } },
    async (request) => {
      const account = await requireAccount(db, pathId(request.params.id, "account"));
      return view(db, account.id);
    },
  );

  app.put<{ Params: { id: string }; Body: Static<typeof SimulatorBody> }>(
    "/accounts/:id/courier_simulator",
    {
      schema: {
        operationId: "simulator.set",
        summary: "Switch the courier simulator of a test account",
        body: SimulatorBody,
      },
    },
    async (request) => {
      const account = await requireAccount(db, pathId(request.params.id, "account"));
      if (account.environment !== "test") {
        throw unprocessable(
          `account ${account.id} is a production account; the courier simulator is for test accounts`,
        );
      }
      const { enabled, step_ms } = request.body;
      await db
        .insertInto("courier_simulators")
        .values({ account_id: account.id, enabled, step_ms: step_ms ?? DEFAULT_STEP_MS })
        .onConflict((oc) =>
          oc.column("account_id").doUpdateSet({
            enabled,
            step_ms: step_ms === undefined ? sql`courier_simulators.step_ms` : step_ms,
            // Deliveries created from the moment it is switched on are simulated, not older ones.
            enabled_at: sql`case when courier_simulators.enabled then courier_simulators.enabled_at else now() end`,
          }),
        )
        .execute();
      return view(db, account.id);
    },
  );
}
