/**
 * An account's places: the default place (the shop's own site or a hub: task details there are
 * filled in for the client) and its saved addresses (the integer a task may be given as). Every
 * rule (a postal code in the zones, a phone unless waived) is the API's: its 422 is shown beside
 * the field it names.
 */
import type { components } from "@dos/api-types/ops-v1";
import { useQuery } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { ApiError } from "../../bff.ts";
import { Errors, Field } from "../../pages/form-parts.tsx";
import { numberOf, textOf, useChange } from "../change.ts";
import { answerOf, type BodyOf, opsApi } from "../ops-api.ts";
import { useMayChange } from "../staff-access.ts";
import { AccountFrame, accountKey } from "./account-frame.tsx";

type SavedPlace = components["schemas"]["SavedPlace"];
type PlaceBody = BodyOf<"/ops/v1/accounts/{accountId}/default_place", "put">;

const REQUIRED = [
  ["recipient_name", "Recipient name"],
  ["address", "Address (number and street only)"],
  ["postal_code", "Postal code"],
  ["city", "City"],
] as const;
const OPTIONAL = [
  ["label", "Label (what people call it)"],
  ["company_name", "Company"],
  ["recipient_phone", "Recipient phone"],
  ["recipient_email", "Recipient e-mail"],
] as const;
const INSTRUCTIONS = ["address_instructions", "Access instructions (code, floor…)"] as const;
const COORDINATES = [
  ["latitude", "Latitude (optional)"],
  ["longitude", "Longitude (optional)"],
] as const;
const PATHS = [...REQUIRED, ...OPTIONAL, ...COORDINATES, INSTRUCTIONS].map(([name]) => name);

/** A place as the API takes it: a blank optional field is null (it clears what was there). */
function placeBody(form: FormData): PlaceBody {
  const body: Record<string, unknown> = {};
  for (const [name] of REQUIRED) body[name] = textOf(form, name);
  for (const [name] of [...OPTIONAL, INSTRUCTIONS]) body[name] = textOf(form, name) ?? null;
  for (const [name] of COORDINATES) body[name] = numberOf(form, name) ?? null;
  return body as PlaceBody;
}

function PlaceFields({ place, errors }: { place: SavedPlace | null; errors: string[] }) {
  const value = (name: string) => {
    const v = place?.[name as keyof SavedPlace];
    return v === null || v === undefined ? "" : String(v);
  };
  return (
    <div className="field-grid">
      {[...REQUIRED, ...OPTIONAL].map(([name, label]) => (
        <Field
          key={name}
          label={label}
          name={name}
          path={name}
          errors={errors}
          type={name === "recipient_email" ? "email" : "text"}
          defaultValue={value(name)}
        />
      ))}
      {COORDINATES.map(([name, label]) => (
        <Field
          key={name}
          label={label}
          name={name}
          type="number"
          step="any"
          path={name}
          errors={errors}
          defaultValue={value(name)}
        />
      ))}
      <Field
        label={INSTRUCTIONS[1]}
        name={INSTRUCTIONS[0]}
        path={INSTRUCTIONS[0]}
        errors={errors}
        defaultValue={value(INSTRUCTIONS[0])}
      />
    </div>
  );
}

/** "Entrepôt, 12 Rue de la Paix, 75002 Paris". */
const placeLine = (place: SavedPlace) =>
  [place.label, place.address, `${place.postal_code} ${place.city}`].filter(Boolean).join(", ");

export function AccountPlacesPage() {
  return (
    <AccountFrame title="Places">
      {(account) => (
        <>
          <DefaultPlace accountId={String(account.id)} />
          <SavedAddresses accountId={String(account.id)} />
        </>
      )}
    </AccountFrame>
  );
}

function DefaultPlace({ accountId }: { accountId: string }) {
  const mayChange = useMayChange("accounts");
  const [saved, setSaved] = useState(false);
  const key = [...accountKey(accountId), "default-place"];
  const place = useQuery({
    queryKey: key,
    queryFn: async () => {
      try {
        return await answerOf(
          opsApi.GET("/ops/v1/accounts/{accountId}/default_place", { params: { path: { accountId } } }),
        );
      } catch (error) {
        // No default place yet is a 404 of the place, not of the account (the frame read it).
        if (error instanceof ApiError && error.status === 404) return null;
        throw error;
      }
    },
  });
  const save = useChange(
    (body: PlaceBody) =>
      answerOf(opsApi.PUT("/ops/v1/accounts/{accountId}/default_place", { params: { path: { accountId } }, body })),
    { invalidate: [key], onSuccess: () => setSaved(true) },
  );
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setSaved(false);
    save.mutate(placeBody(new FormData(event.currentTarget)));
  };
  return (
    <section aria-labelledby="default-place-heading">
      <h3 id="default-place-heading">Default place</h3>
      <p>
        Where the shop's deliveries start (outbound) or end (inbound): its details are filled in for the client, and the
        task there gets its slot computed.
      </p>
      {place.error && <Errors errors={[place.error.message]} />}
      {place.isPending && <p>Loading the default place…</p>}
      {place.data === null && <p data-testid="default-place">No default place yet.</p>}
      {place.data && (
        <p data-testid="default-place">
          {placeLine(place.data)} ({place.data.recipient_name}
          {place.data.recipient_phone ? `, ${place.data.recipient_phone}` : ""})
        </p>
      )}
      {mayChange && place.data !== undefined && (
        <>
          <form
            onSubmit={onSubmit}
            noValidate
            className="wide-form"
            aria-label="Default place"
            key={place.data?.id ?? "none"}
          >
            <PlaceFields place={place.data} errors={save.errors} />
            <button type="submit" disabled={save.isPending}>
              Save the default place
            </button>
            {saved && <p role="status">Default place saved.</p>}
          </form>
          <Errors errors={save.errors} claimed={PATHS} />
        </>
      )}
    </section>
  );
}

