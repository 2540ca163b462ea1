/**
 * The operator APIs' guard: `Authorization: Bearer <token>`, compared in constant time (both
 * sides hashed first, so neither the content nor the length of the token leaks through timing).
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyRequest } from "fastify";
import { unauthorized } from "./errors.ts";

/** An onRequest hook that answers 401 in the error shape unless the bearer token matches. */
export function bearerAuthHook(token: string) {
  const expected = createHash("sha256").update(token).digest();
  return async (request: FastifyRequest) => {
    const header = request.headers.authorization;
    const presented = typeof header === "string" && header.startsWith("Bearer ") ? header.slice(7) : "";
    const digest = createHash("sha256").update(presented).digest();
    if (!presented || !timingSafeEqual(digest, expected)) {
      throw unauthorized("Authorization: Bearer <operator token> is required");
    }
  };
}
