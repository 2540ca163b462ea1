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
import type { ClientAccount } from "../auth/client-account.ts";
import type { DB, Db } from "../db/database.ts";
import {
  appendDeliveryEvent,
  deliveryEvent,
  NEW_DELIVERY_CREATED_AT,
  NEW_DELIVERY_ID,
} from "../outbox/outbox.repository.ts";
import type { CatalogueLoader } from "./catalogue.repository.ts";
import { deliveryValues, packageValues, presentDelivery, taskValues } from "./deliveries.mappers.ts";
import { clientTasks, type DeliveryDraft, type StoredDelivery } from "./delivery-draft.ts";
import type { NewDeliveryRows, NewDeliveryWrite } from "./new-deliveries.repository.ts";
import type { NewDeliveryWriter } from "./new-delivery-writer.ts";
import type { BodyReferences, RuleContext } from "./rule-context.ts";

/** The pricing service as delivery-api uses it (see src/pricing/pricing.client.ts). */
export interface DeliveryPricing {
  quote(request: QuoteRequest): Promise<QuoteReply>;
}

export interface DeliveriesDeps {
  db: Kysely<DB>;
  pricing: DeliveryPricing;
  names: NatsNames;
  /** Reads the catalogue of concurrent requests together; see catalogue.repository.ts. */
  catalogues: CatalogueLoader;
  /** Writes keyless creates together (group commit); see new-delivery-writer.ts. */
  writer: NewDeliveryWriter;
  /**
   * Told of new deliveries once their transaction committed, so that their first events are
   * published at once (OutboxRelay.publishCommitted); absent in tests without a relay.
   */
  committed?: (writes: NewDeliveryWrite[]) => void;
  /** Public base of tracking links: `<API_PUBLIC_URL>/track`. */
  trackingBaseUrl: string;
  /** The clock; tests may fix it. */
  now?: () => Date;
  /** Counts deliveries created (`deliveries_created_total`); absent in tests that do not look. */
  created?: { inc(): void };
}

export async function ruleContext(
  deps: DeliveriesDeps,
  account: ClientAccount,
  refs: BodyReferences,
  now: Date,
): Promise<RuleContext> {
  const catalogue = await deps.catalogues.load({ accountId: account.id, refs });
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

/** A new delivery (create or redelivery) as it will be written, answered and announced. */
export type NewDelivery = NewDeliveryWrite;

/**
 * The rows, v2 representation and `delivery.created` event of a new delivery; nothing is written
 * yet, and its id and creation time are placeholders the statement that writes it fills in
 * (new-deliveries.repository.ts).
 */
export function newDelivery(
  deps: DeliveriesDeps,
  accountId: number,
  draft: DeliveryDraft,
  price: PriceColumns,
  originalDeliveryId: number | null = null,
): NewDelivery {
  const rows: NewDeliveryRows = {
    delivery: {
      account_id: accountId,
      status: "saved",
      ...deliveryValues(draft),
      ...price,
      original_delivery_id: originalDeliveryId,
      redelivery_id: null,
      event_sequence: 1,
    },
    tasks: [draft.pickup, draft.dropoff].map((task) => ({
      ...taskValues(task),
      tracking_token: trackingToken(),
      started_at: null,
      eta: null,
      completed_at: null,
      failure_reason: null,
      notes: null,
      signature_url: null,
      accepted_by: null,
      completion_pictures: [],
      completion_text: null,
    })),
    packages: packageValues(draft.packages).map((p, position) => ({ ...p, position })),
  };
  const delivery = presentDelivery(
    { ...rows, delivery: { ...rows.delivery, id: 0, created_at: new Date(0) } },
    deps.trackingBaseUrl,
  );
  // The fields keep their place in the representation; their values are the statement's.
  Object.assign(delivery, { id: NEW_DELIVERY_ID, created_at: NEW_DELIVERY_CREATED_AT });
  const event = deliveryEvent(deps.names, { type: "delivery.created", accountId, delivery }, 1);
  return { rows, delivery, event, eventText: JSON.stringify(event.envelope), stamp: null };
}

/**
 * 16 random bytes as base64url, cut from a pool drawn 256 tokens at a time: one call into the
 * crypto library per 256 tokens instead of one per token.
 */
function trackingToken(): string {
  if (tokenPoolOffset + TOKEN_BYTES > tokenPool.length) {
    tokenPool = randomBytes(TOKEN_BYTES * 256);
    tokenPoolOffset = 0;
  }
  tokenPoolOffset += TOKEN_BYTES;
  return tokenPool.toString("base64url", tokenPoolOffset - TOKEN_BYTES, tokenPoolOffset);
}
const TOKEN_BYTES = 16;
let tokenPool = Buffer.alloc(0);
let tokenPoolOffset = 0;

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
