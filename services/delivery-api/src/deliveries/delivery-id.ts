/** The `{delivery_id}` path parameter of the client and operator routes. */
import { MAX_ID } from "@dos/contracts";
import { Type } from "@sinclair/typebox";
import type { FastifyRequest } from "fastify";
import { deliveryNotFound } from "./deliveries.errors.ts";

export const DeliveryIdParams = Type.Object({
  delivery_id: Type.Integer({ minimum: 1, maximum: MAX_ID, description: "The integer identifier of the delivery." }),
});

/** An id as the API writes it: digits, no leading zero. */
const CANONICAL_ID = /^[1-9][0-9]*$/;

/**
 * The delivery id of the path. Routes validate it with `attachValidation`, so that an id that
 * cannot exist (not an integer, out of range) is a 404 like any unknown id rather than a 422;
 * any other validation problem is thrown on to the error handler. Validation coerces "01",
 * "1.0", "1e0", "0x1" or " 1" to 1; a delivery has one URL, so only its id's digits name it.
 */
export function deliveryIdOf(request: FastifyRequest): number {
  const error = request.validationError;
  // The id as the caller wrote it: validation coerced the params object in place.
  const written = safeDecode(/\/deliveries\/([^/?]*)/.exec(request.url)?.[1] ?? "");
  if (error?.validationContext === "params" || !CANONICAL_ID.test(written)) throw deliveryNotFound(written);
  if (error) throw error;
  return (request.params as { delivery_id: number }).delivery_id;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
