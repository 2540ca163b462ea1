/**
 * Slots of the task whose slot the client does not choose (at the default place, or given as a
 * saved address number): computed from the client's task and the account settings.
 */
import type { TaskKind } from "./deliveries.table.ts";

export interface Slot {
  start: Date;
  end: Date;
}

export interface SlotSettings {
  /** Minutes between the computed task and the client's task. */
  gapMinutes: number;
  /** Length of the computed slot. */
  durationMinutes: number;
}

const MINUTE = 60_000;

/**
 * A pickup ends `gap` minutes before the dropoff starts and lasts `duration`, but never starts
 * in the past (it is clamped to now); a dropoff starts `gap` minutes after the pickup ends.
 * Null when no pickup slot fits before the dropoff.
 */
export function computedSlot(kind: TaskKind, anchor: Slot, settings: SlotSettings, now: Date): Slot | null {
  if (kind === "dropoff") {
    const start = new Date(anchor.end.getTime() + settings.gapMinutes * MINUTE);
    return { start, end: new Date(start.getTime() + settings.durationMinutes * MINUTE) };
  }
  const end = new Date(anchor.start.getTime() - settings.gapMinutes * MINUTE);
  const start = new Date(Math.max(end.getTime() - settings.durationMinutes * MINUTE, now.getTime()));
  return end.getTime() > start.getTime() ? { start, end } : null;
}

export const otherKind = (kind: TaskKind): TaskKind => (kind === "pickup" ? "dropoff" : "pickup");
