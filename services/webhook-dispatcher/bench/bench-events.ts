/** The benchmark's delivery events: each delivery's events in sequence, sequence after sequence. */
import type { DeliveryEvent } from "@dos/contracts";
import { makeEvent } from "../test/events.ts";

export const ACCOUNT = 1;
export const EVENTS_PER_DELIVERY = 4;

/** Sequence 1 of every delivery, then sequence 2 of every delivery, and so on, as a busy relay publishes. */
export function benchEvents(firstDelivery: number, deliveries: number): DeliveryEvent[] {
  const events = [];
  for (let sequence = 1; sequence <= EVENTS_PER_DELIVERY; sequence++) {
    for (let d = firstDelivery; d < firstDelivery + deliveries; d++) {
      events.push(makeEvent({ accountId: ACCOUNT, deliveryId: d, sequence }));
    }
  }
  return events;
}
