/**
 * Fixtures of the delivery tests: an app with a pricing double and a client account, slot
 * helpers, and bodies as an integrator would write them from the spec.
 */
import { formatTimestamp } from "@dos/contracts";
import { createTestAccount, startTestApi, type TestAccount, type TestApi } from "./fixtures.ts";
import { type PricingResponder, startPricingResponder } from "./pricing-responder.ts";

export interface DeliveriesTestbed {
  api: TestApi;
  account: TestAccount;
  pricing: PricingResponder;
  close(): Promise<void>;
}

export async function startDeliveriesTestbed(
  env: Record<string, string> = {},
  options: Parameters<typeof startTestApi>[1] = {},
): Promise<DeliveriesTestbed> {
  // Long enough for a loaded 2-core machine running test files in parallel; the one test of a
  // silent pricing service waits it out once.
  const api = await startTestApi({ API_PRICING_TIMEOUT_MS: "2000", ...env }, options);
  const pricing = await startPricingResponder(api.config.NATS_NAMESPACE);
  const account = await createTestAccount(api.db);
  return {
    api,
    account,
    pricing,
    async close() {
      await pricing.stop();
      await api.close();
    },
  };
}

const HOUR = 60 * 60_000;

/** A timestamp `hours` from now, in the spec's format with milliseconds and offset. */
export function inHours(hours: number): string {
  return formatTimestamp(new Date(Date.now() + hours * HOUR));
}

/** A slot starting `startHours` from now and lasting `lengthHours`. */
export function slot(startHours = 24, lengthHours = 2) {
  return { slot_starting_at: inHours(startHours), slot_ending_at: inHours(startHours + lengthHours) };
}

export function place(account: TestAccount, overrides: Record<string, unknown> = {}) {
  return {
    recipient_name: "Jeanne Martin",
    recipient_phone: "06 12 34 56 78",
    recipient_email: "jeanne@example.com",
    address: "12 Rue de la Paix",
    postal_code: account.postalCodes[0],
    city: "Paris",
    address_instructions: "Code 1234, 3e étage",
    ...overrides,
  };
}

/** An outbound delivery body: a dropoff only, one catalogue package. */
export function outboundBody(account: TestAccount, overrides: Record<string, unknown> = {}) {
  return {
    client_order_reference: "ORDER-1",
    dropoff: { ...slot(), place: place(account) },
    packages: [{ package_type_id: account.packageTypeIds[0], amount: 2 }],
    ...overrides,
  };
}

export const json = (response: { body: string }) => JSON.parse(response.body);

/** How many deliveries are stored, every account together: a refused request must not change it. */
export async function deliveryCount(bed: DeliveriesTestbed): Promise<number> {
  const row = await bed.api.db
    .selectFrom("deliveries")
    .select((eb) => eb.fn.countAll().as("n"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
