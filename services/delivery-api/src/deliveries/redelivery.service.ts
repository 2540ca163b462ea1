/**
 * Redelivery: a new delivery made from a failed one. Direction, packages, reversed packages and
 * client_order_reference stay those of the original; any other field may change, nested task
 * and place fields partially. The two are linked both ways, in one transaction.
 */
import type { DeliveryStatus, RedeliveryInput } from "@dos/contracts";
import type { ClientAccount } from "../auth/client-auth.ts";
import { type IdempotentRequest, type IdempotentResponse, respondOnce } from "../idempotency/idempotency.ts";
import { alreadyRedelivered, deliveryNotFound, redeliveryNeedsFailed } from "./deliveries.errors.ts";
import { findDelivery, lockDelivery, updateDeliveryRow } from "./deliveries.repository.ts";
import { draftFromStored } from "./delivery-draft.ts";
import { mergeDraft } from "./delivery-rules.ts";
import { REDELIVERABLE_STATUS } from "./delivery-status.ts";
import { type DeliveriesDeps, priceOf, recordEvent, ruleContext, storeNewDelivery } from "./delivery-writes.ts";
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
    redeliver(
      account: ClientAccount,
      originalId: number,
      patch: RedeliveryInput,
      idempotency: IdempotentRequest | null,
    ): Promise<IdempotentResponse> {
      return respondOnce(
        db,
        idempotency,
        async () => {
          const now = clock();
          const stored = await findDelivery(db, account.id, originalId);
          if (!stored) throw deliveryNotFound(originalId);
          checkRedeliverable(originalId, stored.delivery);
          const ctx = await ruleContext(deps, account, referencesOf(patch, { packages: false }), now);
          const { draft } = mergeDraft(draftFromStored(stored), patch, ctx, "redelivery");
          return { draft, price: await priceOf(deps, account.id, draft, now) };
        },
        async (trx, { draft, price }) => {
          // Checked again under the lock: two concurrent redeliveries of one delivery make one.
          const locked = await lockDelivery(trx, account.id, originalId);
          if (!locked) throw deliveryNotFound(originalId);
          checkRedeliverable(originalId, locked);
          const redelivery = await storeNewDelivery(deps, trx, account, draft, price, originalId);
          await updateDeliveryRow(trx, originalId, { redelivery_id: redelivery.id });
          const original = await findDelivery(trx, account.id, originalId);
          if (!original) throw deliveryNotFound(originalId);
          await recordEvent(deps, trx, account.id, original, "delivery.redelivery_created");
          return { status: 201, body: redelivery };
        },
      );
    },
  };
}
