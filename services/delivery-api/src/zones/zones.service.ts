/** The delivery zones of an account, as operators add, replace and remove them. */
import { notFound, unprocessable } from "@dos/service-kit";
import type { Kysely } from "kysely";
import { requireAccount } from "../accounts/accounts.service.ts";
import type { DB } from "../db/database.ts";
import { deleteZones, deleteZonesExcept, listZones, upsertZones, type ZoneValues } from "./zones.repository.ts";

const POSTAL_CODE = /^[0-9A-Z](?:[0-9A-Z -]*[0-9A-Z])?$/;

/** Postal codes are compared as trimmed capitals ("sw1a 1aa" and "SW1A 1AA" are one zone). */
export function normalizePostalCode(value: string, label = "postal_code"): string {
  const code = value.trim().toUpperCase();
  if (!POSTAL_CODE.test(code)) throw unprocessable(`${label} must hold letters, digits, spaces or hyphens only`);
  return code;
}

export async function getZones(db: Kysely<DB>, accountId: number) {
  await requireAccount(db, accountId);
  return listZones(db, accountId);
}

/** Adds zones (or moves the centroid of existing ones); `replace` also removes every zone not given. */
export async function saveZones(db: Kysely<DB>, accountId: number, given: ZoneValues[], replace: boolean) {
  const zones = normalizeZones(given);
  return db.transaction().execute(async (trx) => {
    await requireAccount(trx, accountId);
    if (replace)
      await deleteZonesExcept(
        trx,
        accountId,
        zones.map((zone) => zone.postal_code),
      );
    await upsertZones(trx, accountId, zones);
    return listZones(trx, accountId);
  });
}

/** Removes the postal codes, all or none; a code given in the path that cannot exist is a 404. */
export async function removeZones(db: Kysely<DB>, accountId: number, postalCodes: string[], inPath = false) {
  const codes = postalCodes.map((code, i) => {
    if (inPath && !POSTAL_CODE.test(code.trim().toUpperCase())) throw notFound(`zone ${code.slice(0, 40)}`);
    return normalizePostalCode(code, `postal_codes[${i}]`);
  });
  return db.transaction().execute(async (trx) => {
    await requireAccount(trx, accountId);
    const removed = await deleteZones(trx, accountId, codes);
    const missing = codes.filter((code) => !removed.includes(code));
    // All or nothing: a typo in one code must not leave the others half removed.
    if (missing.length > 0) throw notFound(`zone ${missing.join(", ")}`);
    return listZones(trx, accountId);
  });
}

function normalizeZones(given: ZoneValues[]): ZoneValues[] {
  const seen = new Map<string, number>();
  const errors: string[] = [];
  const zones = given.map((zone, i) => {
    let postalCode = zone.postal_code;
    try {
      postalCode = normalizePostalCode(zone.postal_code, `zones[${i}].postal_code`);
    } catch (error) {
      errors.push(...(error as { messages: string[] }).messages);
    }
    const first = seen.get(postalCode);
    if (first !== undefined) errors.push(`zones[${i}].postal_code ${postalCode} is already given in zones[${first}]`);
    else seen.set(postalCode, i);
    return { postal_code: postalCode, latitude: zone.latitude, longitude: zone.longitude };
  });
  if (errors.length > 0) throw unprocessable(errors);
  return zones;
}
