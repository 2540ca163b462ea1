/** Pages of an operator list by number (`page`, `per_page`), as every such list of /ops/v1 takes them. */

export interface PageRequest {
  page: number;
  per_page: number;
}

/** The rows to read for a page: one more than it holds tells whether another page follows. */
export const pageWindow = ({ page, per_page }: PageRequest) => ({ offset: (page - 1) * per_page, limit: per_page + 1 });

/** The page's rows, and whether another page follows, from the rows read through `pageWindow`. */
export const pageOf = <T>(rows: T[], { per_page }: PageRequest) => ({
  items: rows.slice(0, per_page),
  hasMore: rows.length > per_page,
});
