/**
 * The spec's rules on a delivery body, as pure functions of the body, the account's catalogue
 * and the instant of the request: direction from the tasks given, the task at the default place
 * filled in with a computed slot, saved addresses, slots, places and packages. Every problem is
 * collected, and all are answered at once in one 422.
 */
import {
  type DeliveryCreateInput,
  type DeliveryUpdateInput,
  type PackageInput,
  type PlaceInput,
  parseTimestamp,
  type RedeliveryInput,
} from "@dos/contracts";
import { HttpError, unprocessable } from "@dos/service-kit";
import { normalizePhone } from "../places/phone.ts";
import { addressHasExtras } from "./address-rule.ts";
import { ruleMessages as m } from "./deliveries.errors.ts";
import type { TaskKind } from "./deliveries.table.ts";
import { CUSTOM_PACKAGE_TYPE, type DeliveryDraft, type PackageDraft, type PlaceData } from "./delivery-draft.ts";
import { normalizePostalCode, type RuleContext } from "./rule-context.ts";
import { computedSlot, otherKind, type Slot } from "./slots.ts";

const KINDS: TaskKind[] = ["pickup", "dropoff"];

/** The delivery a create (or quote) body describes; throws a 422 listing every problem. */
export function buildCreateDraft(input: DeliveryCreateInput, ctx: RuleContext): DeliveryDraft {
  if (input.pickup === undefined && input.dropoff === undefined) throw unprocessable(m.taskRequired());
  const errors: string[] = [];
  const tasks: Partial<
    Record<TaskKind, { place: PlaceData; slot: Slot | null; atDefault: boolean; savedId: number | null }>
  > = {};
  for (const kind of KINDS) {
    const value = input[kind];
    if (value === undefined) {
      if (ctx.defaultPlace)
        tasks[kind] = { place: { ...ctx.defaultPlace }, slot: null, atDefault: true, savedId: null };
      else errors.push(m.noDefaultPlace(kind));
    } else if (typeof value === "number") {
      const saved = ctx.savedAddresses.get(value);
      if (saved) tasks[kind] = { place: { ...saved }, slot: null, atDefault: false, savedId: value };
      else errors.push(m.unknownSavedAddress(kind, value));
    } else {
      const slot = checkSlot(kind, value.slot_starting_at, value.slot_ending_at, null, ctx, errors);
      const place = checkPlace(`${kind}.place`, value.place, null, ctx, errors);
      tasks[kind] = { place, slot, atDefault: false, savedId: null };
    }
  }
  const { pickup, dropoff } = tasks;
  const packages = resolvePackages(input.packages, ctx, errors);
  if (!pickup || !dropoff) throw unprocessable(errors);
  if (!pickup.slot && !dropoff.slot && errors.length === 0) errors.push(m.noSlotGiven());
  for (const kind of KINDS) {
    const task = tasks[kind];
    const anchor = tasks[otherKind(kind)]?.slot;
    // Only a task whose slot the client could not give is computed: a client's own invalid slot stays an error.
    if (task && !task.slot && anchor && (task.atDefault || task.savedId !== null)) {
      task.slot = fillSlot(kind, anchor, ctx, errors);
    }
  }
  if (pickup.slot && dropoff.slot) checkOrder(pickup.slot, dropoff.slot, errors);
  if (errors.length > 0 || !pickup.slot || !dropoff.slot) throw unprocessable(errors);
  const draftTask = (kind: TaskKind, t: typeof pickup, slot: Slot) => ({
    kind,
    at_default_place: t.atDefault,
    saved_address_id: t.savedId,
    slot_starting_at: slot.start,
    slot_ending_at: slot.end,
    place: t.place,
  });
  return {
    direction: input.pickup === undefined ? "outbound" : input.dropoff === undefined ? "inbound" : "other",
    sender_display_name: input.sender_display_name ?? null,
    comments: input.comments ?? null,
    client_order_reference: input.client_order_reference ?? null,
    bring_back_containers: input.bring_back_containers ?? ctx.account.bringBackContainers,
    pickup: draftTask("pickup", pickup, pickup.slot),
    dropoff: draftTask("dropoff", dropoff, dropoff.slot),
    packages,
  };
}

export interface MergeResult {
  draft: DeliveryDraft;
  /** Slots or packages changed, so the price must be quoted again. */
  repriced: boolean;
}

/**
 * An update (partial body over a stored delivery) or a redelivery (partial body over the
 * original; direction, packages and client_order_reference kept, every slot in the future).
 */
