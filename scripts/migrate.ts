/** `npm run migrate`: applies every service's migrations (after `npm run build`) to the resolved PostgreSQL. */
import { resolveInfrastructure } from "./infra.ts";
import { migrateAll } from "./system.ts";

const infra = await resolveInfrastructure();
await migrateAll({ ...infra.env, LOG_LEVEL: process.env.LOG_LEVEL ?? "info" });
await infra.release();
