/**
 * The shops' and the dispatcher's side of the fleet soak: deliveries created at a steady rate
 * (open loop: one is due every 1/rate s whether or not the last was answered), each then living
 * the life of one of a fixed mix, a few seconds per step:
 *   - 3 in 10 modified (a PATCH of the recipient's phone and the comments),
 *   - 1 in 10 cancelled, 1 in 10 modified and then cancelled,
 *   - 3 in 10 put on the round of a vehicle of the fleet and progressed to delivered: added to
 *     the round (scheduled), pickup started and completed (picked_up), dropoff started and
 *     completed (delivered),
 *   - 2 in 10 left as they are.
 * Every call's latency and status is recorded by operation, so the soak reports p50 and p99 of
 * each and what was refused.
 */
import { clientHeaders, opsHeaders, outboundDelivery, type SeededAccount } from "../src/client.ts";

export type OrderOperation = "create" | "update" | "cancel" | "round add" | "task start" | "task complete";

export interface OrderCall {
  operation: OrderOperation;
  at: number;
  ms: number;
  /** 0: no HTTP answer. */
  status: number;
  body?: string;
}

type Fate = "modified" | "cancelled" | "modified+cancelled" | "delivered" | "untouched";
const FATES: Fate[] = [
  "modified",
  "delivered",
  "cancelled",
  "modified",
  "delivered",
  "untouched",
  "modified+cancelled",
  "delivered",
  "modified",
  "untouched",
];

export interface OrdersOptions {
  api: string;
  opsUrl: string;
  accounts: SeededAccount[];
  /** Round ids of the fleet's active rounds; deliveries are spread over them. */
  rounds: number[];
  createsPerSecond: number;
  /** Wait between two steps of one delivery's life. */
  stepMs: number;
  timeoutMs?: number;
}

export interface Orders {
  calls: OrderCall[];
  /** Deliveries answered 201, by id, with their account and fate. */
  created: Map<number, { accountId: number; fate: Fate }>;
  /** Stops creating; the lives under way go on. */
  halt(): void;
  /** Waits for every delivery's life under way to end. */
  settle(): Promise<void>;
}

export function startOrders(options: OrdersOptions): Orders {
  const calls: OrderCall[] = [];
  const created = new Map<number, { accountId: number; fate: Fate }>();
  const lives = new Set<Promise<void>>();
  const timeoutMs = options.timeoutMs ?? 30_000;
  let counter = 0;
  let stopping = false;

  async function timed(operation: OrderOperation, url: string, method: string, headers: object, body?: unknown) {
    const at = Date.now();
    const record: OrderCall = { operation, at, ms: 0, status: 0 };
    let parsed: unknown;
    try {
      const response = await fetch(url, {
        method,
        headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
      const text = await response.text();
      record.status = response.status;
      if (response.status >= 300) record.body = text.slice(0, 300);
      else if (text) parsed = JSON.parse(text);
    } catch (error) {
      record.body = (error as Error).message;
    }
    record.ms = Date.now() - at;
    calls.push(record);
    return { status: record.status, body: parsed };
  }

  const pause = () => new Promise((resolve) => setTimeout(resolve, options.stepMs));

  async function life(n: number) {
    const account = options.accounts[n % options.accounts.length] as SeededAccount;
    const fate = FATES[n % FATES.length] as Fate;
    const client = clientHeaders(account);
    const api = `${options.api}/api/v2/deliveries`;
    const made = await timed("create", api, "POST", client, outboundDelivery(account, `fleet-${n}`));
    if (made.status !== 201) return;
    const id = (made.body as { id: number }).id;
    created.set(id, { accountId: account.account_id, fate });
    if (fate === "untouched") return;
    await pause();
    if (fate === "modified" || fate === "modified+cancelled") {
      await timed("update", `${api}/${id}`, "PATCH", client, {
        comments: `Ring twice (${n})`,
        dropoff: { place: { recipient_phone: `+3361234${String(n % 10_000).padStart(4, "0")}` } },
      });
      if (fate === "modified") return;
      await pause();
    }
    if (fate === "cancelled" || fate === "modified+cancelled") {
      await timed("cancel", `${api}/${id}/cancel`, "PATCH", client);
      return;
    }
    // Delivered: on the round of one of the fleet's vehicles, then task by task.
    const round = options.rounds[n % options.rounds.length] as number;
    const ops = `${options.opsUrl}/ops/v1`;
    const added = await timed("round add", `${ops}/rounds/${round}/deliveries`, "POST", opsHeaders, {
      delivery_id: id,
    });
    if (added.status !== 200) return;
    const tasks = (added.body as { tasks: Array<{ task_id: number; kind: string; delivery_id: number }> }).tasks;
    for (const kind of ["pickup", "dropoff"]) {
      const task = tasks.find((t) => t.delivery_id === id && t.kind === kind)?.task_id;
      await pause();
      if ((await timed("task start", `${ops}/tasks/${task}/start`, "POST", opsHeaders)).status !== 200) return;
      await pause();
      const completion = kind === "dropoff" ? { accepted_by: "Jeanne Martin" } : {};
      if (
        (await timed("task complete", `${ops}/tasks/${task}/complete`, "POST", opsHeaders, completion)).status !== 200
      )
        return;
    }
  }

  const started = Date.now();
  const intervalMs = 1000 / options.createsPerSecond;
  // A timer per due create would drift on a loaded machine: each tick starts every one now due.
  const tick = () => {
    if (stopping) return;
    while (started + counter * intervalMs <= Date.now()) {
      const life$ = life(counter++).finally(() => lives.delete(life$));
      lives.add(life$);
    }
    setTimeout(tick, Math.max(1, Math.min(intervalMs, started + counter * intervalMs - Date.now())));
  };
  tick();

  return {
    calls,
    created,
    halt() {
      stopping = true;
    },
    async settle() {
      while (lives.size > 0) await Promise.all(lives);
    },
  };
}

/**
 * The calls refused or unanswered, by operation and status (e.g. "create 503"): how many, and
 * the first one's body (the error's words, or the client's when no answer came).
 */
export function refusals(calls: OrderCall[]): Record<string, { count: number; example: string }> {
  const found: Record<string, { count: number; example: string }> = {};
  for (const c of calls.filter((x) => x.status < 200 || x.status >= 300)) {
    const key = `${c.operation} ${c.status}`;
    found[key] ??= { count: 0, example: c.body ?? "" };
    found[key].count++;
  }
  return found;
}
