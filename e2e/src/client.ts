/**
 * The system's users as the e2e tests play them: an operator (ops API with the bearer token) and
 * client shops seeded by the demo seed (X-User-Email + X-User-Token).
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { root } from "../../scripts/system.ts";
import { OPS_TOKEN, type SystemUnderTest } from "./system.ts";

export interface SeededAccount {
  account_id: number;
  email: string;
  token: string;
  package_type_ids: number[];
  postal_codes: string[];
  saved_address_ids: number[];
}

export interface SeededVehicle {
  external_id: string;
  provider: string;
  active: boolean;
}

/** Runs the demo seed against the system's database (as `npm start` does): accounts and vehicles. */
export function seedDemo(system: Pick<SystemUnderTest, "env">): {
  accounts: SeededAccount[];
  vehicles: SeededVehicle[];
} {
  const result = spawnSync(process.execPath, [path.join(root, "services/delivery-api/dist/src/seed/seed-command.js")], {
    env: { ...process.env, ...system.env, DEMO_SEED_SECRET: "e2e-demo-seed-secret" },
    encoding: "utf8",
  });
  if (result.status !== 0) throw new Error(`seed failed: ${result.stderr}`);
  return JSON.parse(result.stdout);
}

/** The demo seed's client accounts. */
export function seedAccounts(system: SystemUnderTest): SeededAccount[] {
  return seedDemo(system).accounts;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: unknown;
}

/** A JSON call with the given headers; the body is parsed when there is one. */
export async function call(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<ApiResponse> {
  const response = await fetch(url, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

/**
 * A call made as a careful client makes it: a 503 (a dependency briefly unavailable, as on a
 * loaded machine right after boot) is tried again after its Retry-After, for up to `withinMs`.
 * For a test's setup, where the call is not what is tested.
 */
export async function callRetrying503(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: unknown,
  withinMs = 20_000,
): Promise<ApiResponse> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const response = await call(url, method, headers, body);
    if (response.status !== 503 || Date.now() >= deadline) return response;
    const retryAfterS = Number(response.headers.get("retry-after") ?? 1);
    await new Promise((resolve) => setTimeout(resolve, Math.min(Math.max(retryAfterS, 0.1), 2) * 1000));
  }
}

export function clientHeaders(account: SeededAccount): Record<string, string> {
  return { "x-user-email": account.email, "x-user-token": account.token };
}

export const opsHeaders = { authorization: `Bearer ${OPS_TOKEN}` };

/** A dropoff-only (outbound) delivery body in the account's first zone, slot starting tomorrow. */
export function outboundDelivery(account: SeededAccount, reference = "order-1") {
  const start = new Date(Date.now() + 24 * 3600_000);
  const end = new Date(start.getTime() + 2 * 3600_000);
  return {
    client_order_reference: reference,
    dropoff: {
      slot_starting_at: start.toISOString(),
      slot_ending_at: end.toISOString(),
      place: {
        recipient_name: "Jeanne Martin",
        recipient_phone: "+33612345678",
        address: "12 Rue de la Paix",
        postal_code: account.postal_codes[0],
        city: "Paris",
      },
    },
    packages: [{ package_type_id: account.package_type_ids[0], amount: 1 }],
  };
}