function SavedAddresses({ accountId }: { accountId: string }) {
  const mayChange = useMayChange("accounts");
  const key = [...accountKey(accountId), "addresses"];
  const [editing, setEditing] = useState<SavedPlace | null>(null);
  const addresses = useQuery({
    queryKey: key,
    queryFn: () => answerOf(opsApi.GET("/ops/v1/accounts/{accountId}/addresses", { params: { path: { accountId } } })),
  });
  const add = useChange(
    (body: PlaceBody) =>
      answerOf(opsApi.POST("/ops/v1/accounts/{accountId}/addresses", { params: { path: { accountId } }, body })),
    { invalidate: [key] },
  );
  const change = useChange(
    ({ id, body }: { id: number; body: PlaceBody }) =>
      answerOf(
        opsApi.PATCH("/ops/v1/accounts/{accountId}/addresses/{addressId}", {
          params: { path: { accountId, addressId: String(id) } },
          body,
        }),
      ),
    { invalidate: [key], onSuccess: () => setEditing(null) },
  );
  const remove = useChange(
    (id: number) =>
      answerOf(
        opsApi.DELETE("/ops/v1/accounts/{accountId}/addresses/{addressId}", {
          params: { path: { accountId, addressId: String(id) } },
        }),
      ),
    { invalidate: [key] },
  );
  const form = editing ? change : add;
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const element = event.currentTarget;
    const body = placeBody(new FormData(element));
    if (editing) change.mutate({ id: editing.id, body });
    else add.mutate(body, { onSuccess: () => element.reset() });
  };
  return (
    <section aria-labelledby="addresses-heading">
      <h3 id="addresses-heading">Saved addresses</h3>
      <p>A task may be given as the number of a saved address instead of a place.</p>
      {addresses.error && <Errors errors={[addresses.error.message]} />}
      {addresses.isPending && <p>Loading the saved addresses…</p>}
      {addresses.data?.length === 0 && <p>No saved address yet.</p>}
      {addresses.data && addresses.data.length > 0 && (
        <table>
          <caption className="visually-hidden">Saved addresses</caption>
          <thead>
            <tr>
              <th scope="col">Number</th>
              <th scope="col">Address</th>
              <th scope="col">Recipient</th>
              {mayChange && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {addresses.data.map((address) => (
              <tr key={address.id}>
                <td>{address.id}</td>
                <td>{placeLine(address)}</td>
                <td>
                  {address.recipient_name}
                  {address.recipient_phone ? `, ${address.recipient_phone}` : ""}
                </td>
                {mayChange && (
                  <td className="row-actions">
                    <button
                      type="button"
                      className="secondary"
                      aria-label={`Change address ${address.id}`}
                      onClick={() => {
                        change.clearErrors();
                        setEditing(address);
                      }}
                    >
                      Change
                    </button>
                    <button
                      type="button"
                      className="secondary"
                      aria-label={`Delete address ${address.id}`}
                      disabled={remove.isPending}
                      onClick={() => remove.mutate(address.id)}
                    >
                      Delete
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Errors errors={remove.errors} />
      {mayChange && (
        <>
          <form
            onSubmit={onSubmit}
            noValidate
            className="wide-form"
            aria-label={editing ? `Change address ${editing.id}` : "Add a saved address"}
            key={editing?.id ?? "new"}
          >
            <h4>{editing ? `Change address ${editing.id}` : "Add a saved address"}</h4>
            <PlaceFields place={editing} errors={form.errors} />
            <div className="actions">
              <button type="submit" disabled={form.isPending}>
                {editing ? "Save the address" : "Add the address"}
              </button>
              {editing && (
                <button type="button" className="secondary" onClick={() => setEditing(null)}>
                  Cancel the change
                </button>
              )}
            </div>
          </form>
          <Errors errors={form.errors} claimed={PATHS} />
        </>
      )}
    </section>
  );
}
