/**
 * The `quote` endpoint: reads the request, finds the account's tariff versions (in memory
 * after the first quote; see tariff-cache.ts) and prices the delivery. Answers synchronously
 * when the tariffs are cached, so the hot path allocates no promise and touches no database.
 */
import { type PricedDelivery, type QuoteReply, quoteDelivery, type TariffVersion } from "@dos/contracts";
import type { AppMetrics } from "@dos/service-kit";
import { malformedRequest } from "../errors.ts";
import type { TariffCache } from "../tariffs/tariff-cache.ts";
import { readQuoteRequest } from "./quote-input.ts";

const QUOTE_OUTCOMES = ["priced", "no_tariff", "invalid", "failed"] as const;
export type QuoteOutcome = (typeof QUOTE_OUTCOMES)[number];

export function createQuoteHandler(deps: { cache: TariffCache; metrics: AppMetrics }) {
  const duration = deps.metrics.histogram(
    "pricing_quote_duration_seconds",
    "Time to answer a quote, from its arrival to the reply (excluding the bus).",
    ["outcome"],
    [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5],
  );
  const quotes = deps.metrics.counter("pricing_quotes_total", "Quotes answered, by outcome.", ["outcome"]);
  // Children bound once per outcome: the hot path skips hashing a label set per quote.
  const byOutcome = Object.fromEntries(
    QUOTE_OUTCOMES.map((outcome) => [outcome, { count: quotes.labels(outcome), time: duration.labels(outcome) }]),
  ) as Record<QuoteOutcome, { count: ReturnType<typeof quotes.labels>; time: ReturnType<typeof duration.labels> }>;
  const done = (startedAt: bigint, outcome: QuoteOutcome) => {
    byOutcome[outcome].count.inc();
    byOutcome[outcome].time.observe(Number(process.hrtime.bigint() - startedAt) / 1e9);
  };
  const price = (versions: TariffVersion[], delivery: PricedDelivery, startedAt: bigint): QuoteReply => {
    const reply = quoteDelivery(versions, delivery);
    done(startedAt, reply.price_cents === null ? "no_tariff" : "priced");
    return reply;
  };

  return (message: unknown): QuoteReply | Promise<QuoteReply> => {
    const startedAt = process.hrtime.bigint();
    const input = readQuoteRequest(message);
    if (!input.ok) {
      done(startedAt, "invalid");
      throw malformedRequest(input.errors);
    }
    const versions = deps.cache.versions(input.accountId);
    if (Array.isArray(versions)) return price(versions, input.delivery, startedAt);
    return versions.then(
      (loaded) => price(loaded, input.delivery, startedAt),
      (error: unknown) => {
        done(startedAt, "failed");
        throw error;
      },
    );
  };
}
