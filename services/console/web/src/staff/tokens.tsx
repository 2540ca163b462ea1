/**
 * Personal tokens: a staff person's own operator API tokens, for the CLI (`OPS_TOKEN`):
 * created with a label and an optional expiry (the token shown once, with a copy button),
 * listed with their last use, revoked. They act as the person, with the person's role. The
 * console's own session tokens are the person's too, but not theirs to manage: not listed.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { ShownOnce, when } from "../pages/display.tsx";
import { Errors, Field } from "../pages/form-parts.tsx";
import { errorsOf, opsApi } from "./ops-api.ts";
import { staffBff } from "./staff-bff.ts";

const TOKENS = ["staff", "tokens"];

/** The most the operator API lists at once; a person with more sees the first ones and a note. */
const PER_PAGE = 500;

async function listTokens() {
  const [answer, sessions] = await Promise.all([
    opsApi.GET("/ops/v1/staff/me/tokens", { params: { query: { page: 1, per_page: PER_PAGE } } }),
    staffBff.sessionTokenIds(),
  ]);
  if (!answer.data) throw new Error(errorsOf(answer.error, answer.response.status).join("; "));
  return {
    tokens: answer.data.tokens.filter((token) => !sessions.token_ids.includes(token.id)),
    more: answer.response.headers.get("link") !== null,
  };
}

export function PersonalTokensPage() {
  const queryClient = useQueryClient();
  const tokens = useQuery({ queryKey: TOKENS, queryFn: listTokens });
  const [created, setCreated] = useState<{ label: string; token: string } | null>(null);
  const [errors, setErrors] = useState<string[]>([]);

  const create = useMutation({
    mutationFn: async (body: { label: string; expires_at?: string }) => {
      const answer = await opsApi.POST("/ops/v1/staff/me/tokens", { body });
      if (!answer.data) throw errorsOf(answer.error, answer.response.status);
      return answer.data;
    },
    onMutate: () => setErrors([]),
    onSuccess: async (token, _body) => {
      setCreated({ label: token.label, token: token.token });
      await queryClient.invalidateQueries({ queryKey: TOKENS });
    },
    onError: (error) => setErrors(Array.isArray(error) ? error : ["the console cannot be reached, try again"]),
  });
  const revoke = useMutation({
    mutationFn: async (tokenId: number) => {
      const answer = await opsApi.DELETE("/ops/v1/staff/me/tokens/{tokenId}", {
        params: { path: { tokenId: String(tokenId) } },
      });
      if (!answer.response.ok) throw errorsOf(answer.error, answer.response.status);
    },
    onSettled: () => queryClient.invalidateQueries({ queryKey: TOKENS }),
  });

  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const label = String(form.get("label") ?? "");
    const expires = String(form.get("expires") ?? "");
    // The end of the chosen day, in UTC (the API's zone).
    create.mutate({ label, ...(expires ? { expires_at: `${expires}T23:59:59Z` } : {}) });
  };

  return (
    <>
      <h1>Personal tokens</h1>
      <p>
        A personal token lets the operator CLI act as you, with your role: set it as <code>OPS_TOKEN</code>. Every
        change it makes is recorded under your name.
      </p>
      {created && (
        <ShownOnce label={`Your new token “${created.label}”`} secret={created.token} what="token" testId="new-token" />
      )}
      <form className="filters token-form" onSubmit={onSubmit} noValidate aria-label="Create a personal token">
        <Field label="Label" name="label" path="label" errors={errors} required />
        <Field label="Expires after (optional)" name="expires" type="date" path="expires_at" errors={errors} />
        <button type="submit" disabled={create.isPending}>
          Create a token
        </button>
      </form>
      <Errors errors={errors} claimed={["label", "expires_at"]} />
      {tokens.isError && <Errors errors={[tokens.error.message]} />}
      <table>
        <caption className="visually-hidden">Your personal tokens</caption>
        <thead>
          <tr>
            <th scope="col">Label</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            <th scope="col">Expires</th>
            <th scope="col">Action</th>
          </tr>
        </thead>
        <tbody>
          {tokens.data?.tokens.map((token) => (
            <tr key={token.id}>
              <td>{token.label}</td>
              <td>{when(token.created_at)}</td>
              <td>{token.last_used_at ? when(token.last_used_at) : "never"}</td>
              <td>{token.expires_at ? when(token.expires_at) : "never"}</td>
              <td>
                <button
                  type="button"
                  className="secondary"
                  aria-label={`Revoke token ${token.label}`}
                  disabled={revoke.isPending}
                  onClick={() => revoke.mutate(token.id)}
                >
                  Revoke
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {tokens.data?.tokens.length === 0 && <p>No personal token yet.</p>}
      {tokens.data?.more && <p>Only your first {PER_PAGE} tokens are listed: revoke the ones you no longer use.</p>}
    </>
  );
}
