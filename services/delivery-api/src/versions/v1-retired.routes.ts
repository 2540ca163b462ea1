/** Version 1 of the client API is shut down: every /api/v1 path answers 410 and says so. */
import type { FastifyInstance } from "fastify";

export async function v1RetiredRoutes(app: FastifyInstance) {
  app.all("/api/v1", retired);
  app.all("/api/v1/*", retired);
}

async function retired(_request: unknown, reply: import("fastify").FastifyReply) {
  return reply.code(410).send({ errors: ["API version 1 is retired; use /api/v2 (see /api/v2/docs)"] });
}
