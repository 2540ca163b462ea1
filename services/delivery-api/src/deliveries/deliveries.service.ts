/**
 * The delivery operations of the client API: list, get, latest, create, quote, update and
 * cancel (redelivery is in redelivery.service.ts). The service opens the transactions; every
 * change and its outbox event commit together.
 */
import { isDeepStrictEqual } from "node:util";
import {
  DELIVERY_TIMELINE_MAX_EVENTS,
  type Delivery,
  type DeliveryCreateInput,
  type DeliveryListItem,
  type DeliveryPrice,
  type DeliveryQuote,
  type DeliveryTimelineEvent,
  type DeliveryUpdateInput,
} from "@dos/contracts";
import type { ClientAccount } from "../auth/client-account.ts";
import type { Db } from "../db/database.ts";
import { type IdempotentRequest, type IdempotentResponse, respondOnce } from "../idempotency/idempotency.ts";
import { timelineEvents } from "../outbox/outbox.repository.ts";
import {
  cannotCancel,
  cannotUpdate,
  concurrentChange,
  deliveryNotFound,
  noLatestDelivery,
} from "./deliveries.errors.ts";
import {
  deliveryValues,
  draftFromStored,
  packageValues,
  presentDelivery,
  presentListItem,
  taskValues,
} from "./deliveries.mappers.ts";
import {
  countDeliveries,
  deliveryExists,
  findDelivery,
  findLatestDelivery,
  type ListFilter,
  listDeliveries,
  lockDelivery,
  replacePackages,
  updateDeliveryRow,
  updateTask,
} from "./deliveries.repository.ts";
import type { DeliveryDraft, StoredDelivery } from "./delivery-draft.ts";
import { buildCreateDraft, mergeDraft } from "./delivery-rules.ts";
import { CANCELLABLE_STATUSES, UPDATABLE_STATUSES } from "./delivery-status.ts";
import {
  type DeliveriesDeps,
  type NewDelivery,
  newDelivery,
  type PriceColumns,
  priceOf,
  recordEvent,
  ruleContext,
} from "./delivery-writes.ts";
import { insertNewDeliveries } from "./new-deliveries.repository.ts";
import { referencesOf } from "./rule-context.ts";

/** Attempts of an update whose delivery another request changed while it was being priced. */
const UPDATE_ATTEMPTS = 3;

export type DeliveriesService = ReturnType<typeof createDeliveriesService>;

