/**
 * What every page of one account shares: the account as the operator API shows it (one cached
 * query), its name and environment, and the navigation between its pages. An account the API
 * does not know is the not-found page.
 */
import type { components } from "@dos/api-types/ops-v1";
import { useQuery } from "@tanstack/react-query";
import { Link, notFound, useParams } from "@tanstack/react-router";
import type { ReactNode } from "react";
import { ApiError } from "../../bff.ts";
import { Errors } from "../../pages/form-parts.tsx";
import { answerOf, opsApi } from "../ops-api.ts";

export type Account = components["schemas"]["Account"];

/** The account's key: every query of one account starts with it, so a change can refresh them all. */
export const accountKey = (accountId: string) => ["staff", "account", accountId];

/** The path parameter of the account pages, as the operator API's client takes it. */
function useAccountId(): string {
  const { accountId } = useParams({ strict: false }) as { accountId?: string };
  return accountId ?? "";
}

function useAccount(accountId: string) {
  return useQuery({
    queryKey: [...accountKey(accountId), "general"],
    queryFn: async (): Promise<Account | null> => {
      if (!/^\d{1,15}$/.test(accountId)) return null;
      try {
        return await answerOf(opsApi.GET("/ops/v1/accounts/{accountId}", { params: { path: { accountId } } }));
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) return null;
        throw error;
      }
    },
  });
}

/** "100 requests per 5 s", or the service's default. */
export function rateLimitText(account: Pick<Account, "rate_limit">): string {
  const limit = account.rate_limit;
  return limit ? `${limit.quota} requests per ${limit.window_seconds} s` : "the service's default";
}

const PAGES = [
  { to: "/staff/accounts/$accountId", label: "General" },
  { to: "/staff/accounts/$accountId/places", label: "Places" },
  { to: "/staff/accounts/$accountId/zones", label: "Zones" },
  { to: "/staff/accounts/$accountId/package-types", label: "Package types" },
  { to: "/staff/accounts/$accountId/tariffs", label: "Tariffs" },
] as const;

/** The account's heading and its pages' navigation, around one page's content. */
export function AccountFrame(props: { title: string; children: (account: Account) => ReactNode }) {
  const accountId = useAccountId();
  const account = useAccount(accountId);
  if (account.data === null) throw notFound();
  if (account.error) return <Errors errors={[account.error.message]} />;
  if (!account.data) return <p>Loading the account…</p>;
  const data = account.data;
  return (
    <>
      <p>
        <Link to="/staff/accounts">All accounts</Link>
      </p>
      <h1>
        {data.company_name} <span className="muted">#{data.id}</span>
      </h1>
      {data.environment === "test" && (
        <p className="test-note">Test account: its deliveries are not real and never billed.</p>
      )}
      <nav aria-label="Account" className="subnav">
        <ul>
          {PAGES.map((page) => (
            <li key={page.to}>
              <Link
                to={page.to}
                params={{ accountId }}
                activeOptions={{ exact: true }}
                activeProps={{ "aria-current": "page" }}
              >
                {page.label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <h2 className="page-title">{props.title}</h2>
      {props.children(data)}
    </>
  );
}
