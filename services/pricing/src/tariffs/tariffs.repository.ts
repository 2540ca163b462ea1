/** Reads and appends tariff versions; versions are never updated nor deleted. */
import {
  formatTimestamp,
  type Tariff,
  type TariffRules,
  type TariffVersion,
  type TariffVersionEntry,
} from "@dos/contracts";
import type { Insertable, Selectable } from "kysely";
import type { Db } from "../db/database.ts";
import type { TariffsTable } from "./tariffs.table.ts";

type TariffRow = Selectable<TariffsTable>;

export interface NewTariff extends TariffRules {
  accountId: number;
  effectiveFrom: Date;
  note: string | null;
}

/** Inserts a version; throws PostgreSQL's unique violation (23505) when the account already has one at that instant. */
export async function insertTariff(db: Db, tariff: NewTariff): Promise<TariffRow> {
  const row: Insertable<TariffsTable> = {
    account_id: tariff.accountId,
    effective_from: tariff.effectiveFrom,
    base_outbound_cents: tariff.base_cents.outbound,
    base_inbound_cents: tariff.base_cents.inbound,
    base_other_cents: tariff.base_cents.other,
    per_package_cents: tariff.per_package_cents,
    weight_bands: JSON.stringify(tariff.weight_bands),
    volume_bands: JSON.stringify(tariff.volume_bands),
    slot_surcharges: JSON.stringify(tariff.slot_surcharges),
    lead_time_surcharges: JSON.stringify(tariff.lead_time_surcharges),
    minimum_cents: tariff.minimum_cents,
    note: tariff.note,
  };
  return db.insertInto("tariffs").values(row).returningAll().executeTakeFirstOrThrow();
}

/** Every version of an account, latest effective_from first. */
export async function listTariffsByAccount(db: Db, accountId: number): Promise<TariffRow[]> {
  return db
    .selectFrom("tariffs")
    .selectAll()
    .where("account_id", "=", accountId)
    .orderBy("effective_from", "desc")
    .execute();
}

/** Every account that has at least one version. */
export async function listTariffAccounts(db: Db): Promise<number[]> {
  const rows = await db.selectFrom("tariffs").select("account_id").distinct().orderBy("account_id").execute();
  return rows.map((row) => row.account_id);
}

export async function findTariff(db: Db, accountId: number, tariffId: number): Promise<TariffRow | undefined> {
  return db
    .selectFrom("tariffs")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("id", "=", tariffId)
    .executeTakeFirst();
}

function rulesOf(row: TariffRow): TariffRules {
  return {
    base_cents: { outbound: row.base_outbound_cents, inbound: row.base_inbound_cents, other: row.base_other_cents },
    per_package_cents: row.per_package_cents,
    // jsonb sorts object keys; rebuild each entry so replies read in the documented order.
    weight_bands: row.weight_bands.map(({ from_kg, cents }) => ({ from_kg, cents })),
    volume_bands: row.volume_bands.map(({ from_dm3, cents }) => ({ from_dm3, cents })),
    slot_surcharges: row.slot_surcharges.map(threshold),
    lead_time_surcharges: row.lead_time_surcharges.map(threshold),
    minimum_cents: row.minimum_cents,
  };
}

const threshold = ({ shorter_than_minutes, cents }: { shorter_than_minutes: number; cents: number }) => ({
  shorter_than_minutes,
  cents,
});

/** A row as the contract's Tariff. */
export function toTariff(row: TariffRow): Tariff {
  return {
    id: row.id,
    account_id: row.account_id,
    effective_from: formatTimestamp(row.effective_from),
    ...rulesOf(row),
    note: row.note,
    created_at: formatTimestamp(row.created_at),
  };
}

/** A row as the pricing rules need it. */
export function toTariffVersion(row: TariffRow): TariffVersion {
  return { id: row.id, effectiveFrom: row.effective_from, ...rulesOf(row) };
}

/** A row as the TARIFFS bucket holds it (see tariffs.bucket.ts). */
export function toTariffVersionEntry(row: TariffRow): TariffVersionEntry {
  return { id: row.id, effective_from: formatTimestamp(row.effective_from), ...rulesOf(row) };
}
