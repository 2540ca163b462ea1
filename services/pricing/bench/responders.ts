/**
 * The benchmark's server side, in its own process so it does not share an event loop with the
 * load generator: `pricing` starts one pricing replica, `echo` a bare request/reply responder.
 * Prints "ready" once it answers; stops on SIGTERM.
 */
import { connectNats, createLogger } from "@dos/service-kit";
import { testInfra } from "@dos/service-kit/testing";
import { startPricingReplica } from "../test/pricing-harness.ts";

const [mode, namespace, target] = process.argv.slice(2);
const logger = createLogger(`bench-${mode}`, "silent");
let stop: () => Promise<void>;
if (mode === "pricing" && namespace && target) {
  const replica = await startPricingReplica({ databaseUrl: target, namespace, name: "pricing-bench", logger });
  stop = replica.stop;
} else if (mode === "echo" && target) {
  const echo = await connectNats(testInfra().natsUrl, "pricing-bench-echo", logger);
  echo.nc.subscribe(target, { callback: (_error, msg) => void msg.respond(msg.data) });
  await echo.nc.flush();
  stop = echo.drain;
} else {
  throw new Error("usage: responders.ts pricing <namespace> <database url> | echo <namespace> <subject>");
}
process.once("SIGTERM", () => {
  stop().then(() => process.exit(0));
});
process.stdout.write("ready\n");
