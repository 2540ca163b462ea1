/**
 * The shops' accounts: the list (oldest first, by pages, filtered by environment; the URL holds
 * both), and the form that creates one. The operator API has no search by name: the environment
 * is the only filter it offers.
 */
import { useQuery } from "@tanstack/react-query";
import { Link, useNavigate, useSearch } from "@tanstack/react-router";
import type { FormEvent } from "react";
import { when } from "../../pages/display.tsx";
import { Errors, Field } from "../../pages/form-parts.tsx";
import { textOf, useChange } from "../change.ts";
import { answerOf, opsApi, pageAnswerOf } from "../ops-api.ts";
import { PageButtons } from "../page-buttons.tsx";
import { useMayChange } from "../staff-access.ts";
import { type Account, rateLimitText } from "./account-frame.tsx";
import { type AccountsSearch, accountsSearchOf } from "./accounts-search.ts";

const PER_PAGE = 25;
const ENVIRONMENTS = { production: "Production", test: "Test" } as const;
type Environment = keyof typeof ENVIRONMENTS;

export function AccountsPage() {
  const search = useSearch({ strict: false }) as AccountsSearch;
  const navigate = useNavigate();
  const mayChange = useMayChange("accounts");
  const page = search.page ?? 1;
  const list = useQuery({
    queryKey: ["staff", "accounts", search],
    queryFn: () =>
      pageAnswerOf(
        opsApi.GET("/ops/v1/accounts", {
          params: {
            query: { page, per_page: PER_PAGE, ...(search.environment ? { environment: search.environment } : {}) },
          },
        }),
      ),
  });
  const go = (next: AccountsSearch) => navigate({ to: "/staff/accounts", search: next });
  return (
    <>
      <h1>Accounts</h1>
      {mayChange && (
        <p>
          <Link to="/staff/accounts/new" className="button">
            New account
          </Link>
        </p>
      )}
      <form
        className="filters"
        aria-label="Filters"
        key={search.environment ?? ""}
        onSubmit={(event) => {
          event.preventDefault();
          go(accountsSearchOf({ environment: new FormData(event.currentTarget).get("environment") }));
        }}
      >
        <Field label="Environment" name="environment">
          {(id) => (
            <select id={id} name="environment" defaultValue={search.environment ?? ""}>
              <option value="">Both</option>
              {Object.entries(ENVIRONMENTS).map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          )}
        </Field>
        <button type="submit">Show</button>
      </form>
      {list.error && <Errors errors={[list.error.message]} />}
      {list.isPending && <p>Loading the accounts…</p>}
      {list.data?.items.length === 0 && <p>No account {page > 1 ? "on this page" : "yet"}.</p>}
      {list.data && list.data.items.length > 0 && (
        <table>
          <caption className="visually-hidden">Accounts, oldest first</caption>
          <thead>
            <tr>
              <th scope="col">Account</th>
              <th scope="col">Environment</th>
              <th scope="col">API rate limit</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {list.data.items.map((account) => (
              <tr key={account.id}>
                <td>
                  <Link to="/staff/accounts/$accountId" params={{ accountId: String(account.id) }}>
                    {account.company_name}
                  </Link>{" "}
                  (#{account.id})
                </td>
                <td>{ENVIRONMENTS[account.environment]}</td>
                <td>{rateLimitText(account)}</td>
                <td>{when(account.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <PageButtons
        page={page}
        hasNext={list.data?.hasNext ?? false}
        onPage={(next) => go({ ...search, page: next > 1 ? next : undefined })}
      />
    </>
  );
}

export function NewAccountPage() {
  const navigate = useNavigate();
  const create = useChange(
    (body: { company_name?: string; environment?: Environment }) =>
      answerOf(opsApi.POST("/ops/v1/accounts", { body: body as { company_name: string } })),
    {
      invalidate: [["staff", "accounts"]],
      onSuccess: (account: Account) =>
        navigate({ to: "/staff/accounts/$accountId", params: { accountId: String(account.id) } }),
    },
  );
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    create.mutate({
      company_name: textOf(form, "company_name"),
      environment: form.get("environment") === "test" ? "test" : "production",
    });
  };
  return (
    <>
      <h1>New account</h1>
      <p>
        A shop's account: its people, places, zones, package types and tariff are set on its page once it exists. The
        environment cannot change afterwards.
      </p>
      <form onSubmit={onSubmit} noValidate className="delivery-form" aria-label="New account">
        <Field label="Company name" name="company_name" path="company_name" errors={create.errors} required />
        <Field label="Environment (fixed once created)" name="environment" path="environment" errors={create.errors}>
          {(id, describedBy) => (
            <select id={id} name="environment" defaultValue="production" aria-describedby={describedBy}>
              <option value="production">Production: real deliveries, billed</option>
              <option value="test">Test: nothing real, never billed</option>
            </select>
          )}
        </Field>
        <button type="submit" disabled={create.isPending}>
          Create the account
        </button>
      </form>
      <Errors errors={create.errors} claimed={["company_name", "environment"]} />
    </>
  );
}
