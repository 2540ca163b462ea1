/**
 * Who is calling the operator API: the automation token (API_OPS_TOKEN: scripts, the console's
 * own calls) or a person of the staff by one of their tokens. Every /ops/v1 handler and hook
 * sees it as `request.actor`.
 */
import type { StaffRole } from "./staff.table.ts";

export type OpsActor =
  | { kind: "automation"; id: null; email: null; name: "automation"; role: "admin" }
  | { kind: "staff"; id: number; email: string; name: string; role: StaffRole };

export const AUTOMATION: OpsActor = Object.freeze({
  kind: "automation",
  id: null,
  email: null,
  name: "automation",
  role: "admin",
});

declare module "fastify" {
  interface FastifyRequest {
    /** Set by the operator API's authentication hook on every /ops/v1 route (ops-auth.ts). */
    actor: OpsActor;
  }
}
