/**
 * The endpoint registry's operations, as a client asks them through delivery-api: register,
 * list, delete, rotate the secret, read the attempts, replay; and the operator's enable. Each
 * takes the caller's account id; an endpoint of another account is not found.
 */
import {
  DELIVERY_EVENTS_RETENTION_DAYS,
  formatTimestamp,
  type Webhook,
  type WebhookAttempt,
  type WebhookAttemptsRequest,
  type WebhookCreated,
  type WebhookCreateRequest,
  type WebhookListRequest,
  type WebhookRefRequest,
  type WebhookReplayAccepted,
  type WebhookReplayRequest,
  type WebhookRotated,
} from "@dos/contracts";
import type { Kysely } from "kysely";
import type { Config } from "../config.ts";
import type { DB, Db } from "../db/database.ts";
import type { AddressPolicy } from "../delivery-http/address-policy.ts";
import { checkUrlHost } from "../delivery-http/webhook-client.ts";
import {
  invalidUrl,
  refusedUrl,
  sinceInFuture,
  sinceOutOfRange,
  tooManyWebhooks,
  webhookDisabled,
  webhookNotFound,
} from "../errors.ts";
import { storedEvent } from "../intake/delivery-event.ts";
import { deadLetterPending, type StoredEvent } from "../queue/queue.repository.ts";
import type { PastEvent } from "../replay/event-history.ts";
import { requeueEvents } from "../replay/replay.repository.ts";
import type { SecretBox } from "../signing/secret-box.ts";
import { generateSecret } from "../signing/signing.ts";
import {
  countEndpoints,
  type EndpointRow,
  enableEndpoint,
  findEndpoint,
  insertEndpoint,
  listAttempts,
  listEndpoints,
  updateEndpoint,
} from "./endpoints.repository.ts";

export interface EndpointsDeps {
  db: Kysely<DB>;
  config: Pick<Config, "WEBHOOKS_MAX_PER_ACCOUNT" | "WEBHOOKS_ROTATION_OVERLAP_MS">;
  policy: AddressPolicy;
  box: SecretBox;
  /** An account's events since a time, from the stream (replay/event-history.ts). */
  history(accountId: number, since: Date): AsyncIterable<PastEvent>;
  /** Wakes the local retry worker when messages became due. */
  wake(): void;
}

const DAY_MS = 24 * 60 * 60 * 1000;
const SINCE_CLOCK_SKEW_MS = 5 * 60 * 1000;
/** Events queued per transaction of a replay. */
const REPLAY_BATCH = 500;

