/** The `{delivery_id}` path parameter of the client and operator routes. */
import { MAX_ID } from "@dos/contracts";
import { Type } from "@sinclair/typebox";
import type { FastifyRequest } from "fastify";
import { deliveryNotFound } from "./deliveries.errors.ts";

export const DeliveryIdParams = Type.Object({
  delivery_id: Type.Integer({ minimum: 1, maximum: MAX_ID, description: "The integer identifier of the delivery." }),
});

/**
 * The delivery id of the path. Routes validate it with `attachValidation`, so that an id that
 * cannot exist (not an integer, out of range) is a 404 like any unknown id rather than a 422;
 * any other validation problem is thrown on to the error handler.
 */
export function deliveryIdOf(request: FastifyRequest): number {
  const error = request.validationError;
  if (error?.validationContext === "params") {
    // The id as the caller wrote it: validation coerced the params object in place.
    const written = /\/deliveries\/([^/?]*)/.exec(request.url)?.[1] ?? "";
    throw deliveryNotFound(safeDecode(written));
  }
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
