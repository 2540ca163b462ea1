/**
 * The query and answer of an operator list by pages: `page` (at most 10,000: deeper is a
 * filter's job, and an offset that large would cost a scan) and `per_page` (at most 500), and
 * the `Link: <…>; rel="next"` header while another page follows.
 */
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { PageRequest } from "../lib/paging.ts";
import { OPS_LIMITS } from "./request-input.ts";

/** The fields of a list's query string that choose its page. */
export const PageFields = {
  page: Type.Integer({ minimum: 1, maximum: 10_000, default: 1 }),
  per_page: Type.Integer({ minimum: 1, maximum: OPS_LIMITS.pageSizeMax, default: OPS_LIMITS.pageSizeDefault }),
};

/** The query string of a list with nothing but pages. */
export const PageQuery = Type.Object(PageFields, { additionalProperties: false });
export type PageQuery = Static<typeof PageQuery>;

/** The Link header of a list answer's next page. */
export const LinkHeader = {
  link: Type.String({ description: '`<…?page=N>; rel="next"` while more pages follow.' }),
};

/** Sets `Link: <…?page=N+1>; rel="next"` (the request's other parameters kept) when another page follows. */
export function nextPageLink(request: FastifyRequest, reply: FastifyReply, page: PageRequest, hasMore: boolean) {
  if (!hasMore) return;
  const [path, search = ""] = request.url.split("?");
  const params = new URLSearchParams(search);
  params.set("page", String(page.page + 1));
  params.set("per_page", String(page.per_page));
  reply.header("link", `<${path}?${params}>; rel="next"`);
}
