/**
 * Webhooks, through the client API as the signed-in person: the account's endpoints (register,
 * with the signing secret shown once; rotate, the new secret shown once; delete), each one's
 * recent attempts (status, latency, answer code) and a replay of the events since a time.
 */
import type { components } from "@dos/api-types/client-v2";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { clientApi } from "../client-api.ts";
import { ShownOnce, when } from "./display.tsx";
import { Errors, Field } from "./form-parts.tsx";

type Webhook = components["schemas"]["Webhook"];

/** The answer's data, or its messages thrown as one error. */
async function data<T>(call: Promise<{ data?: T; error?: { errors: string[] } }>): Promise<T> {
  const { data: body, error } = await call;
  if (error) throw new Error(error.errors.join("; "));
  return body as T;
}

export function WebhooksPage() {
  const queryClient = useQueryClient();
  const [errors, setErrors] = useState<string[]>([]);
  const [secret, setSecret] = useState<{ label: string; secret: string } | null>(null);
  const list = useQuery({ queryKey: ["webhooks"], queryFn: () => data(clientApi.GET("/api/v2/webhooks")) });
  const refresh = () => queryClient.invalidateQueries({ queryKey: ["webhooks"] });
  const register = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const url = String(new FormData(event.currentTarget).get("url") ?? "").trim();
    setErrors([]);
    const { data: created, error } = await clientApi.POST("/api/v2/webhooks", { body: { url } });
    if (error) return setErrors(error.errors);
    if (created) setSecret({ label: `The signing secret of ${created.url}`, secret: created.secret });
    await refresh();
  };
  return (
    <>
      <h1>Webhooks</h1>
      <p>Every delivery change is POSTed, signed (Standard Webhooks), to each endpoint below.</p>
      {secret && <ShownOnce label={secret.label} secret={secret.secret} what="secret" testId="new-secret" />}
      <form onSubmit={register} noValidate className="filters" aria-label="Register an endpoint">
        <Field label="Endpoint URL" name="url" type="url" path="url" errors={errors} />
        <button type="submit">Register the endpoint</button>
      </form>
      <Errors errors={errors} claimed={["url"]} />
      {list.error && <Errors errors={[list.error.message]} />}
      {list.data?.length === 0 && <p>No endpoint yet.</p>}
      {list.data?.map((webhook) => (
        <WebhookView key={webhook.id} webhook={webhook} onSecret={setSecret} onChange={refresh} />
      ))}
    </>
  );
}

function WebhookView(props: {
  webhook: Webhook;
  onSecret: (shown: { label: string; secret: string }) => void;
  onChange: () => Promise<unknown>;
}) {
  const { webhook } = props;
  const path = { params: { path: { id: webhook.id } } };
  const attempts = useQuery({
    queryKey: ["webhook-attempts", webhook.id],
    queryFn: () => data(clientApi.GET("/api/v2/webhooks/{id}/attempts", path)),
    refetchInterval: 2000,
  });
  const rotate = useMutation({
    mutationFn: () => data(clientApi.POST("/api/v2/webhooks/{id}/rotate", path)),
    onSuccess: async (rotated) => {
      props.onSecret({ label: `The new signing secret of ${webhook.url}`, secret: rotated.secret });
      await props.onChange();
    },
  });
  const remove = useMutation({
    mutationFn: () => data(clientApi.DELETE("/api/v2/webhooks/{id}", path)),
    onSuccess: props.onChange,
  });
  const [replayed, setReplayed] = useState<string>("");
  const replay = useMutation({
    mutationFn: (since: string) => data(clientApi.POST("/api/v2/webhooks/{id}/replay", { ...path, body: { since } })),
    onSuccess: (answer) => setReplayed(`${answer.replayed} events sent again`),
  });
  const problem = rotate.error ?? remove.error ?? replay.error;
  return (
    <section aria-label={`Endpoint ${webhook.url}`} className="task">
      <h2>{webhook.url}</h2>
      <p>
        {webhook.status}
        {webhook.disabled_reason ? ` (${webhook.disabled_reason})` : ""} · registered {when(webhook.created_at)}
        {webhook.previous_secret_expires_at &&
          ` · the previous secret works until ${when(webhook.previous_secret_expires_at)}`}
      </p>
      <div className="actions">
        <button type="button" className="secondary" onClick={() => rotate.mutate()}>
          Rotate the secret of {webhook.url}
        </button>
        <button type="button" className="secondary" onClick={() => remove.mutate()}>
          Delete {webhook.url}
        </button>
      </div>
      <form
        className="filters"
        aria-label={`Replay events to ${webhook.url}`}
        onSubmit={(event) => {
          event.preventDefault();
          const since = String(new FormData(event.currentTarget).get("since") ?? "");
          replay.mutate(since ? new Date(since).toISOString() : "");
        }}
      >
        <Field label="Replay the events since" name="since" type="datetime-local" />
        <button type="submit">Replay</button>
      </form>
      {replayed && <p role="status">{replayed}</p>}
      {problem && <Errors errors={[problem.message]} />}
      <table>
        <caption>Recent attempts</caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Event</th>
            <th scope="col">Delivery</th>
            <th scope="col">Outcome</th>
            <th scope="col">Answer</th>
            <th scope="col">Latency</th>
          </tr>
        </thead>
        <tbody>
          {attempts.data?.map((attempt) => (
            <tr key={attempt.id}>
              <td>{when(attempt.attempted_at)}</td>
              <td>{attempt.event_type}</td>
              <td>#{attempt.delivery_id}</td>
              <td>{attempt.outcome}</td>
              <td>{attempt.status_code ?? attempt.error ?? "—"}</td>
              <td>{attempt.duration_ms} ms</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
