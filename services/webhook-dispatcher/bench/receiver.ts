/**
 * The benchmark's webhook receiver, a process of its own as a client's system is: it answers
 * every POST with 204 at once and notes when each webhook-id first arrived (epoch ms, the same
 * clock as the benchmark's on this machine). The arrivals go to the parent over IPC in batches,
 * every 10 ms while there are new ones, so that noting them costs the receiver next to nothing.
 * Started by dispatch.bench.ts with `fork`; its first message is the port it listens on.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { epochMs } from "./clock.ts";

const seen = new Set<string>();
let fresh: Array<[string, number]> = [];

const server = http.createServer((request, response) => {
  request.resume();
  request.on("end", () => {
    const id = request.headers["webhook-id"];
    if (typeof id === "string" && !seen.has(id)) {
      seen.add(id);
      fresh.push([id, epochMs()]);
    }
    response.writeHead(204).end();
  });
});

setInterval(() => {
  if (fresh.length === 0) return;
  process.send?.({ arrivals: fresh });
  fresh = [];
}, 10).unref();

process.on("disconnect", () => process.exit(0));

server.listen(0, "127.0.0.1", () => {
  process.send?.({ port: (server.address() as AddressInfo).port });
});
