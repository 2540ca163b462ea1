/**
 * The gate every POST passes: at most WEBHOOKS_ENDPOINT_CONCURRENCY in flight to one endpoint,
 * WEBHOOKS_ACCOUNT_CONCURRENCY for one account (all its endpoints together) and
 * WEBHOOKS_CONCURRENCY in this process. The replica that owns an account's partition sends all
 * of its endpoints' POSTs, so counting them here is counting them over every replica.
 *
 * Free process slots go to the accounts in turn, and within an account to its endpoints in
 * turn; an endpoint's POSTs wait first come, first served. So an account whose endpoints hang
 * holds at most its own share of the process: another account's POST starts at once while
 * fewer than WEBHOOKS_CONCURRENCY / WEBHOOKS_ACCOUNT_CONCURRENCY accounts fill their share, and
 * otherwise gets one of the next slots freed, whatever the number of endpoints or POSTs waiting
 * behind the others. A POST queued with an expiry that has waited that long is taken out and
 * handed to its `onExpired` instead (the stream path then moves it to the database queue, see
 * live-queues.ts).
 */

export interface GateOptions {
  processLimit: number;
  accountLimit: number;
  endpointLimit: number;
}

/** Whose POST it is: the account's and the endpoint's limits apply. */
export interface GateTarget {
  accountId: number;
  endpointId: string;
}

export interface QueuedSend {
  /** Takes the POST out of the queue before it starts; false when it has started (or ended). */
  cancel(): boolean;
}

interface Job {
  run: () => Promise<void>;
  queuedAt: number;
  expiresAfterMs: number | undefined;
  onExpired: (() => void) | undefined;
  state: "waiting" | "started" | "cancelled";
}

interface EndpointLine {
  id: string;
  account: AccountLine;
  active: number;
  waiting: Job[];
  /** Index of the first waiting job (the array is compacted now and then). */
  head: number;
  /** In its account's turn order. */
  ready: boolean;
}

interface AccountLine {
  id: number;
  active: number;
  endpoints: Map<string, EndpointLine>;
  /** Its endpoints with a job waiting and a free slot, in turn order. */
  turns: EndpointLine[];
  /** In the process's turn order. */
  ready: boolean;
}

const SWEEP_MS = 100;

export interface SendGate {
  /** Runs `run` when the endpoint, its account and the process have a free slot. */
  enqueue(
    target: GateTarget,
    run: () => Promise<void>,
    options?: { expiresAfterMs?: number; onExpired?: () => void },
  ): QueuedSend;
  /** POSTs running now. */
  inFlight(): number;
}

export function createSendGate(options: GateOptions): SendGate {
  const accounts = new Map<number, AccountLine>();
  /** Accounts with an endpoint ready and a free slot of their own, in turn order. */
  const turns: AccountLine[] = [];
  let active = 0;
  let sweeper: NodeJS.Timeout | undefined;

  const nextWaiting = (line: EndpointLine): Job | undefined => {
    while (line.head < line.waiting.length) {
      const job = line.waiting[line.head] as Job;
      if (job.state === "waiting") {
        // A line that never empties under steady load would keep every job it ever held.
        if (line.head >= 1024) {
          line.waiting = line.waiting.slice(line.head);
          line.head = 0;
        }
        return job;
      }
      line.head++;
    }
    line.waiting = [];
    line.head = 0;
    return undefined;
  };

  const markAccount = (account: AccountLine) => {
    if (!account.ready && account.active < options.accountLimit && account.turns.length > 0) {
      account.ready = true;
      turns.push(account);
    }
  };

  const markEndpoint = (line: EndpointLine) => {
    if (!line.ready && line.active < options.endpointLimit && nextWaiting(line)) {
      line.ready = true;
      line.account.turns.push(line);
    }
    markAccount(line.account);
  };

  /** Forgets an endpoint (and its account) with nothing running or waiting. */
  const forgetIfIdle = (line: EndpointLine) => {
    if (line.active > 0 || line.ready || nextWaiting(line)) return;
    const { account } = line;
    account.endpoints.delete(line.id);
    if (account.endpoints.size === 0 && account.active === 0) accounts.delete(account.id);
  };

  /** The account's next endpoint in turn with a job waiting, and that job. */
  function takeTurn(account: AccountLine): { line: EndpointLine; job: Job } | undefined {
    for (let line = account.turns.shift(); line; line = account.turns.shift()) {
      line.ready = false;
      const job = nextWaiting(line);
      if (job) return { line, job };
      forgetIfIdle(line);
    }
    return undefined;
  }

  function pump() {
    while (active < options.processLimit && turns.length > 0) {
      const account = turns.shift() as AccountLine;
      account.ready = false;
      const turn = takeTurn(account);
      if (!turn) continue;
      const { line, job } = turn;
      line.head++;
      job.state = "started";
      line.active++;
      account.active++;
      active++;
      void job
        .run()
        .catch(() => {})
        .finally(() => {
          line.active--;
          account.active--;
          active--;
          markEndpoint(line);
          markAccount(account);
          forgetIfIdle(line);
          pump();
        });
      markEndpoint(line);
    }
  }

  /** Hands the POSTs that waited past their expiry to their owners. */
  function sweep() {
    const now = performance.now();
    let waiting = false;
    for (const account of accounts.values()) {
      for (const line of account.endpoints.values()) {
        for (let i = line.head; i < line.waiting.length; i++) {
          const job = line.waiting[i] as Job;
          if (job.state !== "waiting") continue;
          if (job.expiresAfterMs === undefined) continue;
          if (now - job.queuedAt >= job.expiresAfterMs) {
            job.state = "cancelled";
            job.onExpired?.();
          } else {
            waiting = true;
          }
        }
        forgetIfIdle(line);
      }
    }
    if (!waiting) {
      clearInterval(sweeper);
      sweeper = undefined;
    }
  }

  function lineOf(target: GateTarget): EndpointLine {
    let account = accounts.get(target.accountId);
    if (!account) {
      account = { id: target.accountId, active: 0, endpoints: new Map(), turns: [], ready: false };
      accounts.set(target.accountId, account);
    }
    let line = account.endpoints.get(target.endpointId);
    if (!line) {
      line = { id: target.endpointId, account, active: 0, waiting: [], head: 0, ready: false };
      account.endpoints.set(target.endpointId, line);
    }
    return line;
  }

  return {
    enqueue(target, run, jobOptions = {}) {
      const line = lineOf(target);
      const job: Job = {
        run,
        queuedAt: performance.now(),
        expiresAfterMs: jobOptions.expiresAfterMs,
        onExpired: jobOptions.onExpired,
        state: "waiting",
      };
      line.waiting.push(job);
      markEndpoint(line);
      pump();
      if (job.state === "waiting" && job.expiresAfterMs !== undefined && !sweeper) {
        sweeper = setInterval(sweep, SWEEP_MS);
        sweeper.unref();
      }
      return {
        cancel() {
          if (job.state !== "waiting") return false;
          job.state = "cancelled";
          return true;
        },
      };
    },
    inFlight: () => active,
  };
}
