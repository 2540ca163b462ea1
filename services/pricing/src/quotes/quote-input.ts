/**
 * Turns a quote request off the bus into a delivery the rules can price, or the list of what
 * is wrong with it: the contract schema first, then what a schema cannot say (real calendar
 * dates, a slot that ends after it starts).
 */
import { compileValidator, parseTimestamp, QuoteRequest } from "@dos/contracts";
import { validationMessages } from "@dos/service-kit";
import type { PricedDelivery } from "./price-rules.ts";

const validateQuoteRequest = compileValidator<QuoteRequest>(QuoteRequest);

export type QuoteInput = { ok: true; accountId: number; delivery: PricedDelivery } | { ok: false; errors: string[] };

/** Parses and checks a decoded JSON value as a QuoteRequest. */
export function readQuoteRequest(value: unknown): QuoteInput {
  const checked = validateQuoteRequest(value);
  if (!checked.ok) return { ok: false, errors: validationMessages(checked.errors) };
  const request = checked.value;
  const errors: string[] = [];
  const instant = (text: string, label: string) => {
    const date = parseTimestamp(text);
    if (!date) errors.push(`${label} is not a real date and time`);
    return date ?? new Date(0);
  };
  const requestedAt = instant(request.requested_at, "requested_at");
  const slots = request.tasks.map((task, index) => {
    const startsAt = instant(task.slot_starting_at, `tasks[${index}].slot_starting_at`);
    const endsAt = instant(task.slot_ending_at, `tasks[${index}].slot_ending_at`);
    if (errors.length === 0 && endsAt.getTime() <= startsAt.getTime()) {
      errors.push(`tasks[${index}].slot_ending_at must be after slot_starting_at`);
    }
    return { startsAt, endsAt };
  });
  if (errors.length > 0) return { ok: false, errors };
  return {
    ok: true,
    accountId: request.account_id,
    delivery: { direction: request.direction, packages: request.packages, slots, requestedAt },
  };
}
