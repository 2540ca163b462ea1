/**
 * The gate every POST passes: at most WEBHOOKS_ENDPOINT_CONCURRENCY in flight to one endpoint
 * and WEBHOOKS_CONCURRENCY in this process. The replica that owns an account's partition sends
 * all of its endpoints' POSTs, so counting them here is counting them over every replica.
 *
 * Waiting POSTs are served first come, first served per endpoint, and endpoints take turns for
 * the process's slots, so a slow endpoint holds only its own POSTs back. A POST queued with an
 * expiry that has waited that long is taken out and handed to its `onExpired` instead (the
 * stream path then moves it to the database queue, see live-queues.ts).
 */

export interface GateOptions {
  processLimit: number;
  endpointLimit: number;
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
  active: number;
  waiting: Job[];
  /** Index of the first waiting job (the array is compacted now and then). */
  head: number;
  ready: boolean;
}

const SWEEP_MS = 100;

export interface SendGate {
  /** Runs `run` when the endpoint and the process have a free slot. */
  enqueue(
    endpointId: string,
    run: () => Promise<void>,
    options?: { expiresAfterMs?: number; onExpired?: () => void },
  ): QueuedSend;
  /** POSTs running now. */
  inFlight(): number;
}

export function createSendGate(options: GateOptions): SendGate {
  const lines = new Map<string, EndpointLine>();
  /** Endpoints with a job waiting and a free slot, in turn order. */
  const ready: EndpointLine[] = [];
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

  const markReady = (line: EndpointLine) => {
    if (!line.ready && line.active < options.endpointLimit && nextWaiting(line)) {
      line.ready = true;
      ready.push(line);
    }
  };

  function pump() {
    while (active < options.processLimit && ready.length > 0) {
      const line = ready.shift() as EndpointLine;
      line.ready = false;
      const job = nextWaiting(line);
      if (!job) continue;
      line.head++;
      job.state = "started";
      line.active++;
      active++;
      void job
        .run()
        .catch(() => {})
        .finally(() => {
          line.active--;
          active--;
          markReady(line);
          if (line.active === 0 && !nextWaiting(line)) lines.delete(line.id);
          pump();
        });
      markReady(line);
    }
  }

  /** Hands the POSTs that waited past their expiry to their owners. */
  function sweep() {
    const now = performance.now();
    let waiting = false;
    for (const line of lines.values()) {
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
      if (line.active === 0 && !nextWaiting(line)) lines.delete(line.id);
    }
    if (!waiting) {
      clearInterval(sweeper);
      sweeper = undefined;
    }
  }

  return {
    enqueue(endpointId, run, jobOptions = {}) {
      let line = lines.get(endpointId);
      if (!line) {
        line = { id: endpointId, active: 0, waiting: [], head: 0, ready: false };
        lines.set(endpointId, line);
      }
      const job: Job = {
        run,
        queuedAt: performance.now(),
        expiresAfterMs: jobOptions.expiresAfterMs,
        onExpired: jobOptions.onExpired,
        state: "waiting",
      };
      line.waiting.push(job);
      markReady(line);
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
