/** The accounts list's URL (`/staff/accounts?environment=test&page=2`): read before its page's code is loaded. */

export interface AccountsSearch {
  environment?: "production" | "test";
  page?: number;
}

/** Keeps what the URL holds that can be a filter or a page. */
export function accountsSearchOf(search: Record<string, unknown>): AccountsSearch {
  const result: AccountsSearch = {};
  if (search.environment === "production" || search.environment === "test") result.environment = search.environment;
  const page = Number(search.page);
  if (Number.isInteger(page) && page > 1 && page < 1_000_000) result.page = page;
  return result;
}
