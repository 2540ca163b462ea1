/** Pagination headers of the delivery list: the body stays a plain array, as the spec shows it. */

export interface Page {
  page: number;
  perPage: number;
  total: number;
}

/** `Link` (RFC 8288, relative to the request path) and `X-Total-Count`. */
export function paginationHeaders(requestUrl: string, { page, perPage, total }: Page): Record<string, string> {
  const [path = "", search = ""] = requestUrl.split("?");
  const last = Math.max(1, Math.ceil(total / perPage));
  const link = (target: number, rel: string) => {
    const params = new URLSearchParams(search);
    params.set("page", String(target));
    params.set("per_page", String(perPage));
    return `<${path}?${params.toString()}>; rel="${rel}"`;
  };
  const links = [link(1, "first")];
  if (page > 1) links.push(link(Math.min(page - 1, last), "prev"));
  if (page < last) links.push(link(page + 1, "next"));
  links.push(link(last, "last"));
  return { link: links.join(", "), "x-total-count": String(total) };
}
