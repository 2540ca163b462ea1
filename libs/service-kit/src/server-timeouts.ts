/**
 * The HTTP server's connection timeouts, from the kit-wide HTTP_* variables (commonConfig, root
 * README): headers, whole request, keep-alive and idle connection.
 */
import { commonConfig } from "./config.ts";

/** How long a connection may take over each part of its life (README, configuration). */
export interface HttpTimeouts {
  HTTP_HEADERS_TIMEOUT_MS: number;
  HTTP_REQUEST_TIMEOUT_MS: number;
  HTTP_KEEP_ALIVE_TIMEOUT_MS: number;
  HTTP_IDLE_TIMEOUT_MS: number;
}

/** The given timeouts, each missing one at its default (a test's hand-made config has none). */
const withDefaults = (given: Partial<HttpTimeouts>): HttpTimeouts => ({
  HTTP_HEADERS_TIMEOUT_MS: given.HTTP_HEADERS_TIMEOUT_MS ?? commonConfig.HTTP_HEADERS_TIMEOUT_MS.default,
  HTTP_REQUEST_TIMEOUT_MS: given.HTTP_REQUEST_TIMEOUT_MS ?? commonConfig.HTTP_REQUEST_TIMEOUT_MS.default,
  HTTP_KEEP_ALIVE_TIMEOUT_MS: given.HTTP_KEEP_ALIVE_TIMEOUT_MS ?? commonConfig.HTTP_KEEP_ALIVE_TIMEOUT_MS.default,
  HTTP_IDLE_TIMEOUT_MS: given.HTTP_IDLE_TIMEOUT_MS ?? commonConfig.HTTP_IDLE_TIMEOUT_MS.default,
});

/**
 * Fastify's and Node's server options for these timeouts. Fastify turns Node's whole-request
 * timeout off by default, which let a body trickled a byte at a time hold a connection forever.
 * Node looks for late requests every `connectionsCheckingInterval` (30 s by default), which
 * would let one outlive its timeout by that much: it looks at least four times per headers timeout.
 */
export function serverTimeoutOptions(given: Partial<HttpTimeouts> = {}) {
  const t = withDefaults(given);
  return {
    requestTimeout: t.HTTP_REQUEST_TIMEOUT_MS,
    keepAliveTimeout: t.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    connectionTimeout: t.HTTP_IDLE_TIMEOUT_MS,
    http: {
      headersTimeout: t.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeout: t.HTTP_REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(t.HTTP_HEADERS_TIMEOUT_MS / 4))),
    },
  };
}
