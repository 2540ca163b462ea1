/**
 * The package type catalogue of an account. Types are archived, never deleted: deliveries keep
 * pointing at the entry they were made with, and a name stays taken by its archived entry.
 */
import { formatTimestamp, type PackageType } from "@dos/contracts";
import { isUniqueViolation, notFound, unprocessable } from "@dos/service-kit";
import type { Kysely, Selectable, Updateable } from "kysely";
import { requireAccount } from "../accounts/accounts.service.ts";
import type { DB } from "../db/database.ts";
import { requiredText } from "../lib/text.ts";
import {
  findPackageType,
  findPackageTypeByName,
  insertPackageType,
  listPackageTypes,
  updatePackageType,
} from "./package-types.repository.ts";
import type { CatalogueEntry, CreatePackageTypeBody, UpdatePackageTypeBody } from "./package-types.schemas.ts";
import type { PackageTypesTable } from "./package-types.table.ts";

type PackageTypeRow = Selectable<PackageTypesTable>;

/** An entry as operators see it. */
function packageTypeView(row: PackageTypeRow): CatalogueEntry {
  return {
    id: row.id,
    name: row.name,
    volume_dm3: row.volume_dm3,
    weight_kg: row.weight_kg,
    fragility: row.fragility,
    temperature: row.temperature,
    is_size_category: row.is_size_category,
    archived_at: row.archived_at ? formatTimestamp(row.archived_at) : null,
    created_at: formatTimestamp(row.created_at),
  };
}

/** An entry as clients see it in `GET /api/v2/package_types` (the spec's Package type). */
function clientPackageTypeView(row: PackageTypeRow): PackageType {
  return {
    id: row.id,
    type: row.name,
    volume: row.volume_dm3,
    weight: row.weight_kg,
    fragility: row.fragility,
    temperature: row.temperature,
  };
}

/** The account's catalogue as the client API lists it: entries in use, oldest first. */
export async function listClientPackageTypes(db: Kysely<DB>, accountId: number): Promise<PackageType[]> {
  return (await listPackageTypes(db, accountId, { includeArchived: false })).map(clientPackageTypeView);
}

export async function createPackageType(db: Kysely<DB>, accountId: number, body: CreatePackageTypeBody) {
  await requireAccount(db, accountId);
  const name = requiredText(body.name, "name");
  await refuseTakenName(db, accountId, name);
  try {
    const row = await insertPackageType(db, {
      account_id: accountId,
      name,
      volume_dm3: body.volume_dm3,
      weight_kg: body.weight_kg,
      fragility: body.fragility ?? null,
      temperature: body.temperature ?? null,
      is_size_category: body.is_size_category ?? false,
    });
    return packageTypeView(row);
  } catch (error) {
    if (isUniqueViolation(error)) await refuseTakenName(db, accountId, name);
    throw error;
  }
}

export async function listOpsPackageTypes(db: Kysely<DB>, accountId: number, includeArchived: boolean) {
  await requireAccount(db, accountId);
  return (await listPackageTypes(db, accountId, { includeArchived })).map(packageTypeView);
}

async function requirePackageType(db: Kysely<DB>, accountId: number, id: number) {
  await requireAccount(db, accountId);
  const row = await findPackageType(db, accountId, id);
  if (!row) throw notFound(`package type ${id}`);
  return row;
}

export async function getPackageType(db: Kysely<DB>, accountId: number, id: number) {
  return packageTypeView(await requirePackageType(db, accountId, id));
}

/** Changes the fields given; `archived` archives (keeping the first time) or restores. */
export async function changePackageType(db: Kysely<DB>, accountId: number, id: number, body: UpdatePackageTypeBody) {
  const current = await requirePackageType(db, accountId, id);
  const { archived, name: givenName, ...fields } = body;
  const values: Updateable<PackageTypesTable> = { ...fields };
  if (givenName !== undefined) {
    const name = requiredText(givenName, "name");
    if (name !== current.name) await refuseTakenName(db, accountId, name);
    values.name = name;
  }
  if (archived !== undefined) values.archived_at = archived ? (current.archived_at ?? new Date()) : null;
  if (Object.keys(values).length === 0) return packageTypeView(current);
  try {
    return packageTypeView(await updatePackageType(db, id, values));
  } catch (error) {
    if (isUniqueViolation(error) && values.name) await refuseTakenName(db, accountId, values.name as string);
    throw error;
  }
}

export async function archivePackageType(db: Kysely<DB>, accountId: number, id: number) {
  return changePackageType(db, accountId, id, { archived: true });
}

async function refuseTakenName(db: Kysely<DB>, accountId: number, name: string) {
  const taken = await findPackageTypeByName(db, accountId, name);
  if (!taken) return;
  const archived = taken.archived_at ? " (archived; restore it with archived: false)" : "";
  throw unprocessable(`name ${name} is already used by package type ${taken.id}${archived}`);
}
