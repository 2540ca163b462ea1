/**
 * The operator API's routes as registered (method and pattern, without the /ops/v1 prefix): the
 * audit hooks find a route's GET counterpart here, and the access table's test walks them all.
 */
import type { FastifyInstance } from "fastify";

export interface OpsRoute {
  method: string;
  /** The pattern under the prefix, e.g. `/vehicles/:id`. */
  url: string;
  /** false for a route whose changes the audit log leaves out (route config `audited: false`). */
  audited: boolean;
}

export interface OpsRouteRegistry {
  readonly routes: readonly OpsRoute[];
  hasGet(url: string): boolean;
  /** Records every route registered in `ops` (the /ops/v1 context) from now on. */
  watch(ops: FastifyInstance, prefix: string): void;
}

declare module "fastify" {
  interface FastifyInstance {
    /** The operator API's routes (app.ts decorates the root with them). */
    opsRouteRegistry: OpsRouteRegistry;
  }
}

export function createOpsRouteRegistry(): OpsRouteRegistry {
  const routes: OpsRoute[] = [];
  const gets = new Set<string>();
  return {
    routes,
    hasGet: (url) => gets.has(url),
    watch(ops, prefix) {
      ops.addHook("onRoute", (options) => {
        const methods = Array.isArray(options.method) ? options.method : [options.method];
        const url = options.url.startsWith(prefix) ? options.url.slice(prefix.length) : options.url;
        const audited = (options.config as { audited?: boolean } | undefined)?.audited !== false;
        for (const method of methods) {
          routes.push({ method, url, audited });
          if (method === "GET") gets.add(url);
        }
      });
    },
  };
}
