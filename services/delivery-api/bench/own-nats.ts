/**
 * A nats-server of the benchmark's own (JetStream, loopback, a spare port, data in a temporary
 * folder). The machine's NATS serves every other process on it too, so its CPU time would count
 * their messages as the creates'; on a server of its own, every message is the benchmark's.
 * Returns null when no nats-server binary is installed (the benchmark then uses the shared one).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout } from "node:timers/promises";

export interface OwnNats {
  url: string;
  pid: number;
  /** Messages the server received and sent so far (its monitoring endpoint, /varz). */
  messages(): Promise<{ in: number; out: number }>;
  stop(): Promise<void>;
}

const BINARIES = ["/usr/sbin/nats-server", "/usr/bin/nats-server", "/usr/local/bin/nats-server"];

export async function startOwnNats(): Promise<OwnNats | null> {
  const binary = BINARIES.find((file) => existsSync(file));
  if (!binary) return null;
  const port = await sparePort();
  const monitor = await sparePort();
  const store = mkdtempSync(path.join(tmpdir(), "dos-bench-nats-"));
  const args = ["-a", "127.0.0.1", "-p", String(port), "-m", String(monitor), "-js", "-sd", store];
  const child: ChildProcess = spawn(binary, args, { stdio: "ignore" });
  const deadline = Date.now() + 15_000;
  while (!(await answers(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      rmSync(store, { recursive: true, force: true });
      throw new Error(`nats-server on port ${port} did not start`);
    }
    await setTimeout(50);
  }
  return {
    url: `nats://127.0.0.1:${port}`,
    pid: child.pid ?? 0,
    async messages() {
      const varz = (await (await fetch(`http://127.0.0.1:${monitor}/varz`)).json()) as {
        in_msgs: number;
        out_msgs: number;
      };
      return { in: varz.in_msgs, out: varz.out_msgs };
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        await once(child, "exit");
      }
      rmSync(store, { recursive: true, force: true });
    },
  };
}

/** A loopback port nothing listens on right now. */
function sparePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: "127.0.0.1" });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
