/**
 * The internal listener: a second port on which the same app also answers, and the only one on
 * which routes under the internal prefix (the operator API, /ops) exist. Kubernetes exposes it
 * through a ClusterIP Service only, so a request that reaches the public port, whatever a proxy
 * in front routes, never reaches those routes: defence in depth beside the Ingress's own rules.
 */
import http from "node:http";
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from "fastify";

/** Requests that arrived on an internal listener. */
const internalRequests = new WeakSet<http.IncomingMessage>();

/**
 * A hook that answers 404, as for a route that does not exist, when a route under `prefix`
 * is asked for on any listener but the internal one. Requests that came through no socket
 * (app.inject in tests) are let through: only a listener can be public.
 */
export function internalRoutesGuard(prefix: string) {
  const under = (route: string | undefined) =>
    route !== undefined && (route === prefix || route.startsWith(`${prefix}/`));
  return (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    // The matched route's pattern, not the URL: an encoded or doubled slash cannot slip past.
    if (!under(request.routeOptions.url) || internalRequests.has(request.raw) || !arrivedOnSocket(request)) {
      return done();
    }
    reply.code(404).send({ errors: [`route ${request.method} ${request.url.split("?")[0]} not found`] });
  };
}

function arrivedOnSocket(request: FastifyRequest): boolean {
  return request.raw instanceof http.IncomingMessage;
}

export interface InternalListener {
  url: string;
  close(): Promise<void>;
}

/** Serves the app on a second port, with the public server's timeouts; call after app.listen. */
export async function listenInternal(
  app: FastifyInstance,
  options: { host: string; port: number },
): Promise<InternalListener> {
  const [handler] = app.server.listeners("request") as http.RequestListener[];
  if (!handler) throw new Error("the app has no request handler yet: listen on the public port first");
  const server = http.createServer((request, response) => {
    internalRequests.add(request);
    handler(request, response);
  });
  server.keepAliveTimeout = app.server.keepAliveTimeout;
  server.headersTimeout = app.server.headersTimeout;
  server.requestTimeout = app.server.requestTimeout;
  server.setTimeout(app.server.timeout);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as { port: number };
  return {
    url: `http://${options.host}:${port}`,
    // Idle keep-alive connections are closed at once; requests in flight finish first.
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
