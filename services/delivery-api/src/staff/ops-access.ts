/**
 * Who may call which operator route: the one table of roles (OPS_ACCESS), checked by one hook on
 * every /ops/v1 request, right after authentication and before the body is read. Each route names
 * the lowest role that may call it (roles are ordered read_only < dispatcher < admin; automation
 * is admin), or `staff`: any person, never automation (their own personal tokens).
 * - read_only: reads (GET, and HEAD with it).
 * - dispatcher: reads, and changes to the fleet and the day's work: vehicles, messengers and their
 *   positions, rounds, tasks, the courier simulator, the fleet rebuild, a delivery's status.
 * - admin: everything, including accounts and all they hold (users, API tokens, zones, places,
 *   package types, tariffs, webhooks) and the staff.
 * A route missing from the table is admin-only (closed by default), and test/ops-access.test.ts
 * fails for it, so a new route gets its rule written here.
 */
import { forbidden } from "@dos/service-kit";
import type { FastifyRequest } from "fastify";
import type { OpsActor } from "./ops-actor.ts";
import type { StaffRole } from "./staff.table.ts";

/** The lowest role a route needs, or `staff`: any person's own (automation is refused). */
export type AccessRule = StaffRole | "staff";

/** `<METHOD> <route as registered, under /ops/v1>` → its rule. HEAD follows GET. */
export const OPS_ACCESS: Readonly<Record<string, AccessRule>> = {
  // Reads: any role.
  "GET /openapi.json": "read_only",
  "GET /staff/me": "read_only",
  "GET /audit": "read_only",
  "GET /audit/people": "read_only",
  "GET /accounts": "read_only",
  "GET /accounts/:accountId": "read_only",
  "GET /users": "read_only",
  "GET /accounts/:accountId/users": "read_only",
  "GET /accounts/:accountId/users/:userId": "read_only",
  "GET /accounts/:accountId/users/:userId/tokens": "read_only",
  "GET /accounts/:accountId/default_place": "read_only",
  "GET /accounts/:accountId/addresses": "read_only",
  "GET /accounts/:accountId/addresses/:addressId": "read_only",
  "GET /accounts/:accountId/package_types": "read_only",
  "GET /accounts/:accountId/package_types/:packageTypeId": "read_only",
  "GET /accounts/:accountId/zones": "read_only",
  "GET /accounts/:accountId/statement": "read_only",
  "GET /accounts/:accountId/tariffs": "read_only",
  "GET /accounts/:accountId/webhooks": "read_only",
  "GET /accounts/:accountId/webhooks/:id/attempts": "read_only",
  "GET /accounts/:id/courier_simulator": "read_only",
  "GET /messengers": "read_only",
  "GET /messengers/:id": "read_only",
  "GET /vehicles": "read_only",
  "GET /vehicles/:id": "read_only",
  "GET /vehicles/:id/positions": "read_only",
  "GET /rounds": "read_only",
  "GET /rounds/:id": "read_only",
  "GET /media/:id": "read_only",
  "GET /dispatch/to_assign": "read_only",
  "GET /dispatch/rounds": "read_only",
  "GET /fleet/live": "read_only",

  // A person's own personal tokens (the CLI's): any person, whatever the role.
  "GET /staff/me/tokens": "staff",
  "POST /staff/me/tokens": "staff",
  "DELETE /staff/me/tokens/:tokenId": "staff",

  // The fleet and the day's work: dispatchers.
  "POST /messengers": "dispatcher",
  "PATCH /messengers/:id": "dispatcher",
  "POST /messengers/:id/positions": "dispatcher",
  "POST /vehicles": "dispatcher",
  "PATCH /vehicles/:id": "dispatcher",
  "POST /vehicles/:id/provider_token": "dispatcher",
  "POST /fleet/rebuild": "dispatcher",
  "POST /rounds": "dispatcher",
  "POST /rounds/:id/deliveries": "dispatcher",
  "DELETE /rounds/:id/deliveries/:deliveryId": "dispatcher",
  "PUT /rounds/:id/tasks": "dispatcher",
  "POST /rounds/:id/start": "dispatcher",
  "POST /rounds/:id/end": "dispatcher",
  "POST /tasks/:id/start": "dispatcher",
  "POST /tasks/:id/complete": "dispatcher",
  "POST /tasks/:id/fail": "dispatcher",
  "PUT /tasks/:id/signature": "dispatcher",
  "POST /tasks/:id/pictures": "dispatcher",
  "PUT /accounts/:id/courier_simulator": "dispatcher",
  "PATCH /deliveries/:delivery_id/status": "dispatcher",

  // Accounts and everything they hold, and the staff: admins.
  "POST /accounts": "admin",
  "PATCH /accounts/:accountId": "admin",
  "POST /accounts/:accountId/users": "admin",
  "POST /accounts/:accountId/users/:userId/tokens": "admin",
  "DELETE /accounts/:accountId/users/:userId/tokens/:tokenId": "admin",
  "PUT /accounts/:accountId/default_place": "admin",
  "POST /accounts/:accountId/addresses": "admin",
  "PATCH /accounts/:accountId/addresses/:addressId": "admin",
  "DELETE /accounts/:accountId/addresses/:addressId": "admin",
  "POST /accounts/:accountId/package_types": "admin",
  "PATCH /accounts/:accountId/package_types/:packageTypeId": "admin",
  "DELETE /accounts/:accountId/package_types/:packageTypeId": "admin",
  "POST /accounts/:accountId/zones": "admin",
  "PUT /accounts/:accountId/zones": "admin",
  "DELETE /accounts/:accountId/zones": "admin",
  "DELETE /accounts/:accountId/zones/:postalCode": "admin",
  "POST /accounts/:accountId/tariffs": "admin",
  // Changes nothing, but is the tariff form's: an admin's.
  "POST /accounts/:accountId/tariffs/preview": "admin",
  "POST /accounts/:accountId/webhooks": "admin",
  "DELETE /accounts/:accountId/webhooks/:id": "admin",
  "POST /accounts/:accountId/webhooks/:id/rotate": "admin",
  "POST /accounts/:accountId/webhooks/:id/replay": "admin",
  "POST /accounts/:accountId/webhooks/:id/enable": "admin",
  "GET /staff": "admin",
  "POST /staff": "admin",
  "GET /staff/:id": "admin",
  "PATCH /staff/:id": "admin",
  "GET /staff/:id/tokens": "admin",
  "POST /staff/:id/tokens": "admin",
  "DELETE /staff/:id/tokens/:tokenId": "admin",
};

