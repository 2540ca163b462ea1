/**
 * delivery-api's side of the pricing contract: one request/reply on the quote subject. Pricing
 * not answering in time, not running, refusing the request or answering something that is not
 * a valid QuoteReply all end the same way for the caller: 503 with Retry-After, nothing saved.
 * An invalid reply is never taken as a price.
 *
 * One exception, NATS itself being down (docs/spec-decisions.md, "Pricing during a NATS
 * outage"): while this process's connection is not connected, and for a request lost with the
 * connection, the quote comes from the tariff replica (tariff-replica.ts) through the same rules
 * pricing uses (@dos/contracts) and is checked like a reply. A replica never loaded is a 503.
 */
import {
  compileValidator,
  jsonBody,
  natsNames,
  pricedDeliveryOf,
  type QuoteReply,
  QuoteReply as QuoteReplySchema,
  type QuoteRequest,
  quoteDelivery,
  SERVICE_ERROR_HEADERS,
  SERVICE_NAMES,
} from "@dos/contracts";
import {
  type AppMetrics,
  createGathering,
  type HttpError,
  type Logger,
  natsTraceHeaders,
  SpanKind,
  SpanStatusCode,
  startSpan,
  unavailable,
} from "@dos/service-kit";
import type { Msg, NatsConnection } from "@nats-io/nats-core";
import type { TariffReplica } from "./tariff-replica.ts";

/** Seconds a client is told to wait before retrying a request that pricing could not answer. */
const PRICING_RETRY_AFTER_SECONDS = 5;
/** Quotes that leave at once without waiting longer: in a burst, a group fills in a few ms. */
const GATHER_ENOUGH = 8;

export interface PricingClient {
  /** The price of a delivery; throws a 503 HttpError when pricing cannot give a valid one. */
  quote(request: QuoteRequest): Promise<QuoteReply>;
}

const validateReply = compileValidator<QuoteReply>(QuoteReplySchema);

export function createPricingClient(options: {
  nc: NatsConnection;
  namespace: string;
  timeoutMs: number;
  logger: Logger;
  replica: TariffReplica;
  metrics: AppMetrics;
  /** How long a quote waits for others to leave with it (API_PRICING_GATHER_MS). */
  gatherMs: number;
}): PricingClient {
  const { logger, replica } = options;
  // Quotes leave together, and the creates they price then reach the group commit together.
  const gathering = createGathering({ withinMs: options.gatherMs, enough: GATHER_ENOUGH });
  const subject = natsNames(options.namespace).services.pricing.quoteSubject;
  const connection = watchConnection(options.nc);
  const fromReplicaTotal = options.metrics.counter(
    "quotes_from_tariff_replica_total",
    "Quotes taken from the tariff replica because the NATS connection was down.",
  );
  let onReplica = false;

  /** What a reply must be to count as a price, wherever it came from. */
  const checkedReply = (body: unknown, refuse: (reason: string, details: Record<string, unknown>) => HttpError) => {
    const checked = validateReply(body);
    if (!checked.ok) {
      throw refuse("reply breaks the QuoteReply schema", { errors: checked.errors.map((e) => e.message) });
    }
    const inconsistency = replyInconsistency(checked.value);
    if (inconsistency) throw refuse(inconsistency, { reply: checked.value });
    return checked.value;
  };

  const quoteFromReplica = (request: QuoteRequest): QuoteReply => {
    const refuse = (reason: string, details: Record<string, unknown>) =>
      pricingUnavailable(logger, subject, `NATS down; ${reason}`, details);
    if (!replica.loaded) throw refuse("the tariff replica was never loaded", {});
    const delivery = pricedDeliveryOf(request);
    if (!delivery.ok) throw refuse("request refused by the pricing rules", { errors: delivery.errors });
    const reply = checkedReply(quoteDelivery(replica.versions(request.account_id), delivery.delivery), refuse);
    fromReplicaTotal.inc();
    if (!onReplica) {
      onReplica = true;
      logger.warn({ subject }, "NATS connection down: quoting from the tariff replica");
    }
    return reply;
  };

  return {
    async quote(request) {
      await gathering.join();
      if (!connection.connected()) return quoteFromReplica(request);
      const drops = connection.drops();
      let answer: PricingAnswer;
      try {
        answer = await requestPricing(options, subject, request);
      } catch (error) {
        // Lost with the connection, not refused by pricing: pricing not answering stays a 503.
        if (!connection.connected() || connection.drops() !== drops) return quoteFromReplica(request);
        throw error;
      }
      if (onReplica) {
        onReplica = false;
        logger.info({ subject }, "NATS connection back: quoting from the pricing service again");
      }
      const refuse = (reason: string, details: Record<string, unknown>) =>
        pricingUnavailable(logger, subject, reason, details);
      if (!answer.ok) throw refuse("error reply", { code: answer.code, errors: answer.messages });
      return checkedReply(answer.body, refuse);
    },
  };
}

