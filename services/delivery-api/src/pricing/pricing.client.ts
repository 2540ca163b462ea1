/**
 * delivery-api's side of the pricing contract: one request/reply on the quote subject. Pricing
 * not answering in time, not running, refusing the request or answering something that is not
 * a valid QuoteReply all end the same way for the caller: 503 with Retry-After, nothing saved.
 * An invalid reply is never taken as a price.
 */
import {
  compileValidator,
  natsNames,
  type QuoteReply,
  QuoteReply as QuoteReplySchema,
  type QuoteRequest,
  SERVICE_ERROR_HEADERS,
  SERVICE_NAMES,
} from "@dos/contracts";
import {
  type HttpError,
  type Logger,
  natsTraceHeaders,
  SpanKind,
  SpanStatusCode,
  startSpan,
  unavailable,
} from "@dos/service-kit";
import type { Msg, NatsConnection } from "@nats-io/nats-core";

/** Seconds a client is told to wait before retrying a request that pricing could not answer. */
export const PRICING_RETRY_AFTER_SECONDS = 5;

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
}): PricingClient {
  const subject = natsNames(options.namespace).services.pricing.quoteSubject;
  return {
    async quote(request) {
      const answer = await requestPricing(options, subject, request);
      const refuse = (reason: string, details: Record<string, unknown>) =>
        pricingUnavailable(options.logger, subject, reason, details);
      if (!answer.ok) throw refuse("error reply", { code: answer.code, errors: answer.messages });
      const checked = validateReply(answer.body);
      if (!checked.ok) {
        throw refuse("reply breaks the QuoteReply schema", { errors: checked.errors.map((e) => e.message) });
      }
      const inconsistency = replyInconsistency(checked.value);
      if (inconsistency) throw refuse(inconsistency, { reply: checked.value });
      return checked.value;
    },
  };
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
  let decoded: unknown;
  try {
    decoded = msg.data.length === 0 ? undefined : msg.json();
  } catch {
    decoded = undefined;
  }
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
