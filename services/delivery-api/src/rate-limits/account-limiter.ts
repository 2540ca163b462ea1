/**
 * The client API's limit per account, exact across replicas: each account's GCRA state (one
 * TAT, see gcra.ts) lives in the RATE_LIMITS KV bucket and is only ever advanced by a
 * compare-and-set on its revision, so two replicas can never both spend the same unit.
 *
 * Cheap, because:
 * - every replica watches the bucket into a mirror; the TAT only grows, so a stale mirror
 *   under-estimates it and a refusal read from the mirror is always right: a flooding account
 *   is refused with no round trip at all;
 * - an admission needs one CAS, but one account's concurrent requests in one replica share it:
 *   while a CAS is in flight the next requests queue, and go together in the next one.
 *
 * While NATS does not answer, decisions are made from the mirror alone (a per-replica limit),
 * so the API keeps serving; the first CAS after it returns re-reads the shared state.
 */
import { natsNames, rateLimitKey } from "@dos/contracts";
import { createKvMirror, type Logger } from "@dos/service-kit";
import { JetStreamApiCodes, JetStreamApiError } from "@nats-io/jetstream";
import { type KV, Kvm, type KvWatchEntry } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/nats-core";
import { applyRequests, type Decision, intervalOf, type RatePolicy, refusal, rescale } from "./gcra.ts";

export interface AccountLimiter {
  /** Spends one unit of the account's quota, or says how long to wait. */
  take(accountId: number, policy: RatePolicy): Promise<Decision>;
  start(): void;
  stop(): Promise<void>;
}

interface Waiter {
  policy: RatePolicy;
  resolve(decision: Decision): void;
}

interface Entry {
  tat: number;
  /** The policy interval the TAT was written under (see rescale); 0: unknown, taken as current. */
  intervalMs: number;
  /** The bucket revision the TAT was read at; 0 when the key is not known to exist. */
  revision: number;
  /** Requests waiting for the CAS in flight to finish; undefined while none is in flight. */
  queue?: Waiter[];
  /** Units this replica claimed ahead (already spent in the shared TAT), and until when they hold. */
  leased: number;
  leaseEndsAt: number;
  /** The policy the lease was claimed under: a changed policy drops it. */
  leasePolicy?: RatePolicy;
}

/**
 * An account with a large quota is served from leases: each CAS claims up to this share of the
 * quota ahead, and the replica hands the units out with no round trip. Units are spent in the
 * shared TAT when claimed, so the limit is never exceeded; a replica's unused units lapse after
 * LEASE_MS, which can refuse up to this share of the quota early, per replica. Below 200
 * requests per window a lease is one unit: every admission is its own CAS, exactly.
 */
const LEASE_SHARE = 0.01;
const LEASE_MS = 1000;
const samePolicy = (a: RatePolicy | undefined, b: RatePolicy) =>
  a?.quota === b.quota && a.windowSeconds === b.windowSeconds;
const leaseSize = (policy: RatePolicy) => Math.max(1, Math.floor(policy.quota * LEASE_SHARE));

/**
 * CAS attempts for one batch. Each lost attempt means another replica's write won, so the
 * account is busy elsewhere; past this many the batch is refused (never admitted unchecked).
 */
const MAX_ATTEMPTS = 10;

/** A key's value: the TAT and the interval of the policy it was written under, as decimal text. */
const encode = (tat: number, intervalMs: number) => `${tat} ${intervalMs}`;
function decode(value: string): [tat: number, intervalMs: number] {
  const [tat, intervalMs] = value.split(" ").map(Number);
  return [tat ?? Number.NaN, Number.isFinite(intervalMs) && (intervalMs as number) > 0 ? (intervalMs as number) : 0];
}

/**
 * An entry's state moves forward by revision only: a later write includes every earlier one, and
 * a TAT older than its revision would let a CAS succeed over another replica's spend.
 */
function advance(entry: Entry, tat: number, intervalMs: number, revision: number) {
  if (revision <= entry.revision) return;
  entry.tat = tat;
  entry.intervalMs = intervalMs;
  entry.revision = revision;
}

/** One unit of the replica's lease, if it holds one for this policy; a lapsed lease is dropped. */
function fromLease(entry: Entry, now: number, policy: RatePolicy): Decision | null {
  if (entry.leased === 0) return null;
  if (entry.leaseEndsAt <= now || !samePolicy(entry.leasePolicy, policy)) {
    entry.leased = 0;
    return null;
  }
  entry.leased--;
  const tat = Math.max(entry.tat, now);
  const remaining = Math.max(0, Math.floor((policy.windowSeconds * 1000 - (tat - now)) / intervalOf(policy)));
  return { allowed: true, remaining: remaining + entry.leased, resetMs: tat - now, retryAfterMs: 0 };
}

