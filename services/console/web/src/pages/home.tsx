/**
 * The account page, the spec's "API section": company, environment, default place, zones, saved
 * addresses, package types, and the person's API tokens (create, shown once with a copy
 * button; revoke).
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { bff, type TokenView } from "../bff.ts";
import { clientApi } from "../client-api.ts";
import { sessionQuery } from "../session.ts";
import { ShownOnce, when } from "./display.tsx";

function placeLine(place: Record<string, string | number | null>) {
  return [place.label, place.address, place.postal_code, place.city].filter(Boolean).join(", ");
}

export function HomePage() {
  const { data: session } = useQuery(sessionQuery);
  const account = useQuery({ queryKey: ["account"], queryFn: bff.account });
  const packageTypes = useQuery({
    queryKey: ["package_types"],
    queryFn: async () => (await clientApi.GET("/api/v2/package_types")).data ?? [],
  });
  if (!session?.user) return null;
  const data = account.data;
  return (
    <>
      <h1>{session.user.account.company_name}</h1>
      <section aria-labelledby="general">
        <h2 id="general">General information</h2>
        <dl className="facts">
          <dt>Company</dt>
          <dd>{data?.company_name ?? "…"}</dd>
          <dt>Environment</dt>
          <dd>{session.user.account.environment}</dd>
          <dt>Signed in as</dt>
          <dd>{session.user.email}</dd>
          <dt>Default place</dt>
          <dd>{data ? (data.default_place ? placeLine(data.default_place) : "none") : "…"}</dd>
          <dt>Zones delivered</dt>
          <dd>{data ? data.zones.join(", ") || "none" : "…"}</dd>
        </dl>
      </section>
      <section aria-labelledby="addresses">
        <h2 id="addresses">Saved addresses</h2>
        {data && data.saved_addresses.length === 0 && <p>None.</p>}
        <ul>
          {data?.saved_addresses.map((address) => (
            <li key={String(address.id)}>{placeLine(address)}</li>
          ))}
        </ul>
      </section>
      <section aria-labelledby="package-types">
        <h2 id="package-types">Package types</h2>
        {packageTypes.data?.length === 0 && <p>None.</p>}
        <ul>
          {packageTypes.data?.map((type) => (
            <li key={type.id}>
              {type.type} (id {type.id}, {type.weight} kg)
            </li>
          ))}
        </ul>
      </section>
      <ApiTokens />
    </>
  );
}

function ApiTokens() {
  const queryClient = useQueryClient();
  const tokens = useQuery({ queryKey: ["tokens"], queryFn: bff.tokens });
  const [created, setCreated] = useState<(TokenView & { token: string }) | null>(null);
  const create = useMutation({
    mutationFn: bff.createToken,
    onSuccess: async (token) => {
      setCreated(token);
      await queryClient.invalidateQueries({ queryKey: ["tokens"] });
    },
  });
  const revoke = useMutation({
    mutationFn: bff.revokeToken,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ["tokens"] }),
  });
  return (
    <section aria-labelledby="api-tokens">
      <h2 id="api-tokens">API tokens</h2>
      <p>
        Send your e-mail in <code>X-User-Email</code> and a token in <code>X-User-Token</code> with every request to the
        API.
      </p>
      {created && <ShownOnce label="Your new token" secret={created.token} what="token" testId="new-token" />}
      <table>
        <caption className="visually-hidden">Your API tokens</caption>
        <thead>
          <tr>
            <th scope="col">Token</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            <th scope="col">Action</th>
          </tr>
        </thead>
        <tbody>
          {tokens.data?.map((token) => (
            <tr key={token.id}>
              <td>
                <code>{token.hint}…</code>
              </td>
              <td>{when(token.created_at)}</td>
              <td>{token.last_used_at ? when(token.last_used_at) : "never"}</td>
              <td>
                <button
                  type="button"
                  className="secondary"
                  aria-label={`Revoke token ${token.hint}…`}
                  onClick={() => revoke.mutate(token.id)}
                >
                  Revoke
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {tokens.data?.length === 0 && <p>No token yet.</p>}
      <button type="button" onClick={() => create.mutate()} disabled={create.isPending}>
        Create a token
      </button>
    </section>
  );
}
