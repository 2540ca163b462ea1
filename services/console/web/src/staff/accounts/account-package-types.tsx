/**
 * An account's package types (the catalogue its deliveries name by id): the list, archived ones
 * on demand, a new type, archiving (the clients stop seeing it; deliveries keep it) and restoring.
 */
import { useQuery } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { when } from "../../pages/display.tsx";
import { Errors, Field } from "../../pages/form-parts.tsx";
import { numberOf, textOf, useChange } from "../change.ts";
import { answerOf, type BodyOf, opsApi } from "../ops-api.ts";
import { useMayChange } from "../staff-access.ts";
import { AccountFrame, accountKey } from "./account-frame.tsx";

type NewType = BodyOf<"/ops/v1/accounts/{accountId}/package_types", "post">;

const FRAGILITY = { not_fragile: "Not fragile", fragile: "Fragile", very_fragile: "Very fragile" } as const;
const TEMPERATURE = { ambient: "Ambient", chilled: "Chilled", frozen: "Frozen" } as const;
const PATHS = ["name", "volume_dm3", "weight_kg", "fragility", "temperature"];

export function AccountPackageTypesPage() {
  return (
    <AccountFrame title="Package types">{(account) => <PackageTypes accountId={String(account.id)} />}</AccountFrame>
  );
}

function PackageTypes({ accountId }: { accountId: string }) {
  const mayChange = useMayChange("accounts");
  const [archived, setArchived] = useState(false);
  const key = [...accountKey(accountId), "package-types"];
  const types = useQuery({
    queryKey: [...key, archived],
    queryFn: () =>
      answerOf(
        opsApi.GET("/ops/v1/accounts/{accountId}/package_types", {
          params: { path: { accountId }, query: { include_archived: archived } },
        }),
      ),
  });
  const create = useChange(
    (body: NewType) =>
      answerOf(opsApi.POST("/ops/v1/accounts/{accountId}/package_types", { params: { path: { accountId } }, body })),
    { invalidate: [key] },
  );
  const path = (id: number) => ({ params: { path: { accountId, packageTypeId: String(id) } } });
  const archive = useChange(
    (id: number) => answerOf(opsApi.DELETE("/ops/v1/accounts/{accountId}/package_types/{packageTypeId}", path(id))),
    { invalidate: [key] },
  );
  const restore = useChange(
    (id: number) =>
      answerOf(
        opsApi.PATCH("/ops/v1/accounts/{accountId}/package_types/{packageTypeId}", {
          ...path(id),
          body: { archived: false },
        }),
      ),
    { invalidate: [key] },
  );
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const element = event.currentTarget;
    const form = new FormData(element);
    const choice = (name: string) => (form.get(name) ? String(form.get(name)) : null);
    const body = {
      name: textOf(form, "name"),
      volume_dm3: numberOf(form, "volume_dm3"),
      weight_kg: numberOf(form, "weight_kg"),
      fragility: choice("fragility"),
      temperature: choice("temperature"),
      is_size_category: form.get("is_size_category") === "on",
    };
    create.mutate(body as NewType, { onSuccess: () => element.reset() });
  };
  return (
    <>
      <p>
        Agreed with the shop, per environment: its deliveries name them by id (clients list them at{" "}
        <code>GET /api/v2/package_types</code>).
      </p>
      <p>
        <label>
          <input type="checkbox" checked={archived} onChange={(event) => setArchived(event.target.checked)} /> Show
          archived types too
        </label>
      </p>
      {types.error && <Errors errors={[types.error.message]} />}
      {types.isPending && <p>Loading the package types…</p>}
      {types.data?.length === 0 && <p>No package type yet.</p>}
      {types.data && types.data.length > 0 && (
        <table data-testid="package-types">
          <caption className="visually-hidden">Package types</caption>
          <thead>
            <tr>
              <th scope="col">Id</th>
              <th scope="col">Name</th>
              <th scope="col">Volume</th>
              <th scope="col">Weight</th>
              <th scope="col">Handling</th>
              <th scope="col">Archived</th>
              {mayChange && <th scope="col">Action</th>}
            </tr>
          </thead>
          <tbody>
            {types.data.map((type) => (
              <tr key={type.id}>
                <td>{type.id}</td>
                <td>
                  {type.name}
                  {type.is_size_category ? " (size category)" : ""}
                </td>
                <td>{type.volume_dm3} dm³</td>
                <td>{type.weight_kg} kg</td>
                <td>
                  {[
                    type.fragility && FRAGILITY[type.fragility as keyof typeof FRAGILITY],
                    type.temperature && TEMPERATURE[type.temperature as keyof typeof TEMPERATURE],
                  ]
                    .filter(Boolean)
                    .join(", ") || "—"}
                </td>
                <td>{type.archived_at ? when(type.archived_at) : "no"}</td>
                {mayChange && (
                  <td>
                    {type.archived_at ? (
                      <button
                        type="button"
                        className="secondary"
                        aria-label={`Restore ${type.name}`}
                        disabled={restore.isPending}
                        onClick={() => restore.mutate(type.id)}
                      >
                        Restore
                      </button>
                    ) : (
                      <button
                        type="button"
                        className="secondary"
                        aria-label={`Archive ${type.name}`}
                        disabled={archive.isPending}
                        onClick={() => archive.mutate(type.id)}
                      >
                        Archive
                      </button>
                    )}
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Errors errors={[...archive.errors, ...restore.errors]} />
      {mayChange && (
        <>
          <form onSubmit={onSubmit} noValidate className="delivery-form" aria-label="New package type">
            <h3>New package type</h3>
            <Field label="Name (as clients see it)" name="name" path="name" errors={create.errors} />
            <Field
              label="Volume (dm³)"
              name="volume_dm3"
              type="number"
              step="any"
              path="volume_dm3"
              errors={create.errors}
            />
            <Field
              label="Weight (kg)"
              name="weight_kg"
              type="number"
              step="any"
              path="weight_kg"
              errors={create.errors}
            />
            <Field label="Fragility" name="fragility" path="fragility" errors={create.errors}>
              {(id, describedBy) => (
                <select id={id} name="fragility" aria-describedby={describedBy} defaultValue="">
                  <option value="">Not said</option>
                  {Object.entries(FRAGILITY).map(([value, label]) => (
                    <option key={value} value={value}>
                      {label}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            <Field label="Temperature" name="temperature" path="temperature" errors={create.errors}>
              {(id, describedBy) => (
                <select id={id} name="temperature" aria-describedby={describedBy} defaultValue="">
                  <option value="">Not said</option>
                  {Object.entries(TEMPERATURE).map(([value, label]) => (
                    <option key={value} value={value}>
                      {label}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            <p>
              <label>
                <input type="checkbox" name="is_size_category" /> A size category (given alone in a delivery, amount 1)
              </label>
            </p>
            <button type="submit" disabled={create.isPending}>
              Add the package type
            </button>
          </form>
          <Errors errors={create.errors} claimed={PATHS} />
        </>
      )}
    </>
  );
}
