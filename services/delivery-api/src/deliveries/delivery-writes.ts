/**
 * What every writing operation shares: the rule context of a body, the price of a draft, and
 * storing a new delivery with its first event.
 */

import { randomBytes } from "node:crypto";
import {
  type Delivery,
  type DeliveryEventType,
  formatTimestamp,
  type NatsNames,
  type QuoteReply,
  type QuoteRequest,
} from "@dos/contracts";
import type { Kysely } from "kysely";
import type { ClientAccount } from "../auth/client-auth.ts";
import type { DB, Db } from "../db/database.ts";
import { appendDeliveryEvent } from "../outbox/outbox.repository.ts";
import { deliveryValues, packageValues, presentDelivery, taskValues } from "./deliveries.mappers.ts";
import { insertDelivery, loadCatalogue } from "./deliveries.repository.ts";
import { clientTasks, type DeliveryDraft, type StoredDelivery } from "./delivery-draft.ts";
import type { BodyReferences, RuleContext } from "./rule-context.ts";

/** The pricing service as delivery-api uses it (see src/pricing/pricing.client.ts). */
export interface DeliveryPricing {
  quote(request: QuoteRequest): Promise<QuoteReply>;
}

export interface DeliveriesDeps {
  db: Kysely<DB>;
  pricing: DeliveryPricing;
  names: NatsNames;
  /** Public base of tracking links: `<API_PUBLIC_URL>/track`. */
  trackingBaseUrl: string;
  /** The clock; tests may fix it. */
  now?: () => Date;
}

export async function ruleContext(
  deps: DeliveriesDeps,
  account: ClientAccount,
  refs: BodyReferences,
  now: Date,
): Promise<RuleContext> {
  const catalogue = await loadCatalogue(deps.db, account.id, refs);
  return { now, account, ...catalogue };
}

/** The price columns of a draft, quoted by the pricing service (503 when it does not answer). */
export async function priceOf(deps: DeliveriesDeps, accountId: number, draft: DeliveryDraft, now: Date) {
  const reply = await deps.pricing.quote({
    account_id: accountId,
    direction: draft.direction,
    tasks: clientTasks(draft).map((task) => ({
      kind: task.kind,
      slot_starting_at: formatTimestamp(task.slot_starting_at),
      slot_ending_at: formatTimestamp(task.slot_ending_at),
    })),
    packages: draft.packages.map((p) => ({ amount: p.amount, volume_dm3: p.volume_dm3, weight_kg: p.weight_kg })),
    requested_at: formatTimestamp(now),
  });
  return { price_cents: reply.price_cents, price_tariff_id: reply.tariff_id, price_lines: JSON.stringify(reply.lines) };
}
export type PriceColumns = Awaited<ReturnType<typeof priceOf>>;

/** Inserts a new delivery (create or redelivery) and records its `delivery.created` event. */
export async function storeNewDelivery(
  deps: DeliveriesDeps,
  trx: Db,
  account: ClientAccount,
  draft: DeliveryDraft,
  price: PriceColumns,
  originalDeliveryId: number | null = null,
): Promise<Delivery> {
  const stored = await insertDelivery(
    trx,
    { account_id: account.id, ...deliveryValues(draft), ...price, original_delivery_id: originalDeliveryId },
    [draft.pickup, draft.dropoff].map((task) => ({
      ...taskValues(task),
      tracking_token: randomBytes(16).toString("base64url"),
    })),
    packageValues(draft.packages),
  );
  return recordEvent(deps, trx, account.id, stored, "delivery.created");
}

/** The delivery as the caller sees it, after recording the event that announces its change. */
export async function recordEvent(
  deps: DeliveriesDeps,
  trx: Db,
  accountId: number,
  stored: StoredDelivery,
  type: DeliveryEventType,
  previousStatus?: string,
): Promise<Delivery> {
  const delivery = presentDelivery(stored, deps.trackingBaseUrl);
  await appendDeliveryEvent(trx, deps.names, { type, accountId, delivery, previousStatus });
  return delivery;
}