const RANK: Record<StaffRole, number> = { read_only: 0, dispatcher: 1, admin: 2 };

/** `/vehicles/:id` → `/ops/v1/vehicles/{id}`: routes as the OpenAPI document and the audit log write them. */
export function documentedRoute(prefix: string, route: string): string {
  return `${prefix}${route.replace(/:([A-Za-z0-9_]+)/g, "{$1}")}`;
}

/** The rule of a route (`route` without the /ops/v1 prefix); admin when it has none. */
export function ruleOf(method: string, route: string): AccessRule {
  return OPS_ACCESS[`${method === "HEAD" ? "GET" : method} ${route}`] ?? "admin";
}

/** Why `actor` may not call the route, or null when it may. */
function refusalOf(actor: OpsActor, method: string, route: string, prefix: string): string | null {
  const rule = ruleOf(method, route);
  const shown = `${method} ${documentedRoute(prefix, route)}`;
  if (rule === "staff") {
    return actor.kind === "staff" ? null : `automation may not ${shown}: personal tokens belong to a person`;
  }
  if (RANK[actor.role] >= RANK[rule]) return null;
  return `${actor.role} may not ${shown}`;
}

/** An onRequest hook, after authentication: 403 naming the role when the route needs more. */
export function opsAccessHook(prefix: string) {
  return async (request: FastifyRequest) => {
    const url = request.routeOptions.url;
    // No route matched: the 404 answers, whatever the role.
    if (url === undefined || !url.startsWith(prefix)) return;
    const refusal = refusalOf(request.actor, request.method, url.slice(prefix.length), prefix);
    if (refusal !== null) throw forbidden(refusal);
  };
}
