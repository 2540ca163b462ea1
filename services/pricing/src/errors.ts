/**
 * The errors pricing answers on the bus, declared once. Each becomes a NATS services error
 * reply: `Nats-Service-Error-Code` carries the HTTP-like code, `Nats-Service-Error` the
 * messages joined, and the body is the usual `{"errors": [...]}`.
 */
export class BusError extends Error {
  override name = "BusError";
  readonly code: number;
  readonly messages: string[];

  constructor(code: number, messages: string | string[]) {
    const list = Array.isArray(messages) ? messages : [messages];
    super(list.join("; "));
    this.code = code;
    this.messages = list;
  }
}

/** 400: the message does not follow the contract schema. */
export const malformedRequest = (messages: string[]) => new BusError(400, messages);
/** 422: well-formed, but the tariff breaks a rule a schema cannot express. */
export const invalidTariff = (messages: string[]) => new BusError(422, messages);
/** 404: no such tariff version for this account. */
export const tariffNotFound = (tariffId: number) => new BusError(404, `tariff ${tariffId} not found`);
/** 409: the account already has a version starting at that instant. */
export const tariffVersionExists = (effectiveFrom: string) =>
  new BusError(409, `effective_from ${effectiveFrom} already starts another tariff version of this account`);
/** 503: PostgreSQL did not answer; the caller may retry. */
export const storageUnavailable = () => new BusError(503, "pricing storage is temporarily unavailable");
/** 500: anything else; logged in full, told little. */
export const internalError = () => new BusError(500, "pricing failed to answer; see its logs");
