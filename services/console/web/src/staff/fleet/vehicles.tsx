/**
 * The fleet's vehicles: each with its External ID (the `vehicle_id` its tracker posts positions
 * to), provider, whether a tracker token is set, its current round and when its tracker last sent a
 * position; and a new vehicle
 * (dispatchers and administrators). A vehicle's own page has the rest.
 */
import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { type FormEvent, useState } from "react";
import { when } from "../../pages/display.tsx";
import { Errors, Field } from "../../pages/form-parts.tsx";
import { textOf, useChange } from "../change.ts";
import { answerOf, type BodyOf, opsApi, pageAnswerOf } from "../ops-api.ts";
import { PageButtons } from "../page-buttons.tsx";
import { useMayChange } from "../staff-access.ts";
import { FleetNav } from "./fleet-nav.tsx";

type NewVehicle = BodyOf<"/ops/v1/vehicles", "post">;

/** Rows per page of the list. */
const PER_PAGE = 100;

export const VEHICLES = ["staff", "fleet", "vehicles"];

export function VehiclesPage() {
  const mayChange = useMayChange("fleet");
  const [page, setPage] = useState(1);
  const list = useQuery({
    queryKey: [...VEHICLES, page],
    queryFn: () => pageAnswerOf(opsApi.GET("/ops/v1/vehicles", { params: { query: { page, per_page: PER_PAGE } } })),
  });
  const vehicles = list.data?.items;
  const create = useChange((body: NewVehicle) => answerOf(opsApi.POST("/ops/v1/vehicles", { body })), {
    invalidate: [VEHICLES],
  });
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const element = event.currentTarget;
    const form = new FormData(element);
    create.mutate(
      {
        external_id: textOf(form, "external_id"),
        provider: textOf(form, "provider"),
        label: textOf(form, "label") ?? null,
      } as NewVehicle,
      { onSuccess: () => element.reset() },
    );
  };
  return (
    <>
      <h1>Fleet</h1>
      <FleetNav />
      <h2>Vehicles</h2>
      {list.error && <Errors errors={[list.error.message]} />}
      {list.isPending && <p>Loading the vehicles…</p>}
      {vehicles?.length === 0 && <p>No vehicle yet.</p>}
      {vehicles && vehicles.length > 0 && (
        <table data-testid="vehicles">
          <caption className="visually-hidden">Vehicles</caption>
          <thead>
            <tr>
              <th scope="col">External ID</th>
              <th scope="col">Label</th>
              <th scope="col">Provider</th>
              <th scope="col">Tracker token</th>
              <th scope="col">Current round</th>
              <th scope="col">Last position</th>
            </tr>
          </thead>
          <tbody>
            {vehicles.map((vehicle) => (
              <tr key={vehicle.id}>
                <td>
                  <Link to="/staff/fleet/vehicles/$vehicleId" params={{ vehicleId: String(vehicle.id) }}>
                    {vehicle.external_id}
                  </Link>
                </td>
                <td>{vehicle.label ?? "—"}</td>
                <td>{vehicle.provider}</td>
                <td>{vehicle.has_provider_token ? "set" : "none"}</td>
                <td>
                  {vehicle.current_round
                    ? `round #${vehicle.current_round.id} (${vehicle.current_round.messenger.name})`
                    : "none"}
                </td>
                <td>{vehicle.last_position ? when(vehicle.last_position.recorded_at) : "none yet"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <PageButtons page={page} hasNext={list.data?.hasNext ?? false} onPage={setPage} />
      {mayChange && (
        <>
          <form onSubmit={onSubmit} noValidate className="delivery-form" aria-label="New vehicle">
            <h3>New vehicle</h3>
            <Field
              label="External ID (the tracker's vehicle_id; fixed)"
              name="external_id"
              path="external_id"
              errors={create.errors}
            />
            <Field label="Tracker provider" name="provider" path="provider" errors={create.errors} />
            <Field label="Label (optional)" name="label" path="label" errors={create.errors} />
            <button type="submit" disabled={create.isPending}>
              Add the vehicle
            </button>
          </form>
          <Errors errors={create.errors} claimed={["external_id", "provider", "label"]} />
        </>
      )}
    </>
  );
}
