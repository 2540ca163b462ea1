/**
 * GET /ops/v1/audit: the audit log, newest first, filtered by actor and resource; and
 * GET /ops/v1/audit/people: who a filter by person can name. Any role reads both.
 */
import { ErrorBody } from "@dos/contracts";
import type { FastifyInstance } from "fastify";
import { AuditPage, AuditPeople, AuditQuery } from "./audit.schemas.ts";
import type { AuditService } from "./audit.service.ts";

export async function auditOpsRoutes(app: FastifyInstance, options: { audit: AuditService }) {
  app.get<{ Querystring: AuditQuery }>(
    "/audit",
    {
      schema: {
        tags: ["audit"],
        operationId: "audit.list",
        summary: "Read the audit log, newest first",
        description:
          "Every changing request of the operator API (not GET or HEAD) by an authenticated caller, refused " +
          "ones included: who (a person, or automation), when, the route and resource, the answer's status, and " +
          "the resource before and after, with secrets redacted. Filters combine; pages continue with " +
          "before_id = the previous page's next_before_id.",
        querystring: AuditQuery,
        response: { 200: AuditPage, 422: ErrorBody },
      },
    },
    async (request) => options.audit.list(request.query),
  );

  app.get(
    "/audit/people",
    {
      schema: {
        tags: ["audit"],
        operationId: "audit.people",
        summary: "List the people an audit filter can name",
        description:
          "Every staff person's id (the audit log's actor_id) and name, disabled ones included, by name: what a " +
          "filter of the audit log by person offers to any role. E-mails and roles stay with GET /ops/v1/staff (admin).",
        response: { 200: AuditPeople },
      },
    },
    async () => options.audit.people(),
  );
}
