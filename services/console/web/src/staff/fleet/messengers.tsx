/**
 * The operator's messengers (couriers): the list, a new one, and changing one's name or phone
 * (dispatchers and administrators).
 */
import type { components } from "@dos/api-types/ops-v1";
import { useQuery } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { when } from "../../pages/display.tsx";
import { Errors, Field } from "../../pages/form-parts.tsx";
import { textOf, useChange } from "../change.ts";
import { answerOf, type BodyOf, opsApi, pageAnswerOf } from "../ops-api.ts";
import { PageButtons } from "../page-buttons.tsx";
import { useMayChange } from "../staff-access.ts";
import { FleetNav } from "./fleet-nav.tsx";

type Messenger = components["schemas"]["Messenger"];
type MessengerBody = BodyOf<"/ops/v1/messengers", "post">;

/** Rows per page of the list. */
const PER_PAGE = 100;

const MESSENGERS = ["staff", "fleet", "messengers"];

export function MessengersPage() {
  const mayChange = useMayChange("fleet");
  const [editing, setEditing] = useState<Messenger | null>(null);
  const [page, setPage] = useState(1);
  const list = useQuery({
    queryKey: [...MESSENGERS, page],
    queryFn: () => pageAnswerOf(opsApi.GET("/ops/v1/messengers", { params: { query: { page, per_page: PER_PAGE } } })),
  });
  const messengers = list.data?.items;
  const create = useChange((body: MessengerBody) => answerOf(opsApi.POST("/ops/v1/messengers", { body })), {
    invalidate: [MESSENGERS],
  });
  const update = useChange(
    ({ id, body }: { id: number; body: MessengerBody }) =>
      answerOf(opsApi.PATCH("/ops/v1/messengers/{id}", { params: { path: { id: String(id) } }, body })),
    { invalidate: [MESSENGERS], onSuccess: () => setEditing(null) },
  );
  const form = editing ? update : create;
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const element = event.currentTarget;
    const data = new FormData(element);
    const body = { name: textOf(data, "name"), phone: textOf(data, "phone") ?? null } as MessengerBody;
    if (editing) update.mutate({ id: editing.id, body });
    else create.mutate(body, { onSuccess: () => element.reset() });
  };
  return (
    <>
      <h1>Fleet</h1>
      <FleetNav />
      <h2>Messengers</h2>
      {list.error && <Errors errors={[list.error.message]} />}
      {list.isPending && <p>Loading the messengers…</p>}
      {messengers?.length === 0 && <p>No messenger yet.</p>}
      {messengers && messengers.length > 0 && (
        <table data-testid="messengers">
          <caption className="visually-hidden">Messengers</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Phone</th>
              <th scope="col">Added</th>
              {mayChange && <th scope="col">Action</th>}
            </tr>
          </thead>
          <tbody>
            {messengers.map((messenger) => (
              <tr key={messenger.id}>
                <td>{messenger.name}</td>
                <td>{messenger.phone ?? "—"}</td>
                <td>{when(messenger.created_at)}</td>
                {mayChange && (
                  <td>
                    <button
                      type="button"
                      className="secondary"
                      aria-label={`Change ${messenger.name}`}
                      onClick={() => {
                        update.clearErrors();
                        setEditing(messenger);
                      }}
                    >
                      Change
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <PageButtons page={page} hasNext={list.data?.hasNext ?? false} onPage={setPage} />
      {mayChange && (
        <>
          <form
            onSubmit={onSubmit}
            noValidate
            className="delivery-form"
            aria-label={editing ? `Change ${editing.name}` : "New messenger"}
            key={editing?.id ?? "new"}
          >
            <h3>{editing ? `Change ${editing.name}` : "New messenger"}</h3>
            <Field label="Name" name="name" path="name" errors={form.errors} defaultValue={editing?.name ?? ""} />
            <Field
              label="Phone (optional)"
              name="phone"
              type="tel"
              path="phone"
              errors={form.errors}
              defaultValue={editing?.phone ?? ""}
            />
            <div className="actions">
              <button type="submit" disabled={form.isPending}>
                {editing ? "Save the messenger" : "Add the messenger"}
              </button>
              {editing && (
                <button type="button" className="secondary" onClick={() => setEditing(null)}>
                  Cancel the change
                </button>
              )}
            </div>
          </form>
          <Errors errors={form.errors} claimed={["name", "phone"]} />
        </>
      )}
    </>
  );
}