export function createDeliveriesService(deps: DeliveriesDeps) {
  const { db } = deps;
  const clock = deps.now ?? (() => new Date());
  const present = (stored: StoredDelivery) => presentDelivery(stored, deps.trackingBaseUrl);

  /** A create body validated, priced and turned into the rows to write. */
  async function prepareCreate(account: ClientAccount, input: DeliveryCreateInput): Promise<NewDelivery> {
    const now = clock();
    const ctx = await ruleContext(deps, account, referencesOf(input, { packages: true }), now);
    const draft = buildCreateDraft(input, ctx);
    const price = await priceOf(deps, account.id, draft, now);
    return newDelivery(deps, account.id, draft, price);
  }

  return {
    async list(
      account: ClientAccount,
      query: { filter: Omit<ListFilter, "accountId">; page: number; perPage: number },
    ) {
      const filter = { ...query.filter, accountId: account.id };
      const page = { limit: query.perPage, offset: (query.page - 1) * query.perPage };
      const [rows, total] = await Promise.all([listDeliveries(db, filter, page), countDeliveries(db, filter)]);
      return { items: rows.map(presentListItem) as DeliveryListItem[], total };
    },

    async get(account: ClientAccount, id: number): Promise<Delivery> {
      const stored = await findDelivery(db, account.id, id);
      if (!stored) throw deliveryNotFound(id);
      return present(stored);
    },

    /** The delivery's timeline: its latest events, oldest first; 404 for another account's delivery. */
    async timeline(account: ClientAccount, id: number): Promise<DeliveryTimelineEvent[]> {
      if (!(await deliveryExists(db, account.id, id))) throw deliveryNotFound(id);
      return (await timelineEvents(db, account.id, id, DELIVERY_TIMELINE_MAX_EVENTS)) as DeliveryTimelineEvent[];
    },

    /** The price as quoted at the last change, with its tariff and lines; 404 for another account's delivery. */
    async price(account: ClientAccount, id: number): Promise<DeliveryPrice> {
      const stored = await findDelivery(db, account.id, id);
      if (!stored) throw deliveryNotFound(id);
      const { price_cents, price_tariff_id, price_lines } = stored.delivery;
      return { price_cents, tariff_id: price_tariff_id, lines: price_lines };
    },

    async latest(account: ClientAccount, reference: string | undefined): Promise<Delivery> {
      const stored = await findLatestDelivery(db, account.id, reference);
      if (!stored) throw noLatestDelivery(reference);
      return present(stored);
    },

    /** The price a create body would get, without saving anything. */
    async quote(account: ClientAccount, input: DeliveryCreateInput): Promise<DeliveryQuote> {
      const now = clock();
      const draft = buildCreateDraft(
        input,
        await ruleContext(deps, account, referencesOf(input, { packages: true }), now),
      );
      const price = await priceOf(deps, account.id, draft, now);
      return { price_cents: price.price_cents, direction: draft.direction };
    },

    async create(
      account: ClientAccount,
      input: DeliveryCreateInput,
      idempotency: IdempotentRequest | null,
    ): Promise<IdempotentResponse> {
      if (!idempotency) {
        // Without a key there is nothing to store with it: the create joins the group commit.
        const created = await prepareCreate(account, input);
        await deps.writer.write(created);
        deps.created?.inc();
        return { status: 201, body: created.delivery, replayed: false };
      }
      let written: NewDelivery | undefined;
      const response = await respondOnce(
        db,
        idempotency,
        () => prepareCreate(account, input),
        async (trx, created) => {
          await insertNewDeliveries(trx, [created]);
          written = created;
          return { status: 201, body: created.delivery };
        },
      );
      if (response.status === 201 && !response.replayed) {
        // Committed (a lost race to the same key answers replayed, its transaction rolled back).
        if (written) deps.committed?.([written]);
        deps.created?.inc();
      }
      return response;
    },

    async update(account: ClientAccount, id: number, patch: DeliveryUpdateInput): Promise<Delivery> {
      for (let attempt = 0; attempt < UPDATE_ATTEMPTS; attempt++) {
        const now = clock();
        const stored = await findDelivery(db, account.id, id);
        if (!stored) throw deliveryNotFound(id);
        if (!UPDATABLE_STATUSES.has(stored.delivery.status)) throw cannotUpdate(id, stored.delivery.status);
        const ctx = await ruleContext(deps, account, referencesOf(patch, { packages: true }), now);
        const base = draftFromStored(stored);
        const { draft, repriced } = mergeDraft(base, patch, ctx, "update");
        // Priced outside the transaction: no row stays locked while the pricing service thinks.
        const price = repriced ? await priceOf(deps, account.id, draft, now) : null;
        const updated = await db.transaction().execute(async (trx) => {
          const locked = await lockDelivery(trx, account.id, id);
          if (locked?.event_sequence !== stored.delivery.event_sequence) return null;
          return applyUpdate(trx, account, stored, base, draft, price);
        });
        if (updated) return updated;
      }
      throw concurrentChange(id);
    },

    async cancel(account: ClientAccount, id: number): Promise<Delivery> {
      return db.transaction().execute(async (trx) => {
        const stored = await findDelivery(trx, account.id, id, { forUpdate: true });
        if (!stored) throw deliveryNotFound(id);
        const previous = stored.delivery.status;
        if (!CANCELLABLE_STATUSES.has(previous)) throw cannotCancel(id, previous);
        stored.delivery = await updateDeliveryRow(trx, id, { status: "cancelled" });
        return recordEvent(deps, trx, account.id, stored, "delivery.cancelled", previous);
      });
    },
  };

  /** Writes what changed; an update that changes nothing answers the delivery as it is, with no event. */
  async function applyUpdate(
    trx: Db,
    account: ClientAccount,
    stored: StoredDelivery,
    base: DeliveryDraft,
    draft: DeliveryDraft,
    price: PriceColumns | null,
  ): Promise<Delivery> {
    const priceChanged = price !== null && price.price_cents !== stored.delivery.price_cents;
    if (isDeepStrictEqual(base, draft) && !priceChanged) return present(stored);
    const id = stored.delivery.id;
    const delivery = await updateDeliveryRow(trx, id, { ...deliveryValues(draft), ...(price ?? {}) });
    const tasks = [];
    for (const kind of ["pickup", "dropoff"] as const) {
      const current = stored.tasks.find((t) => t.kind === kind);
      if (current && isDeepStrictEqual(base[kind], draft[kind])) tasks.push(current);
      else tasks.push(await updateTask(trx, id, kind, taskValues(draft[kind])));
    }
    const packages = isDeepStrictEqual(base.packages, draft.packages)
      ? stored.packages
      : await replacePackages(trx, id, packageValues(draft.packages));
    return recordEvent(deps, trx, account.id, { delivery, tasks, packages }, "delivery.updated");
  }
}
