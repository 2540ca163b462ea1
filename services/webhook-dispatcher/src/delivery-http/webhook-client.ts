/**
 * The HTTP client that POSTs webhooks. The address check happens inside the connection's DNS
 * lookup, so the address checked is the address connected to (no second resolution a DNS
 * rebinding could change); IP literals are checked before connecting. Redirects are never
 * followed: a 3xx is a failed attempt.
 */
import dns, { type LookupAddress } from "node:dns";
import { isIP, type LookupFunction } from "node:net";
import { Agent } from "undici";
import { type AddressPolicy, describeRefusal } from "./address-policy.ts";

class RefusedAddressError extends Error {
  override name = "RefusedAddressError";
}

export interface PostResult {
  statusCode: number | null;
  durationMs: number;
  /** What went wrong, in words a client can act on; null for a 2xx. */
  error: string | null;
  /** The receiver's Retry-After, in milliseconds from now, when it sent one. */
  retryAfterMs: number | null;
}

export interface WebhookClient {
  post(url: string, headers: Record<string, string>, body: string): Promise<PostResult>;
  close(): Promise<void>;
}

/** A `lookup` for net.connect that refuses the host when any address it resolves to is refused. */
function guardedLookup(policy: AddressPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { all: true, family: options.family ?? 0 }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, "", 0);
      for (const { address } of addresses) {
        const label = policy.refusal(hostname, address);
        if (label) return callback(new RefusedAddressError(describeRefusal(hostname, address, label)), "", 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      const [first] = addresses;
      if (!first) return callback(new Error(`${hostname} has no address`), "", 0);
      callback(null, first.address, first.family);
    });
  };
}

/** Resolves a URL's host the way a POST would and says why it is refused, or null when it may be reached. */
export async function checkUrlHost(policy: AddressPolicy, url: URL): Promise<string | null> {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const addresses = isIP(host) ? [{ address: host }] : await dns.promises.lookup(host, { all: true });
  for (const { address } of addresses) {
    const label = policy.refusal(host, address);
    if (label) return describeRefusal(host, address, label);
  }
  return null;
}

export function createWebhookClient(options: { policy: AddressPolicy; timeoutMs: number }): WebhookClient {
  const { policy, timeoutMs } = options;
  const agent = new Agent({
    connect: { lookup: guardedLookup(policy), timeout: timeoutMs },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    keepAliveTimeout: 10_000,
  });

  async function post(target: string, headers: Record<string, string>, body: string): Promise<PostResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    try {
      const url = new URL(target);
      const host = url.hostname.replace(/^\[|\]$/g, "");
      const label = isIP(host) ? policy.refusal(host, host) : null;
      if (label) throw new RefusedAddressError(describeRefusal(host, host, label));
      const response = await agent.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: "POST",
        headers: { "content-type": "application/json", "user-agent": "dos-webhooks/1", ...headers },
        body,
        signal: AbortSignal.timeout(timeoutMs),
      });
      // The body is not used; reading it (bounded) keeps the connection reusable.
      await response.body.dump({ limit: 64 * 1024 }).catch(() => {});
      const statusCode = response.statusCode;
      return {
        statusCode,
        durationMs: elapsed(),
        error: statusCode >= 200 && statusCode < 300 ? null : statusError(statusCode, response.headers.location),
        retryAfterMs: parseRetryAfter(response.headers["retry-after"]),
      };
    } catch (error) {
      return { statusCode: null, durationMs: elapsed(), error: describeFailure(error, timeoutMs), retryAfterMs: null };
    }
  }

  return { post, close: () => agent.close() };
}

function statusError(statusCode: number, location: string | string[] | undefined): string {
  if (statusCode >= 300 && statusCode < 400) {
    return `redirect (${statusCode}${location ? ` to ${String(location).slice(0, 200)}` : ""}) not followed`;
  }
  return `endpoint answered ${statusCode}`;
}

/** Retry-After as seconds or an HTTP date, in milliseconds from now. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | null {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return null;
  if (/^\s*\d+\s*$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

function describeFailure(error: unknown, timeoutMs: number): string {
  const chain: Array<{ name?: string; code?: string; message?: string }> = [];
  for (let e = error as { cause?: unknown } | undefined; e && chain.length < 5; e = e.cause as typeof e) {
    chain.push(e as (typeof chain)[number]);
  }
  const refused = chain.find((e) => e.name === "RefusedAddressError");
  if (refused) return `refused: ${refused.message}`;
  if (
    chain.some(
      (e) =>
        e.name === "TimeoutError" ||
        e.code === "UND_ERR_HEADERS_TIMEOUT" ||
        e.code === "UND_ERR_CONNECT_TIMEOUT" ||
        e.code === "UND_ERR_BODY_TIMEOUT",
    )
  ) {
    return `timed out after ${timeoutMs} ms`;
  }
  const coded = chain.find((e) => typeof e.code === "string");
  if (coded?.code === "ENOTFOUND") return "host not found";
  if (coded?.code === "ECONNREFUSED") return "connection refused";
  if (coded?.code === "ECONNRESET" || coded?.code === "UND_ERR_SOCKET") return "connection reset";
  if (coded?.code?.startsWith("ERR_TLS") || coded?.code?.includes("CERT")) return `TLS error (${coded.code})`;
  return `request failed: ${chain[0]?.message ?? String(error)}`.slice(0, 500);
}