export function mergeDraft(
  base: DeliveryDraft,
  patch: DeliveryUpdateInput | RedeliveryInput,
  ctx: RuleContext,
  mode: "update" | "redelivery",
): MergeResult {
  const errors: string[] = [];
  const draft = structuredClone(base);
  if (patch.sender_display_name !== undefined) draft.sender_display_name = patch.sender_display_name;
  if (patch.comments !== undefined) draft.comments = patch.comments;
  if (patch.bring_back_containers !== undefined) draft.bring_back_containers = patch.bring_back_containers;
  if (mode === "update") {
    const update = patch as DeliveryUpdateInput;
    if (update.client_order_reference !== undefined) draft.client_order_reference = update.client_order_reference;
  }
  const slotChanged: Record<TaskKind, boolean> = { pickup: false, dropoff: false };
  for (const kind of KINDS) {
    const value = patch[kind];
    const task = draft[kind];
    if (value === undefined) continue;
    if (task.at_default_place) {
      errors.push(m.atDefaultPlace(kind));
    } else if (typeof value === "number") {
      const saved = ctx.savedAddresses.get(value);
      if (saved) Object.assign(task, { place: { ...saved }, saved_address_id: value });
      else errors.push(m.unknownSavedAddress(kind, value));
    } else {
      if (value.slot_starting_at !== undefined || value.slot_ending_at !== undefined) {
        const current = { start: task.slot_starting_at, end: task.slot_ending_at };
        const slot = checkSlot(kind, value.slot_starting_at, value.slot_ending_at, current, ctx, errors);
        if (slot) Object.assign(task, { slot_starting_at: slot.start, slot_ending_at: slot.end });
        slotChanged[kind] = true;
      }
      if (value.place !== undefined) {
        task.place = checkPlace(`${kind}.place`, value.place, task.place, ctx, errors);
        task.saved_address_id = null;
      }
    }
  }
  for (const kind of KINDS) {
    const task = draft[kind];
    const anchor = draft[otherKind(kind)];
    if (!task.at_default_place && mode === "redelivery" && !slotChanged[kind] && task.slot_starting_at <= ctx.now) {
      errors.push(m.alreadyStarted(kind));
    }
    // A started anchor is already an error; a slot computed from it would only add noise.
    const anchorValid = anchor.slot_starting_at > ctx.now;
    if (task.at_default_place && anchorValid && (mode === "redelivery" || slotChanged[anchor.kind])) {
      const slot = fillSlot(kind, { start: anchor.slot_starting_at, end: anchor.slot_ending_at }, ctx, errors);
      if (slot) Object.assign(task, { slot_starting_at: slot.start, slot_ending_at: slot.end });
    }
  }
  if (slotChanged.pickup || slotChanged.dropoff) {
    const slotOf = (t: typeof draft.pickup) => ({ start: t.slot_starting_at, end: t.slot_ending_at });
    checkOrder(slotOf(draft.pickup), slotOf(draft.dropoff), errors);
  }
  const newPackages = mode === "update" ? (patch as DeliveryUpdateInput).packages : undefined;
  if (newPackages !== undefined) draft.packages = resolvePackages(newPackages, ctx, errors);
  if (errors.length > 0) throw unprocessable(errors);
  return {
    draft,
    repriced: mode === "redelivery" || slotChanged.pickup || slotChanged.dropoff || newPackages !== undefined,
  };
}

function fillSlot(kind: TaskKind, anchor: Slot, ctx: RuleContext, errors: string[]): Slot | null {
  const settings = {
    gapMinutes: ctx.account.defaultTaskGapMinutes,
    durationMinutes: ctx.account.defaultTaskDurationMinutes,
  };
  const slot = computedSlot(kind, anchor, settings, ctx.now);
  if (!slot) errors.push(m.noTimeForDefaultPickup(settings.gapMinutes));
  return slot;
}

function checkOrder(pickup: Slot, dropoff: Slot, errors: string[]) {
  if (dropoff.end <= pickup.start) errors.push(m.dropoffBeforePickup());
}