export function createEndpointsService(deps: EndpointsDeps) {
  const { db, config, box } = deps;

  /** The endpoint the request names, locked when `forUpdate`; another account's is not found. */
  async function owned(tx: Db, request: WebhookRefRequest, options: { forUpdate?: boolean } = {}) {
    const endpoint = await findEndpoint(tx, request.account_id, request.webhook_id, options);
    if (!endpoint) throw webhookNotFound();
    return endpoint;
  }

  return {
    async create(request: WebhookCreateRequest): Promise<WebhookCreated> {
      const url = await checkEndpointUrl(deps.policy, request.url);
      if ((await countEndpoints(db, request.account_id)) >= config.WEBHOOKS_MAX_PER_ACCOUNT) {
        throw tooManyWebhooks(config.WEBHOOKS_MAX_PER_ACCOUNT);
      }
      const secret = generateSecret();
      const row = await insertEndpoint(db, {
        account_id: request.account_id,
        url,
        event_types: request.events ?? null,
        secret_ciphertext: box.seal(secret),
      });
      return { ...toWebhook(row), secret };
    },

    async list(request: WebhookListRequest): Promise<Webhook[]> {
      return (await listEndpoints(db, request.account_id)).map(toWebhook);
    },

    async remove(request: WebhookRefRequest): Promise<void> {
      await db.transaction().execute(async (tx) => {
        const endpoint = await owned(tx, request, { forUpdate: true });
        await updateEndpoint(tx, endpoint.id, { deleted_at: new Date() });
        await deadLetterPending(tx, endpoint.id, "endpoint deleted");
      });
    },

    async rotate(request: WebhookRefRequest): Promise<WebhookRotated> {
      const secret = generateSecret();
      const expiresAt = new Date(Date.now() + config.WEBHOOKS_ROTATION_OVERLAP_MS);
      const row = await db.transaction().execute(async (tx) => {
        const endpoint = await owned(tx, request, { forUpdate: true });
        return updateEndpoint(tx, endpoint.id, {
          secret_ciphertext: box.seal(secret),
          previous_secret_ciphertext: endpoint.secret_ciphertext,
          previous_secret_expires_at: expiresAt,
        });
      });
      return { id: row.id, secret, previous_secret_expires_at: formatTimestamp(expiresAt) };
    },

    async attempts(request: WebhookAttemptsRequest): Promise<WebhookAttempt[]> {
      const endpoint = await owned(db, request);
      const rows = await listAttempts(db, endpoint.id, request.limit ?? 50);
      return rows.map((row) => ({
        ...row,
        event_type: row.event_type as WebhookAttempt["event_type"],
        attempted_at: formatTimestamp(row.attempted_at),
        next_attempt_at: row.next_attempt_at ? formatTimestamp(row.next_attempt_at) : null,
      }));
    },

    /**
     * Queues again every event of the account since `since` that the endpoint subscribes to,
     * read back from the stream; the partition's owner sends them, in order per delivery.
     */
    async replay(request: WebhookReplayRequest): Promise<WebhookReplayAccepted> {
      const since = new Date(request.since);
      if (Number.isNaN(since.getTime()) || Date.now() - since.getTime() > DELIVERY_EVENTS_RETENTION_DAYS * DAY_MS) {
        throw sinceOutOfRange(DELIVERY_EVENTS_RETENTION_DAYS);
      }
      // Ahead by more than a clock's drift: a time zone mistake, which would replay nothing.
      if (since.getTime() - Date.now() > SINCE_CLOCK_SKEW_MS) throw sinceInFuture();
      const endpoint = await owned(db, request);
      if (endpoint.status === "disabled") throw webhookDisabled(endpoint.disabled_reason);
      let replayed = 0;
      let batch: StoredEvent[] = [];
      const flush = async () => {
        const events = batch;
        batch = [];
        await db.transaction().execute((tx) => requeueEvents(tx, endpoint, events));
        replayed += events.length;
      };
      for await (const { event, body } of deps.history(endpoint.account_id, since)) {
        if (endpoint.event_types && !endpoint.event_types.includes(event.type)) continue;
        batch.push(storedEvent(event, body, null));
        if (batch.length >= REPLAY_BATCH) await flush();
      }
      if (batch.length > 0) await flush();
      deps.wake();
      return { replayed };
    },

    /**
     * Turns a disabled endpoint back on (the operator's, after the receiver was fixed): the next
     * events are queued for it again, its failure clock starts afresh. What was dead-lettered
     * when it was disabled, and the events while it was off (never queued), stay as they are:
     * replay sends them. Enabling an enabled endpoint changes nothing.
     */
    async enable(request: WebhookRefRequest): Promise<Webhook> {
      const row = await db.transaction().execute(async (tx) => {
        const endpoint = await owned(tx, request, { forUpdate: true });
        return endpoint.status === "enabled" ? endpoint : enableEndpoint(tx, endpoint.id);
      });
      return toWebhook(row);
    },
  };
}
export type EndpointsService = ReturnType<typeof createEndpointsService>;

/** Checks a URL the way a POST would reach it; answers the normalised URL or a 422 naming url. */
async function checkEndpointUrl(policy: AddressPolicy, text: string): Promise<string> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalidUrl("must be an absolute http or https URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw invalidUrl("must be an absolute http or https URL");
  if (url.username || url.password) throw invalidUrl("must not contain a user name or password");
  url.hash = "";
  let refusal: string | null;
  try {
    refusal = await checkUrlHost(policy, url);
  } catch {
    throw invalidUrl(`host ${url.hostname} cannot be resolved`);
  }
  if (refusal) throw refusedUrl(refusal);
  return url.toString();
}

function toWebhook(row: EndpointRow): Webhook {
  const rotating = row.previous_secret_expires_at && row.previous_secret_expires_at > new Date();
  return {
    id: row.id,
    url: row.url,
    events: (row.event_types as Webhook["events"]) ?? null,
    status: row.status,
    disabled_reason: row.disabled_reason,
    created_at: formatTimestamp(row.created_at),
    previous_secret_expires_at: rotating ? formatTimestamp(row.previous_secret_expires_at as Date) : null,
  };
}
