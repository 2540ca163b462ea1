import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const lifecycleModule = fileURLToPath(new URL("./lifecycle.ts", import.meta.url));

/**
 * A process wired like a service: one shutdown step that takes `stepMs` (in-flight work), then
 * exit through exitOnSignals. It prints "ready" once the handlers are in place, "draining" when
 * the step starts and "drained" when it ends.
 */
function startProcess(stepMs: number, timeoutMs = 10_000) {
  const script = `
    import { createLifecycle, exitOnSignals } from ${JSON.stringify(lifecycleModule)};
    const logger = { info() {}, warn() {}, error() {} };
    const lifecycle = createLifecycle(logger);
    lifecycle.onShutdown("in-flight work", async () => {
      process.stdout.write("draining\\n");
      await new Promise((resolve) => setTimeout(resolve, ${stepMs}));
      process.stdout.write("drained\\n");
    });
    exitOnSignals(lifecycle, logger, ${timeoutMs});
    setInterval(() => {}, 1000);
    process.stdout.write("ready\\n");
  `;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const seen = async (line: string) => {
    while (!output.includes(`${line}\n`)) await once(child.stdout, "data");
  };
  const exited = once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
  return { child, seen, exited, output: () => output };
}

test("a second SIGTERM, and a SIGINT, during the drain neither kill the process nor cut the drain short", async () => {
  const service = startProcess(1500);
  await service.seen("ready");
  service.child.kill("SIGTERM");
  await service.seen("draining");
  service.child.kill("SIGTERM");
  service.child.kill("SIGINT");
  await new Promise((resolve) => setTimeout(resolve, 100));
  service.child.kill("SIGTERM");
  const [code, signal] = await service.exited;
  assert.deepEqual({ code, signal }, { code: 0, signal: null });
  assert.match(service.output(), /draining\ndrained\n/);
});

test("a drain that outlasts the shutdown timeout exits 1", async () => {
  const service = startProcess(60_000, 300);
  await service.seen("ready");
  service.child.kill("SIGTERM");
  const [code, signal] = await service.exited;
  assert.deepEqual({ code, signal }, { code: 1, signal: null });
});
