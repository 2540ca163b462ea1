/** Copies of a place between rows and bodies: one list of fields, wherever a place is read. */
import type { Place } from "@dos/contracts";
import type { PlaceColumns } from "./places.table.ts";

/** The v2 Place of a row holding the place columns (coordinates are ours, not shown). */
export function placeOutput(row: Omit<PlaceColumns, "latitude" | "longitude">): Place {
  return {
    recipient_name: row.recipient_name,
    recipient_phone: row.recipient_phone,
    recipient_email: row.recipient_email,
    company_name: row.company_name,
    address: row.address,
    postal_code: row.postal_code,
    city: row.city,
    address_instructions: row.address_instructions,
  };
}

/** The place columns of a row (a place, a saved address or a task), coordinates included. */
export function placeColumnsOf(row: PlaceColumns): PlaceColumns {
  return { ...placeOutput(row), latitude: row.latitude, longitude: row.longitude };
}
