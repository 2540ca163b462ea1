/**
 * The `quote` endpoint: reads the request, finds the account's tariff versions (in memory
 * after the first quote; see tariff-cache.ts) and prices the delivery. Answers synchronously
 * when the tariffs are cached, so the hot path allocates no promise and touches no database.
 * The `quote-batch` endpoint prices each quote of a batch the same way.
 */
import {
  type PricedDelivery,
  type QuoteBatchReply,
  type QuoteBatchRequest,
  type QuoteReply,
  quoteDelivery,
  type TariffVersion,
} from "@dos/contracts";
import { type AppMetrics, HttpError } from "@dos/service-kit";
import { malformedRequest } from "../errors.ts";
import type { TariffCache } from "../tariffs/tariff-cache.ts";
import { readQuoteRequest } from "./quote-input.ts";

const QUOTE_OUTCOMES = ["priced", "no_tariff", "invalid", "failed"] as const;
export type QuoteOutcome = (typeof QUOTE_OUTCOMES)[number];

/** Prices one quote request (undecoded JSON); throws an HttpError to refuse it. */
export type QuoteHandler = (message: unknown) => QuoteReply | Promise<QuoteReply>;

type QuoteAnswer = QuoteBatchReply["answers"][number];

export function createQuoteHandler(deps: { cache: TariffCache; metrics: AppMetrics }): QuoteHandler {
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

  return (message) => {
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

/**
 * The `quote-batch` endpoint: each quote answered as `quote` answers it, in the request's order.
 * A quote `quote` would refuse (4xx) is refused alone; any other failure (the tariffs' storage
 * down) fails the whole request, as it would fail each quote. Synchronous when every quote is.
 */
export function createQuoteBatchHandler(quote: QuoteHandler) {
  const refusedOrThrow = (error: unknown): QuoteAnswer => {
    if (error instanceof HttpError && error.statusCode < 500) {
      return { refused: { code: error.statusCode, errors: error.messages } };
    }
    throw error;
  };
  const answerOf = (message: unknown): QuoteAnswer | Promise<QuoteAnswer> => {
    try {
      const reply = quote(message);
      return reply instanceof Promise ? reply.then((value) => ({ reply: value }), refusedOrThrow) : { reply };
    } catch (error) {
      return refusedOrThrow(error);
    }
  };
  return (request: QuoteBatchRequest): QuoteBatchReply | Promise<QuoteBatchReply> => {
    const answers = request.quotes.map(answerOf);
    if (!answers.some((answer) => answer instanceof Promise)) return { answers: answers as QuoteAnswer[] };
    return Promise.all(answers).then((settled) => ({ answers: settled }));
  };
}
