/**
 * Turns a quote request off the bus into a delivery the rules can price, or the list of what
 * is wrong with it: the contract schema first, then what a schema cannot say (pricedDeliveryOf).
 */
import { compileValidator, type PricedDelivery, pricedDeliveryOf, QuoteRequest } from "@dos/contracts";
import { validationMessages } from "@dos/service-kit";

const validateQuoteRequest = compileValidator<QuoteRequest>(QuoteRequest);

export type QuoteInput = { ok: true; accountId: number; delivery: PricedDelivery } | { ok: false; errors: string[] };

/** Parses and checks a decoded JSON value as a QuoteRequest. */
export function readQuoteRequest(value: unknown): QuoteInput {
  const checked = validateQuoteRequest(value);
  if (!checked.ok) return { ok: false, errors: validationMessages(checked.errors) };
  const read = pricedDeliveryOf(checked.value);
  return read.ok ? { ok: true, accountId: checked.value.account_id, delivery: read.delivery } : read;
}
