/** Free loopback ports for the servers and systems the tests start. */
import { readFileSync } from "node:fs";
import net from "node:net";

/**
 * A base port whose next `count` ports are free on loopback, below the kernel's ephemeral range:
 * a port inside it can be taken meanwhile by any outgoing connection on the machine (the test
 * clients make thousands), which once made a service restarted on its port fail with EADDRINUSE.
 */
export async function freePortRange(count: number): Promise<number> {
  const ceiling = ephemeralPortsStart() - count;
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 10_000 + Math.floor(Math.random() * (ceiling - 10_000));
    const free = await Promise.all(Array.from({ length: count }, (_, i) => isFree(base + i)));
    if (free.every(Boolean)) return base;
  }
  throw new Error("no free port range found");
}

/** The first port the kernel hands to outgoing connections (Linux; 32768 elsewhere or when unreadable). */
function ephemeralPortsStart(): number {
  try {
    const low = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    return low > 12_000 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}
