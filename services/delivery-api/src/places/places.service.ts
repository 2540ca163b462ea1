/**
 * The default place and saved addresses, as operators set them. Phones are stored normalised;
 * a saved address must lie in one of the account's zones, since clients send tasks to it.
 */
import { formatTimestamp } from "@dos/contracts";
import { notFound, unprocessable } from "@dos/service-kit";
import type { Kysely, Selectable } from "kysely";
import { type AccountRow, requireAccount } from "../accounts/accounts.service.ts";
import type { DB, Db } from "../db/database.ts";
import { optionalText, requiredText } from "../lib/text.ts";
import { findZone } from "../zones/zones.repository.ts";
import { normalizePostalCode } from "../zones/zones.service.ts";
import { normalizePhone } from "./phone.ts";
import { placeColumnsOf } from "./place-columns.ts";
import {
  deleteSavedAddress,
  findDefaultPlace,
  findSavedAddress,
  insertSavedAddress,
  listSavedAddresses,
  type PlaceColumns,
  updateSavedAddress,
  upsertDefaultPlace,
} from "./places.repository.ts";
import type { PlaceBody, PlacePatchBody, SavedPlace } from "./places.schemas.ts";
import type { PlacesTable } from "./places.table.ts";

function placeView(row: Selectable<PlacesTable>): SavedPlace {
  return {
    id: row.id,
    label: row.label,
    ...placeColumnsOf(row),
    created_at: formatTimestamp(row.created_at),
  };
}

/** The default place may lie outside the zones (an operator hub); its phone is optional. */
export async function putDefaultPlace(db: Kysely<DB>, accountId: number, body: PlaceBody) {
  const account = await requireAccount(db, accountId);
  const columns = placeColumns(body, account, { phoneRequired: false });
  return placeView(await upsertDefaultPlace(db, accountId, columns));
}

export async function getDefaultPlace(db: Kysely<DB>, accountId: number) {
  await requireAccount(db, accountId);
  const row = await findDefaultPlace(db, accountId);
  if (!row) throw notFound("default place");
  return placeView(row);
}

export async function createSavedAddress(db: Kysely<DB>, accountId: number, body: PlaceBody) {
  const account = await requireAccount(db, accountId);
  const columns = placeColumns(body, account, { phoneRequired: !account.recipient_phone_optional });
  await requireZone(db, accountId, columns.postal_code);
  return placeView(await insertSavedAddress(db, accountId, columns));
}

export async function listAddresses(db: Kysely<DB>, accountId: number) {
  await requireAccount(db, accountId);
  return (await listSavedAddresses(db, accountId)).map(placeView);
}

async function requireSavedAddress(db: Db, accountId: number, addressId: number) {
  const row = await findSavedAddress(db, accountId, addressId);
  if (!row) throw notFound(`address ${addressId}`);
  return row;
}

export async function getSavedAddress(db: Kysely<DB>, accountId: number, addressId: number) {
  await requireAccount(db, accountId);
  return placeView(await requireSavedAddress(db, accountId, addressId));
}

/** Applies the fields given over the stored ones, then judges the result as a whole place. */
export async function patchSavedAddress(db: Kysely<DB>, accountId: number, addressId: number, body: PlacePatchBody) {
  const account = await requireAccount(db, accountId);
  return db.transaction().execute(async (trx) => {
    const current = await requireSavedAddress(trx, accountId, addressId);
    const merged: PlaceBody = { ...placeView(current), ...body };
    const columns = placeColumns(merged, account, { phoneRequired: !account.recipient_phone_optional });
    if (columns.postal_code !== current.postal_code) await requireZone(trx, accountId, columns.postal_code);
    return placeView(await updateSavedAddress(trx, addressId, columns));
  });
}

export async function removeSavedAddress(db: Kysely<DB>, accountId: number, addressId: number) {
  await requireAccount(db, accountId);
  await db.transaction().execute(async (trx) => {
    await requireSavedAddress(trx, accountId, addressId);
    await deleteSavedAddress(trx, addressId);
  });
}

async function requireZone(db: Db, accountId: number, postalCode: string) {
  if (!(await findZone(db, accountId, postalCode))) {
    throw unprocessable(`postal_code ${postalCode} is not in a delivery zone of the account; add the zone first`);
  }
}

/** Checks and normalises a whole place; every problem is reported at once. */
function placeColumns(body: PlaceBody, account: AccountRow, rules: { phoneRequired: boolean }): PlaceColumns {
  const errors: string[] = [];
  const attempt = <T>(fn: () => T, fallback: T): T => {
    try {
      return fn();
    } catch (error) {
      errors.push(...((error as { messages?: string[] }).messages ?? [(error as Error).message]));
      return fallback;
    }
  };
  const phoneText = optionalText(body.recipient_phone);
  if (!phoneText && rules.phoneRequired) errors.push("recipient_phone is required");
  const hasLatitude = body.latitude !== undefined && body.latitude !== null;
  const hasLongitude = body.longitude !== undefined && body.longitude !== null;
  if (hasLatitude !== hasLongitude) errors.push("latitude and longitude must be given together");
  const columns: PlaceColumns = {
    label: optionalText(body.label),
    recipient_name: attempt(() => requiredText(body.recipient_name, "recipient_name"), ""),
    recipient_phone: phoneText ? attempt(() => normalizePhone(phoneText, account.phone_default_region), null) : null,
    recipient_email: optionalText(body.recipient_email),
    company_name: optionalText(body.company_name),
    address: attempt(() => requiredText(body.address, "address"), ""),
    postal_code: attempt(() => normalizePostalCode(body.postal_code), ""),
    city: attempt(() => requiredText(body.city, "city"), ""),
    address_instructions: optionalText(body.address_instructions),
    latitude: hasLatitude ? body.latitude : null,
    longitude: hasLongitude ? body.longitude : null,
  };
  if (errors.length > 0) throw unprocessable(errors);
  return columns;
}
