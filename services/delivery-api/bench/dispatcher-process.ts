/**
 * The benchmark's webhook-dispatcher, in its own process (as in production) so that its CPU time
 * is its own: a real dispatcher on its own database, consuming the namespace's DELIVERY_EVENTS
 * with the production intervals (the test harness's short ones would poll 10 times as often).
 * Prints "ready <database name>" once it consumes; stops on SIGTERM.
 */
import { startTestDispatcher } from "@dos/webhook-dispatcher/testing";

const [namespace] = process.argv.slice(2);
if (!namespace) throw new Error("usage: dispatcher-process.ts <namespace>");
const dispatcher = await startTestDispatcher({
  namespace,
  env: {
    WEBHOOKS_POLL_INTERVAL_MS: "250",
    WEBHOOKS_REBALANCE_INTERVAL_MS: "2000",
    WEBHOOKS_STATS_INTERVAL_MS: "5000",
    WEBHOOKS_TIMEOUT_MS: "15000",
    WEBHOOKS_RETRY_SCHEDULE: "0,5s,5m,30m,2h,5h,10h,10h",
    WEBHOOKS_RETRY_JITTER: "0.2",
  },
});
process.once("SIGTERM", () => {
  dispatcher.close().then(() => process.exit(0));
});
process.stdout.write(`ready ${new URL(dispatcher.databaseUrl).pathname.slice(1)}\n`);