/** The slot given (over the current one for a partial change), or null after recording why not. */
function checkSlot(
  label: string,
  startText: string | undefined,
  endText: string | undefined,
  current: Slot | null,
  ctx: RuleContext,
  errors: string[],
): Slot | null {
  const start = startText === undefined ? current?.start : parseTimestamp(startText);
  const end = endText === undefined ? current?.end : parseTimestamp(endText);
  if (start === null) errors.push(m.notADate(`${label}.slot_starting_at`));
  if (end === null) errors.push(m.notADate(`${label}.slot_ending_at`));
  if (!start || !end) return null;
  const before = errors.length;
  if (end <= start) errors.push(m.endNotAfterStart(label));
  if (start <= ctx.now) errors.push(m.alreadyStarted(label));
  return errors.length === before ? { start, end } : null;
}

const REQUIRED_TEXT = ["recipient_name", "address", "postal_code", "city"] as const;
const OPTIONAL_TEXT = ["recipient_email", "company_name", "address_instructions"] as const;

/** A place given in full (create) or in part over the current one (update, redelivery). */
function checkPlace(
  label: string,
  given: Partial<PlaceInput>,
  current: PlaceData | null,
  ctx: RuleContext,
  errors: string[],
): PlaceData {
  const place: PlaceData = current
    ? { ...current }
    : {
        recipient_name: "",
        recipient_phone: null,
        recipient_email: null,
        company_name: null,
        address: "",
        postal_code: "",
        city: "",
        address_instructions: null,
        latitude: null,
        longitude: null,
      };
  for (const field of REQUIRED_TEXT) {
    const value = given[field];
    if (value === undefined) continue;
    // Postal codes are kept as zones keep them: trimmed, in capitals.
    place[field] = field === "postal_code" ? normalizePostalCode(value) : value.trim();
    if (place[field] === "") errors.push(m.blank(`${label}.${field}`));
  }
  for (const field of OPTIONAL_TEXT) {
    const value = given[field];
    if (value !== undefined) place[field] = value?.trim() || null;
  }
  if (given.address !== undefined && place.address !== "" && addressHasExtras(place.address)) {
    errors.push(m.addressHasExtras(`${label}.address`));
  }
  if (given.postal_code !== undefined && place.postal_code !== "") {
    const zone = ctx.zones.get(place.postal_code);
    if (zone) Object.assign(place, { latitude: zone.latitude, longitude: zone.longitude });
    else errors.push(m.outsideZones(`${label}.postal_code`, place.postal_code));
  }
  if (given.recipient_phone !== undefined) {
    place.recipient_phone = normalizedPhone(`${label}.recipient_phone`, given.recipient_phone, ctx, errors);
  }
  const phoneAsked = current === null || given.recipient_phone !== undefined;
  if (phoneAsked && place.recipient_phone === null && !ctx.account.recipientPhoneOptional) {
    errors.push(m.phoneRequired(`${label}.recipient_phone`));
  }
  return place;
}

function normalizedPhone(label: string, value: string | null, ctx: RuleContext, errors: string[]): string | null {
  const text = value?.trim();
  if (!text) return null;
  try {
    return normalizePhone(text, ctx.account.phoneDefaultRegion, label);
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    errors.push(...error.messages);
    return text;
  }
}

/** Packages inline or from the catalogue; a size category stands alone with amount 1. */
function resolvePackages(inputs: PackageInput[], ctx: RuleContext, errors: string[]): PackageDraft[] {
  let sizeCategory: string | null = null;
  const packages = inputs.map((input, index): PackageDraft => {
    if ("package_type_id" in input) {
      const type = ctx.packageTypes.get(input.package_type_id);
      if (!type) errors.push(m.unknownPackageType(index, input.package_type_id));
      if (type?.is_size_category) sizeCategory = type.name;
      return {
        package_type_id: input.package_type_id,
        type: type?.name ?? "",
        name: type?.name ?? "",
        amount: input.amount,
        volume_dm3: type?.volume_dm3 ?? 0,
        weight_kg: type?.weight_kg ?? 0,
        fragility: type?.fragility ?? null,
        temperature: type?.temperature ?? null,
        client_reference: null,
      };
    }
    const name = input.name.trim();
    if (name === "") errors.push(m.blank(`packages[${index}].name`));
    return {
      package_type_id: null,
      type: CUSTOM_PACKAGE_TYPE,
      name,
      amount: input.amount,
      volume_dm3: input.volume_dm3,
      weight_kg: input.weight_kg,
      fragility: input.fragility ?? null,
      temperature: input.temperature ?? null,
      client_reference: input.client_reference?.trim() || null,
    };
  });
  if (sizeCategory !== null && (inputs.length !== 1 || inputs[0]?.amount !== 1)) {
    errors.push(m.sizeCategoryAlone(sizeCategory));
  }
  return packages;
}
