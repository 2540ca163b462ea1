/**
 * Redelivery: a new delivery made from a failed one. Direction, packages, reversed packages and
 * client_order_reference stay those of the original; any other field may change, nested task
 * and place fields partially. The two are linked both ways, in one transaction.
 */
import type { DeliveryStatus, RedeliveryInput } from "@dos/contracts";
import type { ClientAccount } from "../auth/client-account.ts";
import { type IdempotentRequest, type IdempotentResponse, respondOnce } from "../idempotency/idempotency.ts";
import { alreadyRedelivered, deliveryNotFound, redeliveryNeedsFailed } from "./deliveries.errors.ts";
import { draftFromStored } from "./deliveries.mappers.ts";
import { findDelivery, lockDelivery, updateDeliveryRow } from "./deliveries.repository.ts";
import { mergeDraft } from "./delivery-rules.ts";
import { REDELIVERABLE_STATUS } from "./delivery-status.ts";
import {
  type DeliveriesDeps,
  type NewDelivery,
  newDelivery,
  priceOf,
  recordEvent,
  ruleContext,
} from "./delivery-writes.ts";
import { insertNewDeliveries } from "./new-deliveries.repository.ts";
import { referencesOf } from "./rule-context.ts";

export type RedeliveryService = ReturnType<typeof createRedeliveryService>;

function checkRedeliverable(id: number, original: { status: DeliveryStatus; redelivery_id: number | null }) {
  if (original.status !== REDELIVERABLE_STATUS) throw redeliveryNeedsFailed(id, original.status);
  if (original.redelivery_id !== null) throw alreadyRedelivered(id, original.redelivery_id);
}

export function createRedeliveryService(deps: DeliveriesDeps) {
  const { db } = deps;
  const clock = deps.now ?? (() => new Date());
  return {
    async redeliver(
      account: ClientAccount,
      originalId: number,
      patch: RedeliveryInput,
      idempotency: IdempotentRequest | null,
    ): Promise<IdempotentResponse> {
      let written: NewDelivery | undefined;
      const response = await respondOnce(
        db,
        idempotency,
        async () => {
          const now = clock();
          const stored = await findDelivery(db, account.id, originalId);
          if (!stored) throw deliveryNotFound(originalId);
          checkRedeliverable(originalId, stored.delivery);
          const refs = referencesOf(patch, { packages: false });
          const ctx = await ruleContext(deps, account, refs, now);
          const { draft } = mergeDraft(draftFromStored(stored), patch, ctx, "redelivery");
          const price = await priceOf(deps, account.id, draft, now);
          return newDelivery(deps, account.id, draft, price, originalId);
        },
        async (trx, redelivery) => {
          // Checked again under the lock: two concurrent redeliveries of one delivery make one.
          const locked = await lockDelivery(trx, account.id, originalId);
          if (!locked) throw deliveryNotFound(originalId);
          checkRedeliverable(originalId, locked);
          await insertNewDeliveries(trx, [redelivery]);
          written = redelivery;
          await updateDeliveryRow(trx, originalId, { redelivery_id: redelivery.delivery.id });
          const original = await findDelivery(trx, account.id, originalId);
          if (!original) throw deliveryNotFound(originalId);
          await recordEvent(deps, trx, account.id, original, "delivery.redelivery_created");
          return { status: 201, body: redelivery.delivery };
        },
      );
      // Committed unless replayed: the new delivery's first event is published at once.
      if (!response.replayed && written) deps.committed?.([written]);
      return response;
    },
  };
}
