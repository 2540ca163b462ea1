/**
 * The errors pricing answers on the bus, declared once. Each becomes a NATS services error
 * reply (the kit's startJsonService): `Nats-Service-Error-Code` carries the HTTP-like code,
 * `Nats-Service-Error` the messages joined, and the body is the usual `{"errors": [...]}`.
 */
import { HttpError } from "@dos/service-kit";

/** 400: the message does not follow the contract schema. */
export const malformedRequest = (messages: string[]) => new HttpError(400, messages);
/** 422: well-formed, but the tariff breaks a rule a schema cannot express. */
export const invalidTariff = (messages: string[]) => new HttpError(422, messages);
/** 404: no such tariff version for this account. */
export const tariffNotFound = (tariffId: number) => new HttpError(404, `tariff ${tariffId} not found`);
/** 409: the account already has a version starting at that instant. */
export const tariffVersionExists = (effectiveFrom: string) =>
  new HttpError(409, `effective_from ${effectiveFrom} already starts another tariff version of this account`);
