/**
 * The operator API's guard: `Authorization: Bearer <API_OPS_TOKEN>`, compared in constant time.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { unauthorized } from "@dos/service-kit";
import type { FastifyRequest } from "fastify";

export function opsAuthHook(opsToken: string) {
  const expected = createHash("sha256").update(opsToken).digest();
  return async (request: FastifyRequest) => {
    const header = request.headers.authorization;
    const presented = typeof header === "string" && header.startsWith("Bearer ") ? header.slice(7) : "";
    const digest = createHash("sha256").update(presented).digest();
    if (!presented || !timingSafeEqual(digest, expected)) {
      throw unauthorized("Authorization: Bearer <operator token> is required");
    }
  };
}
