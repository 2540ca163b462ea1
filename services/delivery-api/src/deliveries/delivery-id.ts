/** The `{delivery_id}` path parameter of the client and operator routes. */
import { MAX_ID } from "@dos/contracts";
import { Type } from "@sinclair/typebox";
import type { FastifyRequest } from "fastify";
import { parsePathId } from "../http/request-input.ts";
import { deliveryNotFound } from "./deliveries.errors.ts";

export const DeliveryIdParams = Type.Object({
  delivery_id: Type.Integer({ minimum: 1, maximum: MAX_ID, description: "The integer identifier of the delivery." }),
});

/**
 * The delivery id of the path. Routes validate it with `attachValidation`, so that an id that
 * cannot exist is a 404 like any unknown id rather than a 422; any other validation problem is
 * thrown on to the error handler. The id is read as the caller wrote it, since validation coerces
 * "01", "1.0", "1e0", "0x1" or " 1" to 1: a delivery has one URL, the one with its id's digits.
 */
export function deliveryIdOf(request: FastifyRequest): number {
  const written = safeDecode(/\/deliveries\/([^/?]*)/.exec(request.url)?.[1] ?? "");
  const id = parsePathId(written);
  if (id === null) throw deliveryNotFound(written);
  const error = request.validationError;
  // A written id parsePathId accepts always passes the params schema (1 to MAX_ID).
  if (error && error.validationContext !== "params") throw error;
  return id;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