export function createAccountLimiter(options: {
  nc: NatsConnection;
  namespace: string;
  logger: Logger;
  /** How long a CAS may take before the batch is decided locally. */
  timeoutMs: number;
  clock?: () => number;
}): AccountLimiter {
  const { logger, timeoutMs } = options;
  const clock = options.clock ?? Date.now;
  const bucketName = natsNames(options.namespace).buckets.rateLimits;
  const entries = new Map<string, Entry>();
  let kvPromise: Promise<KV> | undefined;
  let pruner: NodeJS.Timeout | undefined;

  const bucket = () => {
    kvPromise ??= new Kvm(options.nc).open(bucketName).catch((error: unknown) => {
      kvPromise = undefined;
      throw error;
    });
    return kvPromise;
  };

  const learn = (key: string, value: string, revision: number) => {
    const [tat, intervalMs] = decode(value);
    if (!Number.isFinite(tat)) return;
    const entry = entries.get(key);
    if (!entry) entries.set(key, { tat, intervalMs, revision, leased: 0, leaseEndsAt: 0 });
    else advance(entry, tat, intervalMs, revision);
  };

  const apply = (watched: KvWatchEntry) => {
    if (watched.operation !== "PUT") entries.delete(watched.key);
    else learn(watched.key, watched.string(), watched.revision);
  };

  /** The entry's TAT as `policy` reads it at `now`. */
  const tatOf = (entry: Entry, now: number, policy: RatePolicy) =>
    rescale(entry.tat, entry.intervalMs || intervalOf(policy), now, policy);

  /** Runs CASes for `key` until its queue is empty; one batch per CAS. */
  const drain = async (key: string, entry: Entry, first: Waiter[]) => {
    let batch = first;
    while (batch.length > 0) {
      await decide(key, entry, batch);
      // Those that queued meanwhile take what the last CAS leased first.
      batch = (entry.queue ?? []).filter((waiter) => {
        const leased = fromLease(entry, clock(), waiter.policy);
        if (leased) waiter.resolve(leased);
        return !leased;
      });
      entry.queue = batch.length > 0 ? [] : undefined;
    }
  };

  const decide = async (key: string, entry: Entry, batch: Waiter[]) => {
    // One policy per account: every waiter of a batch carries the same (the account's).
    const policy = (batch[0] as Waiter).policy;
    for (let attempt = 1; ; attempt++) {
      const now = clock();
      if (attempt > MAX_ATTEMPTS) {
        const retryAfterMs = (policy.windowSeconds * 1000) / policy.quota;
        const refused = { allowed: false, remaining: 0, resetMs: Math.max(0, entry.tat - now), retryAfterMs };
        for (const waiter of batch) waiter.resolve(refused);
        return;
      }
      const extra = Math.max(0, leaseSize(policy) - batch.length);
      const { decisions, tat } = applyRequests(tatOf(entry, now, policy), now, policy, batch.length + extra);
      const admitted = decisions.some((d) => d.allowed);
      const written = admitted ? await write(key, entry.revision, encode(tat, intervalOf(policy))) : "unavailable";
      if (written === "conflict") {
        await reread(key, entry);
        continue;
      }
      if (admitted) {
        // The watch may already have brought a later write of another replica (which includes
        // this one): this TAT under that revision would let the next CAS overwrite its spend.
        if (typeof written === "number") advance(entry, tat, intervalOf(policy), written);
        else {
          entry.tat = tat;
          entry.intervalMs = intervalOf(policy);
        }
        entry.leased += decisions.slice(batch.length).filter((d) => d.allowed).length;
        entry.leaseEndsAt = now + LEASE_MS;
        entry.leasePolicy = policy;
      }
      for (const [i, waiter] of batch.entries()) {
        const decision = decisions[i] as Decision;
        // The units leased are this replica's to give: they count as remaining.
        waiter.resolve(decision.allowed ? { ...decision, remaining: decision.remaining + entry.leased } : decision);
      }
      return;
    }
  };

  const write = async (key: string, revision: number, value: string): Promise<number | "conflict" | "unavailable"> => {
    try {
      // previousSeq 0: the key must not exist yet (an account's first request, or expired state).
      return await (await bucket()).put(key, value, { previousSeq: revision, timeout: timeoutMs });
    } catch (error) {
      if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamWrongLastSequence) {
        return "conflict";
      }
      logger.warn({ err: error }, "rate-limit state not written; deciding from this replica's mirror");
      return "unavailable";
    }
  };

  const reread = async (key: string, entry: Entry) => {
    try {
      const current = await (await bucket()).get(key);
      const [tat, intervalMs] = current?.operation === "PUT" ? decode(current.string()) : [0, 0];
      entry.tat = Number.isFinite(tat) ? tat : 0;
      entry.intervalMs = intervalMs;
      entry.revision = current?.revision ?? 0;
    } catch (error) {
      logger.warn({ err: error }, "rate-limit state not read");
    }
  };

  const mirror = createKvMirror({
    nc: options.nc,
    bucket: bucketName,
    logger,
    label: "rate-limit",
    apply,
    // Kept: an entry only moves forward by revision (learn), so a snapshot read again changes
    // nothing, and an entry holds this replica's leases and queue.
    clear() {},
  });

  return {
    take(accountId, policy) {
      const key = rateLimitKey(accountId);
      let entry = entries.get(key);
      if (!entry) {
        entry = { tat: 0, intervalMs: 0, revision: 0, leased: 0, leaseEndsAt: 0 };
        entries.set(key, entry);
      }
      const now = clock();
      const leased = fromLease(entry, now, policy);
      if (leased) return Promise.resolve(leased);
      const refused = refusal(tatOf(entry, now, policy), now, policy);
      if (refused) return Promise.resolve(refused);
      return new Promise<Decision>((resolve) => {
        const waiter = { policy, resolve };
        const current = entry as Entry;
        if (current.queue) current.queue.push(waiter);
        else {
          current.queue = [];
          void drain(key, current, [waiter]);
        }
      });
    },
    start() {
      void mirror.start();
      // Entries whose TAT passed long ago say nothing a missing one would not; the mirror of a
      // busy bucket stays the size of the accounts active lately.
      pruner ??= setInterval(() => {
        const old = clock() - 60_000;
        for (const [key, entry] of entries) if (!entry.queue && entry.tat < old) entries.delete(key);
      }, 60_000).unref();
    },
    async stop() {
      clearInterval(pruner);
      await mirror.stop();
    },
  };
}
