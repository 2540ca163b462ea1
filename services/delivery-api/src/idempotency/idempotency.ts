/**
 * Idempotency-Key on POST create and redelivery. The first successful answer to a key is stored
 * with the hash of its request, in the transaction that writes the delivery; a retry with the
 * same key and request gets that answer again, the same key with another request a 422. Keys are
 * remembered 24 hours. A refused request stores nothing, so it can be retried with the same key.
 */
import { createHash } from "node:crypto";
import { unprocessable } from "@dos/service-kit";
import type { FastifyRequest } from "fastify";
import type { Kysely } from "kysely";
import type { DB, Db } from "../db/database.ts";
import { findLiveKey, insertKeyUnlessLive } from "./idempotency.repository.ts";

const idempotencyKeyInvalid = () => unprocessable("Idempotency-Key must be 1 to 255 visible ASCII characters");
const idempotencyKeyReused = () =>
  unprocessable("Idempotency-Key was already used with another request; use a new key for a new request");

const IDEMPOTENCY_HEADER = "idempotency-key";
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

export interface IdempotentRequest {
  accountId: number;
  operation: string;
  key: string;
  requestSha256: Buffer;
}

export interface StoredResponse {
  status: number;
  body: unknown;
}

/** Raised inside the transaction when another request stored the same key first. */
class IdempotencyRace extends Error {
  override name = "IdempotencyRace";
}

/** The key of a request, or null when it carries none; an unusable key is a 422. */
export function idempotentRequest(
  request: FastifyRequest,
  accountId: number,
  operation: string,
  fingerprint: unknown,
): IdempotentRequest | null {
  const header = request.headers[IDEMPOTENCY_HEADER];
  if (header === undefined) return null;
  if (typeof header !== "string" || !KEY_PATTERN.test(header)) throw idempotencyKeyInvalid();
  const requestSha256 = createHash("sha256").update(canonicalJson(fingerprint)).digest();
  return { accountId, operation, key: header, requestSha256 };
}

/** The stored answer to the same request, null when the key is new; another request with the key is a 422. */
async function findStoredResponse(db: Db, request: IdempotentRequest): Promise<StoredResponse | null> {
  const row = await findLiveKey(db, request);
  if (!row) return null;
  if (!row.request_sha256.equals(request.requestSha256)) throw idempotencyKeyReused();
  return { status: row.response_status, body: row.response_body };
}

/** Stores the answer; an expired record of the key is replaced, a live one raises IdempotencyRace. */
async function storeResponse(db: Db, request: IdempotentRequest, response: StoredResponse): Promise<void> {
  const values = {
    account_id: request.accountId,
    operation: request.operation,
    key: request.key,
    request_sha256: request.requestSha256,
    response_status: response.status,
    response_body: JSON.stringify(response.body),
  };
  if (!(await insertKeyUnlessLive(db, values))) throw new IdempotencyRace();
}

/** JSON with object keys sorted, so the same body sent with its keys in another order is the same request. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

export interface IdempotentResponse extends StoredResponse {
  /** True when this is the stored answer to an earlier request with the same key. */
  replayed: boolean;
}

/**
 * Runs a creating request once per key: replays a stored answer, else prepares (outside any
 * transaction, e.g. a price quote) and writes, storing the answer in the write's transaction.
 * When a concurrent request with the same key wins the race, its answer is returned instead.
 */
export async function respondOnce<P>(
  db: Kysely<DB>,
  idempotency: IdempotentRequest | null,
  prepare: () => Promise<P>,
  write: (trx: Db, prepared: P) => Promise<StoredResponse>,
): Promise<IdempotentResponse> {
  const replay = idempotency ? await findStoredResponse(db, idempotency) : null;
  if (replay) return { ...replay, replayed: true };
  const prepared = await prepare();
  try {
    const response = await db.transaction().execute(async (trx) => {
      const answer = await write(trx, prepared);
      if (idempotency) await storeResponse(trx, idempotency, answer);
      return answer;
    });
    return { ...response, replayed: false };
  } catch (error) {
    const winner = idempotency && error instanceof IdempotencyRace ? await findStoredResponse(db, idempotency) : null;
    if (winner) return { ...winner, replayed: true };
    throw error;
  }
}
