/**
 * The audit log (GET /ops/v1/audit): every change made through the operator API, by whom (a
 * person by name, or automation), newest first, filtered by person and by resource, in keyset
 * pages ("Older entries"). Each entry shows when, who, the method and route, the resource, the
 * answer's status, and the values before and after as a diff. The filters and the page are in
 * the URL, so a view is a link; the API's 422 for a filter is shown beside it.
 */
import type { paths } from "@dos/api-types/ops-v1";
import { useQuery } from "@tanstack/react-query";
import { getRouteApi, Link } from "@tanstack/react-router";
import type { FormEvent } from "react";
import { when } from "../pages/display.tsx";
import { Errors, Field } from "../pages/form-parts.tsx";
import { AuditDiff } from "./audit-diff.tsx";
import { type AuditSearch, auditSearchOf } from "./audit-search.ts";
import { errorsOf, opsApi } from "./ops-api.ts";
import "./staff-admin.css";

const route = getRouteApi("/staff/staff/audit");

/** Entries per page: a screenful of diffs. */
const LIMIT = 25;

/** Resource types the operator API's routes give entries (audit-resource.ts), offered as suggestions. */
const RESOURCE_TYPES = [
  "accounts",
  "accounts/users",
  "accounts/users/tokens",
  "accounts/addresses",
  "accounts/package_types",
  "accounts/tariffs",
  "accounts/webhooks",
  "deliveries",
  "messengers",
  "vehicles",
  "rounds",
  "rounds/deliveries",
  "tasks",
  "staff",
  "staff/tokens",
];

function statusText(status: number | null) {
  if (status === null) return { label: "outcome not recorded", tone: "unknown" };
  if (status < 300) return { label: `${status} done`, tone: "done" };
  if (status < 500) return { label: `${status} refused`, tone: "refused" };
  return { label: `${status} failed`, tone: "failed" };
}

type AuditQuery = paths["/ops/v1/audit"]["get"]["parameters"]["query"];

/**
 * The query the URL's filters make: a person is automation (actor_kind) or a staff id (actor_id);
 * anything else is sent as it is, for the API to refuse beside the field.
 */
function queryOf(search: AuditSearch): AuditQuery {
  const person = search.person;
  return {
    limit: LIMIT,
    ...(person === "automation" ? { actor_kind: "automation" as const } : {}),
    // Not an id: sent as it is, for the API's 422 (querystring.actor_id) beside the field.
    ...(person !== undefined && person !== "automation" ? { actor_id: person as number } : {}),
    ...(search.resource_type ? { resource_type: search.resource_type } : {}),
    ...(search.resource_id !== undefined ? { resource_id: String(search.resource_id) } : {}),
    ...(search.before_id ? { before_id: search.before_id } : {}),
  };
}

