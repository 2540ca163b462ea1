/**
 * The courier simulator setting of an account: test-environment accounts only — a production
 * delivery is never simulated.
 */
import { formatTimestamp, Timestamp } from "@dos/contracts";
import { unprocessable } from "@dos/service-kit";
import { type Static, Type } from "@sinclair/typebox";
import type { Kysely } from "kysely";
import { requireAccount } from "../../accounts/accounts.service.ts";
import type { DB } from "../../db/database.ts";
import { findSimulatorSetting, saveSimulatorSetting } from "./simulator.repository.ts";

const DEFAULT_STEP_MS = 10_000;

/** An account's courier simulator setting; enabled_at: deliveries created since then are simulated. */
export const CourierSimulator = Type.Object(
  {
    account_id: Type.Integer(),
    enabled: Type.Boolean(),
    step_ms: Type.Integer(),
    enabled_at: Type.Union([Timestamp, Type.Null()]),
  },
  { title: "CourierSimulator" },
);

export function createSimulatorSettings(db: Kysely<DB>) {
  async function view(accountId: number): Promise<Static<typeof CourierSimulator>> {
    const row = await findSimulatorSetting(db, accountId);
    return row
      ? {
          account_id: accountId,
          enabled: row.enabled,
          step_ms: row.step_ms,
          enabled_at: formatTimestamp(row.enabled_at),
        }
      : { account_id: accountId, enabled: false, step_ms: DEFAULT_STEP_MS, enabled_at: null };
  }
  return {
    get: async (accountId: number) => view((await requireAccount(db, accountId)).id),
    async set(accountId: number, setting: { enabled: boolean; step_ms?: number }) {
      const account = await requireAccount(db, accountId);
      if (account.environment !== "test") {
        throw unprocessable(
          `account ${account.id} is a production account; the courier simulator is for test accounts`,
        );
      }
      await saveSimulatorSetting(db, {
        accountId: account.id,
        enabled: setting.enabled,
        stepMs: setting.step_ms,
        defaultStepMs: DEFAULT_STEP_MS,
      });
      return view(account.id);
    },
  };
}
