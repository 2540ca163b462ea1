/**
 * The process lifecycle: readiness turns false from the first SIGTERM on, then the shutdown
 * steps run in order (stop accepting, finish in-flight work, drain NATS, close the pool), and
 * the process exits 0, or 1 when the drain outlasts its time limit.
 */
import type { Logger } from "pino";

export interface Lifecycle {
  readonly shuttingDown: boolean;
  /** Adds a step; steps run in the order they were added. */
  onShutdown(name: string, step: () => Promise<unknown> | unknown): void;
  /** Runs every step once; later calls return the same promise. */
  shutdown(reason: string): Promise<void>;
}

export function createLifecycle(logger: Logger): Lifecycle {
  const steps: Array<{ name: string; step: () => Promise<unknown> | unknown }> = [];
  let shuttingDown = false;
  let running: Promise<void> | undefined;
  return {
    get shuttingDown() {
      return shuttingDown;
    },
    onShutdown(name, step) {
      steps.push({ name, step });
    },
    shutdown(reason) {
      if (running) return running;
      shuttingDown = true;
      logger.info({ reason }, "shutting down");
      running = (async () => {
        for (const { name, step } of steps) {
          try {
            await step();
          } catch (error) {
            logger.warn({ err: error, step: name }, "shutdown step failed");
          }
        }
      })();
      return running;
    },
  };
}

/**
 * Wires SIGTERM and SIGINT to the lifecycle and exits when it is done or out of time. The
 * handlers stay for the whole drain: a signal arriving while it runs is logged and ignored.
 * With `process.once`, the second one reached Node's default handler and the process ended by
 * the signal instead of exit 0; that happens whenever two senders signal the same process, e.g.
 * a process-group kill of `npm start` (every service gets it) followed by start.ts's own SIGTERM.
 */
export function exitOnSignals(lifecycle: Lifecycle, logger: Logger, timeoutMs: number): void {
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.info({ signal }, "already shutting down; signal ignored");
      return;
    }
    stopping = true;
    const timer = setTimeout(() => {
      logger.error({ timeoutMs }, "shutdown took too long; exiting");
      process.exit(1);
    }, timeoutMs);
    timer.unref();
    lifecycle.shutdown(signal).then(
      () => {
        logger.info("stopped");
        logger.flush?.();
        process.exit(0);
      },
      () => process.exit(1),
    );
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}
