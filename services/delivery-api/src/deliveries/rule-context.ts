/**
 * What the delivery rules need to know about the caller's account besides the body: its
 * settings, default place, and the saved addresses, package types and zones the body names.
 */
import type { DeliveryCreateInput, DeliveryUpdateInput, RedeliveryInput } from "@dos/contracts";
import type { ClientAccount } from "../auth/client-account.ts";
import type { PlaceData } from "./delivery-draft.ts";

export interface CatalogueType {
  id: number;
  name: string;
  volume_dm3: number;
  weight_kg: number;
  fragility: string | null;
  temperature: string | null;
  is_size_category: boolean;
}

export interface RuleContext {
  /** The instant of the request: slots must start after it. */
  now: Date;
  account: ClientAccount;
  defaultPlace: PlaceData | null;
  /** Saved addresses of the account, by number (only those the body names). */
  savedAddresses: Map<number, PlaceData>;
  /** Active package types of the account (only those the body names). */
  packageTypes: Map<number, CatalogueType>;
  /** Delivered zones of the account, by postal code (only those the body names). */
  zones: Map<string, { latitude: number; longitude: number }>;
}

/** The catalogue entries a body refers to, so they can be loaded in one go. */
export interface BodyReferences {
  savedAddressIds: number[];
  packageTypeIds: number[];
  postalCodes: string[];
}

type AnyDeliveryBody = DeliveryCreateInput | DeliveryUpdateInput | RedeliveryInput;

export function referencesOf(body: AnyDeliveryBody, options: { packages: boolean }): BodyReferences {
  const refs: BodyReferences = { savedAddressIds: [], packageTypeIds: [], postalCodes: [] };
  for (const task of [body.pickup, body.dropoff]) {
    if (typeof task === "number") refs.savedAddressIds.push(task);
    else if (typeof task?.place?.postal_code === "string")
      refs.postalCodes.push(normalizePostalCode(task.place.postal_code));
  }
  if (options.packages && Array.isArray(body.packages)) {
    for (const item of body.packages as Array<{ package_type_id?: number }>) {
      if (typeof item.package_type_id === "number") refs.packageTypeIds.push(item.package_type_id);
    }
  }
  return refs;
}

/** A postal code as zones store it: trimmed, in capitals. */
export function normalizePostalCode(text: string): string {
  return text.trim().toUpperCase();
}