export function AuditPage() {
  const search = route.useSearch();
  const navigate = route.useNavigate();
  const people = useQuery({
    queryKey: ["staff", "audit-people"],
    queryFn: async () => {
      const answer = await opsApi.GET("/ops/v1/audit/people");
      if (!answer.data) throw new Error(errorsOf(answer.error, answer.response.status).join("; "));
      return answer.data;
    },
  });
  const entries = useQuery({
    queryKey: ["staff", "audit", search],
    queryFn: async () => {
      const answer = await opsApi.GET("/ops/v1/audit", { params: { query: queryOf(search) } });
      if (answer.data) return { errors: [] as string[], page: answer.data };
      if (answer.response.status === 422) return { errors: errorsOf(answer.error, 422), page: undefined };
      throw new Error(errorsOf(answer.error, answer.response.status).join("; "));
    },
  });
  const errors = entries.data?.errors ?? [];
  // The person filter is sent as actor_id or actor_kind: their messages belong beside it.
  const personErrors = errors.map((e) => e.replace(/^querystring\.(actor_id|actor_kind) /, "person "));

  const apply = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const fields = Object.fromEntries([...form.entries()].map(([name, value]) => [name, String(value)]));
    navigate({ search: auditSearchOf(fields) });
  };
  const { before_id: _older, ...filters } = search;
  const page = entries.data?.page;

  return (
    <>
      <h1>Audit log</h1>
      <p>
        Every change made through the operator API — by a person, from this console or the CLI, or by automation —
        refused ones included, newest first.
      </p>
      <search>
        <form className="filters" onSubmit={apply} key={JSON.stringify(filters)} aria-label="Filters">
          <Field label="Person" name="person" path="person" errors={personErrors}>
            {(id, describedBy) => (
              <select
                // Drawn again once the people are listed: the URL's person is one of the options only then.
                key={people.data ? "listed" : "listing"}
                id={id}
                name="person"
                defaultValue={filters.person === undefined ? "" : String(filters.person)}
                aria-describedby={describedBy}
                aria-invalid={describedBy ? true : undefined}
              >
                <option value="">Anyone</option>
                <option value="automation">Automation (API_OPS_TOKEN)</option>
                {people.data?.people.map((person) => (
                  <option key={person.id} value={String(person.id)}>
                    {person.name}
                    {person.disabled ? " (disabled)" : ""}
                  </option>
                ))}
                {filters.person !== undefined &&
                  filters.person !== "automation" &&
                  people.data &&
                  !people.data.people.some((p) => p.id === filters.person) && (
                    <option value={String(filters.person)}>Person {filters.person}</option>
                  )}
              </select>
            )}
          </Field>
          <Field label="Resource type" name="resource_type" path="querystring.resource_type" errors={errors}>
            {(id, describedBy) => (
              <>
                <input
                  id={id}
                  name="resource_type"
                  list={`${id}-types`}
                  autoComplete="off"
                  defaultValue={filters.resource_type ?? ""}
                  aria-describedby={describedBy}
                  aria-invalid={describedBy ? true : undefined}
                />
                <datalist id={`${id}-types`}>
                  {RESOURCE_TYPES.map((type) => (
                    <option key={type} value={type} />
                  ))}
                </datalist>
              </>
            )}
          </Field>
          <Field
            label="Resource id"
            name="resource_id"
            path="querystring.resource_id"
            errors={errors}
            defaultValue={filters.resource_id === undefined ? "" : String(filters.resource_id)}
          />
          <button type="submit">Apply filters</button>
          {Object.keys(filters).length > 0 && (
            <Link to="/staff/audit" search={{}} className="button secondary">
              Clear filters
            </Link>
          )}
        </form>
      </search>
      <Errors errors={errors} claimed={["person", "querystring.resource_type", "querystring.resource_id"]} />
      {people.isError && <Errors errors={[`The people could not be listed: ${people.error.message}`]} />}
      {entries.isError && <Errors errors={[entries.error.message]} />}
      {entries.isPending && <p role="status">Loading the audit log…</p>}
      {page && page.entries.length === 0 && (
        <p role="status">
          {search.before_id ? "No older entry" : "No entry"}
          {Object.keys(filters).length > 0 ? " matches these filters." : " yet."}
        </p>
      )}
      {page && page.entries.length > 0 && (
        <ol className="audit-entries" aria-label="Audit entries">
          {page.entries.map((entry) => {
            const status = statusText(entry.status_code);
            const person = entry.actor.kind === "automation" ? "automation" : (entry.actor.id ?? undefined);
            const what = `${entry.method} ${entry.route}`;
            return (
              <li key={entry.id}>
                <article className="audit-entry" aria-labelledby={`audit-${entry.id}`}>
                  <h2 id={`audit-${entry.id}`} className="audit-title">
                    <code>{what}</code>
                    <span className={`status ${status.tone}`}>{status.label}</span>
                  </h2>
                  <dl className="facts">
                    <dt>When</dt>
                    <dd>
                      <time dateTime={entry.at}>{when(entry.at)}</time>
                    </dd>
                    <dt>Who</dt>
                    <dd>
                      <Link to="/staff/audit" search={{ person }} aria-describedby={`audit-${entry.id}`}>
                        {entry.actor.name}
                        <span className="visually-hidden"> (show only their entries)</span>
                      </Link>
                      {entry.actor.kind === "automation" ? " (the automation token)" : ""}
                    </dd>
                    <dt>Resource</dt>
                    <dd>
                      <Link
                        to="/staff/audit"
                        aria-describedby={`audit-${entry.id}`}
                        search={{
                          resource_type: entry.resource_type,
                          ...(entry.resource_id ? auditSearchOf({ resource_id: entry.resource_id }) : {}),
                        }}
                      >
                        {entry.resource_type}
                        {entry.resource_id ? ` ${entry.resource_id}` : ""}
                        <span className="visually-hidden"> (show only its entries)</span>
                      </Link>
                    </dd>
                    <dt>Request</dt>
                    <dd>
                      <code>{entry.request_id}</code>
                    </dd>
                  </dl>
                  <AuditDiff before={entry.before} after={entry.after} label={what} titleId={`audit-${entry.id}`} />
                </article>
              </li>
            );
          })}
        </ol>
      )}
      <nav className="pages" aria-label="Audit pages">
        {search.before_id && (
          <Link to="/staff/audit" search={filters}>
            Newest entries
          </Link>
        )}
        {page?.next_before_id && (
          <Link to="/staff/audit" search={{ ...filters, before_id: page.next_before_id }}>
            Older entries
          </Link>
        )}
      </nav>
    </>
  );
}
