/**
 * The audit log's hooks on the operator API: every changing request (not GET, HEAD or OPTIONS)
 * of an authenticated caller gets an entry, written before its answer goes out — refused ones
 * (403, 404, 409, 422, 5xx) included. A 401 or a 429 of the failed-authentication budget has no
 * caller to name and is not written (the access log has it): a stranger cannot fill the table.
 *
 * In one place, for every route alike:
 * - preHandler (the request passed authentication, its role and validation): the resource is
 *   read through the app itself, a GET of the route's counterpart (audit-resource.ts) with the
 *   caller's own credentials, and the entry is opened with it. Should that insert fail, the
 *   handler never runs: nothing changes unaudited.
 * - onSend: the entry is completed with the status and the resource after: the answer's JSON
 *   when it has one, else the counterpart read again (a 204). A request refused before the
 *   handler (role, validation) gets its one entry here. Should that write fail, the caller gets
 *   a 503 instead of the answer, and the opened entry (status null) stays as the trace.
 * What is kept is redacted and bounded by audit-values.ts.
 */
import { HttpError, type Logger } from "@dos/service-kit";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { documentedRoute } from "../staff/ops-access.ts";
import type { OpsActor } from "../staff/ops-actor.ts";
import type { AuditOpening, AuditService } from "./audit.service.ts";
import { counterpartOf, pathOf, resourceOf } from "./audit-resource.ts";
import { auditJson, parseAnswer } from "./audit-values.ts";

export interface AuditHooksOptions {
  audit: AuditService;
  /** The operator API's prefix, /ops/v1. */
  prefix: string;
  /** Whether a GET route with this pattern (under the prefix, without it) exists. */
  hasGet: (route: string) => boolean;
  logger: Logger;
}

const READS = new Set(["GET", "HEAD", "OPTIONS"]);

declare module "fastify" {
  interface FastifyContextConfig {
    /**
     * false on telemetry a device sends every few seconds (a phone's position): it is no one's
     * decision to audit, and an entry plus a read per position would outgrow every other row.
     */
    audited?: boolean;
  }
}

interface Pending {
  entryId: number | null;
  written: boolean;
}

export function registerAuditHooks(ops: FastifyInstance, options: AuditHooksOptions) {
  const { audit, prefix, hasGet, logger } = options;
  const pending = new WeakMap<FastifyRequest, Pending>();

  /** The matched route under the prefix, without it; undefined for a read or no route. */
  const auditedRoute = (request: FastifyRequest) => {
    const url = request.routeOptions.url;
    if (READS.has(request.method) || url === undefined || !url.startsWith(prefix)) return undefined;
    if (request.routeOptions.config.audited === false) return undefined;
    return url.slice(prefix.length);
  };
  // Before authentication succeeded there is no actor (401, 429): such requests are not audited.
  const actorOf = (request: FastifyRequest) => (request as { actor?: OpsActor }).actor;
  const createsResource = (request: FastifyRequest) => {
    const answers = request.routeOptions.schema?.response as Record<string, unknown> | undefined;
    return answers !== undefined && "201" in answers;
  };
  const params = (request: FastifyRequest) => (request.params ?? {}) as Record<string, string>;

  const opening = (request: FastifyRequest, actor: OpsActor, route: string, before: string | null): AuditOpening => {
    const resource = resourceOf(route, params(request), actor.id, createsResource(request));
    return {
      actor: { kind: actor.kind, id: actor.id, name: actor.name },
      method: request.method,
      route: documentedRoute(prefix, route),
      resourceType: resource.type,
      resourceId: resource.id,
      requestId: request.id,
      before,
    };
  };

  /** The resource as the caller would read it now: a GET through the app, with their credentials. */
  const readThrough = async (request: FastifyRequest, route: string): Promise<unknown> => {
    const response = await request.server.inject({
      method: "GET",
      url: `${prefix}${pathOf(route, params(request))}`,
      headers: { authorization: request.headers.authorization ?? "", "x-request-id": request.id },
    });
    if (response.statusCode !== 200) return null;
    return parseAnswer(response.body, response.headers["content-type"]) ?? null;
  };

  ops.addHook("preHandler", async (request) => {
    const route = auditedRoute(request);
    const actor = actorOf(request);
    if (route === undefined || actor === undefined) return;
    const counterpart = createsResource(request) ? null : counterpartOf(route, hasGet);
    const before = counterpart === null ? null : await readThrough(request, counterpart);
    const entryId = await audit.open(opening(request, actor, route, auditJson(before)));
    pending.set(request, { entryId, written: false });
  });

  ops.addHook("onSend", async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const route = auditedRoute(request);
    const actor = actorOf(request);
    if (route === undefined || actor === undefined) return payload;
    const state = pending.get(request) ?? { entryId: null, written: false };
    // The 503 below is sent through these hooks again: it must not be written twice.
    if (state.written) return payload;
    state.written = true;
    pending.set(request, state);

    const creates = createsResource(request);
    let after: string | null = null;
    let created: string | number | undefined;
    if (reply.statusCode < 300) {
      const answered = parseAnswer(payload, String(reply.getHeader("content-type") ?? ""));
      if (answered !== undefined) {
        // A secret shown once is in an answer no cache may keep: redacted harder (audit-values.ts).
        const shownOnce = String(reply.getHeader("cache-control") ?? "").includes("no-store");
        after = auditJson(answered, shownOnce);
        const id = (answered as { id?: unknown } | null)?.id;
        if (creates && (typeof id === "number" || typeof id === "string")) created = id;
      } else if (!creates) {
        const counterpart = counterpartOf(route, hasGet);
        if (counterpart !== null) after = auditJson(await readThrough(request, counterpart));
      }
    }
    const resource = resourceOf(route, params(request), actor.id, creates, created);
    const outcome = { statusCode: reply.statusCode, resourceId: resource.id, after };
    try {
      if (state.entryId !== null) await audit.close(state.entryId, outcome);
      else await audit.record(opening(request, actor, route, null), outcome);
    } catch (error) {
      logger.error({ err: error, request_id: request.id }, "audit entry not written");
      throw new HttpError(
        503,
        "the audit log could not be written, so this answer is withheld; the change may have been made: read the resource before retrying",
        { "retry-after": "5" },
      );
    }
    return payload;
  });
}