/**
 * Whether the connection is up, from its status events (nats.js v3 has no synchronous "is
 * connected"), and how many times it dropped, so a request can tell it was lost with it.
 */
function watchConnection(nc: NatsConnection): { connected(): boolean; drops(): number } {
  let up = !nc.isClosed();
  let drops = 0;
  (async () => {
    for await (const status of nc.status()) {
      if (status.type === "disconnect" || status.type === "close") {
        if (up) drops++;
        up = false;
      } else if (status.type === "reconnect") {
        up = true;
      }
    }
  })().catch(() => {});
  return { connected: () => up && !nc.isClosed(), drops: () => drops };
}

/** Enough of a logger to say why pricing gave nothing usable (a request's logger fits). */
export type WarnLogger = Pick<Logger, "warn">;

/** A reply of pricing: its JSON body, or the error it answered (code and messages). */
export type PricingAnswer = { ok: true; body: unknown } | { ok: false; code: number; messages: string[] };

/**
 * One request to pricing. No answer in time, no responder or an undecodable reply throws the
 * 503; an error reply is returned, so each caller decides what a refusal means to its client.
 */
export async function requestPricing(
  options: { nc: NatsConnection; timeoutMs: number; logger: WarnLogger },
  subject: string,
  body: unknown,
): Promise<PricingAnswer> {
  const { timeoutMs, logger } = options;
  // A client span around the request; its context travels in the headers to pricing's span.
  const span = startSpan(SERVICE_NAMES.deliveryApi, `pricing ${subject.split(".").pop()}`, {
    kind: SpanKind.CLIENT,
    attributes: { "messaging.system": "nats", "messaging.destination.name": subject },
  });
  let msg: Msg;
  try {
    msg = await options.nc.request(subject, JSON.stringify(body), {
      timeout: timeoutMs,
      headers: natsTraceHeaders(span),
    });
    if (msg.headers?.get(SERVICE_ERROR_HEADERS.code)) span?.setStatus({ code: SpanStatusCode.ERROR });
    span?.end();
  } catch (error) {
    span?.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).name });
    span?.end();
    const e = error as Error & { isNoResponders?: () => boolean };
    if (e.name === "TimeoutError") {
      throw pricingUnavailable(
        logger,
        subject,
        "timeout",
        { timeoutMs },
        `pricing did not answer within ${timeoutMs} ms`,
      );
    }
    throw pricingUnavailable(logger, subject, e.isNoResponders?.() ? "no responders" : "request failed", { err: e });
  }
  const decoded = jsonBody(msg);
  const code = msg.headers?.get(SERVICE_ERROR_HEADERS.code);
  if (code) {
    const messages = (decoded as { errors?: unknown } | undefined)?.errors;
    const description = msg.headers?.get(SERVICE_ERROR_HEADERS.description) ?? "";
    return {
      ok: false,
      code: Number(code),
      messages:
        Array.isArray(messages) && messages.every((m) => typeof m === "string") && messages.length > 0
          ? messages
          : [description || "pricing refused the request"],
    };
  }
  if (decoded === undefined) throw pricingUnavailable(logger, subject, "reply is not JSON", { bytes: msg.data.length });
  return { ok: true, body: decoded };
}

/** The 503 every pricing failure ends in; the log line says why, the client is told to retry. */
export function pricingUnavailable(
  logger: WarnLogger,
  subject: string,
  reason: string,
  details: Record<string, unknown>,
  message = "pricing is temporarily unavailable",
): HttpError {
  logger.warn({ ...details, subject, reason }, "pricing gave no usable answer");
  return unavailable(`${message}; retry later`, PRICING_RETRY_AFTER_SECONDS);
}

/** What a schema cannot say: the lines add up to the price, and no tariff means no lines. */
function replyInconsistency(reply: QuoteReply): string | null {
  if (reply.price_cents === null) {
    return reply.tariff_id === null && reply.lines.length === 0 ? null : "a null price came with a tariff or lines";
  }
  if (reply.tariff_id === null) return "a price came without its tariff";
  const sum = reply.lines.reduce((total, line) => total + line.amount_cents, 0);
  return sum === reply.price_cents ? null : `the lines add up to ${sum}, not to price_cents ${reply.price_cents}`;
}
