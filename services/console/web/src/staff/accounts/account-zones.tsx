/**
 * An account's delivery zones: the postal codes it delivers, each with the centroid the ETA falls
 * back on when a place has no coordinates. Added one at a time (or moved: the same postal code
 * again), removed one at a time.
 */
import { useQuery } from "@tanstack/react-query";
import type { FormEvent } from "react";
import { Errors, Field } from "../../pages/form-parts.tsx";
import { numberOf, textOf, useChange } from "../change.ts";
import { answerOf, type BodyOf, opsApi } from "../ops-api.ts";
import { useMayChange } from "../staff-access.ts";
import { AccountFrame, accountKey } from "./account-frame.tsx";

type ZonesBody = BodyOf<"/ops/v1/accounts/{accountId}/zones", "post">;

export function AccountZonesPage() {
  return <AccountFrame title="Zones">{(account) => <Zones accountId={String(account.id)} />}</AccountFrame>;
}

function Zones({ accountId }: { accountId: string }) {
  const mayChange = useMayChange("accounts");
  const key = [...accountKey(accountId), "zones"];
  const zones = useQuery({
    queryKey: key,
    queryFn: () => answerOf(opsApi.GET("/ops/v1/accounts/{accountId}/zones", { params: { path: { accountId } } })),
  });
  const add = useChange(
    (body: ZonesBody) =>
      answerOf(opsApi.POST("/ops/v1/accounts/{accountId}/zones", { params: { path: { accountId } }, body })),
    { invalidate: [key] },
  );
  const remove = useChange(
    (postalCode: string) =>
      answerOf(
        opsApi.DELETE("/ops/v1/accounts/{accountId}/zones/{postalCode}", {
          params: { path: { accountId, postalCode } },
        }),
      ),
    { invalidate: [key] },
  );
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const element = event.currentTarget;
    const form = new FormData(element);
    const zone = {
      postal_code: textOf(form, "postal_code"),
      latitude: numberOf(form, "latitude"),
      longitude: numberOf(form, "longitude"),
    };
    add.mutate({ zones: [zone] } as ZonesBody, { onSuccess: () => element.reset() });
  };
  // The API names a zone's field by its place in the array it was sent in: here always the first.
  const paths = ["zones[0].postal_code", "zones[0].latitude", "zones[0].longitude"];
  return (
    <>
      <p>
        A saved address, and every place a client sends, must be in one of these postal codes (the default place need
        not).
      </p>
      {zones.error && <Errors errors={[zones.error.message]} />}
      {zones.isPending && <p>Loading the zones…</p>}
      {zones.data?.length === 0 && <p>No zone yet: the account delivers nowhere.</p>}
      {zones.data && zones.data.length > 0 && (
        <table data-testid="zones">
          <caption className="visually-hidden">Delivery zones</caption>
          <thead>
            <tr>
              <th scope="col">Postal code</th>
              <th scope="col">Centroid</th>
              {mayChange && <th scope="col">Action</th>}
            </tr>
          </thead>
          <tbody>
            {zones.data.map((zone) => (
              <tr key={zone.postal_code}>
                <td>{zone.postal_code}</td>
                <td>
                  {zone.latitude}, {zone.longitude}
                </td>
                {mayChange && (
                  <td>
                    <button
                      type="button"
                      className="secondary"
                      aria-label={`Remove zone ${zone.postal_code}`}
                      disabled={remove.isPending}
                      onClick={() => remove.mutate(zone.postal_code)}
                    >
                      Remove
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
          <form onSubmit={onSubmit} noValidate className="filters" aria-label="Add a zone">
            <Field label="Postal code" name="postal_code" path={paths[0]} errors={add.errors} />
            <Field
              label="Centroid latitude"
              name="latitude"
              type="number"
              step="any"
              path={paths[1]}
              errors={add.errors}
            />
            <Field
              label="Centroid longitude"
              name="longitude"
              type="number"
              step="any"
              path={paths[2]}
              errors={add.errors}
            />
            <button type="submit" disabled={add.isPending}>
              Add the zone
            </button>
          </form>
          <Errors errors={add.errors} claimed={paths} />
        </>
      )}
    </>
  );
}
