/**
 * The built pages (dist/web, made by `npm run build`): hashed assets cached for good, and the
 * app's page (index.html) for any other GET path that is not the BFF's, so that a deep link
 * (/deliveries/42) opens the app, which routes it, shows its not-found page included.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { pagesCsp } from "./pages-csp.ts";

/** dist/web beside dist/src when running the build; the package's dist/web when running sources (tests). */
const WEB_ROOT = fileURLToPath(
  new URL(import.meta.url.includes("/dist/src/") ? "../../web/" : "../../dist/web/", import.meta.url),
);

const NOT_PAGES = /^\/(api|ops|livez|readyz|metrics)(\/|$|\?)/;
/** The staff's pages: they exist for a staff session only, but for the way in (sign-in, invitation, enrolment). */
const STAFF_PAGES = /^\/staff(\/|$|\?)/;
const STAFF_WAY_IN = /^\/staff\/(sign-in|invitation|enrolment)(\/|$|\?)/;

export interface PagesOptions {
  root?: string;
  mapStyleUrl?: string;
  /** Whether the request comes with a live staff session. */
  isStaff?: (request: FastifyRequest) => Promise<boolean>;
}

export async function pagesRoutes(app: FastifyInstance, options: PagesOptions = {}) {
  const root = options.root ?? WEB_ROOT;
  const csp = pagesCsp(options.mapStyleUrl);
  if (!existsSync(`${root}/index.html`)) {
    throw new Error(`the console's pages are not built (${root}index.html is missing): run npm run build`);
  }
  await app.register(fastifyStatic, {
    root,
    wildcard: false,
    index: false,
    setHeaders(reply, path) {
      reply.header("cache-control", path.includes("/assets/") ? "public, max-age=31536000, immutable" : "no-cache");
    },
  });
  app.get("/*", async (request, reply) => {
    if (NOT_PAGES.test(request.url)) {
      return reply.code(404).send({ errors: [`route GET ${request.url.split("?")[0]} not found`] });
    }
    // The app itself shows the not-found page there; the status says so too, as for any page
    // that does not exist, so that a shop user (or anyone) learns nothing from it.
    const staffOnly = STAFF_PAGES.test(request.url) && !STAFF_WAY_IN.test(request.url);
    if (staffOnly && !(await options.isStaff?.(request))) reply.code(404);
    return reply.header("cache-control", "no-cache").header("content-security-policy", csp).sendFile("index.html");
  });
}
