/**
 * A vehicle's page, the one the spec names: its External ID (the `vehicle_id` of the geolocation
 * interface), provider and label, its tracker token (set as the provider gives it, or rotated: a
 * new one made by delivery-api and shown once, with a copy button; the API keeps only its hash),
 * its tracker's last position and its age, its current round, and its recent positions on a map
 * (a chunk of its own). Refreshed every few seconds; dispatchers and administrators change it.
 */
import type { components } from "@dos/api-types/ops-v1";
import { useQuery } from "@tanstack/react-query";
import { Link, notFound, useParams } from "@tanstack/react-router";
import { type FormEvent, lazy, Suspense, useState } from "react";
import { ApiError } from "../../bff.ts";
import { age, ShownOnce, useNow, when } from "../../pages/display.tsx";
import { Errors, Field } from "../../pages/form-parts.tsx";
import { textOf, useChange } from "../change.ts";
import { answerOf, type BodyOf, opsApi } from "../ops-api.ts";
import { useMayChange } from "../staff-access.ts";
import { FleetNav } from "./fleet-nav.tsx";
import { VEHICLES } from "./vehicles.tsx";

type Vehicle = components["schemas"]["Vehicle"];

/** How often the page reads the vehicle and its positions again: a tracker sends about every few seconds. */
const REFRESH_MS = 5000;
/** MapLibre is heavy: the map chunk, shared with the delivery page, is loaded by this page only. */
const VehicleMap = lazy(() => import("./vehicle-map.tsx"));

type VehicleChange = BodyOf<"/ops/v1/vehicles/{id}", "patch">;

export function VehiclePage() {
  const { vehicleId } = useParams({ strict: false }) as { vehicleId?: string };
  const id = vehicleId ?? "";
  const vehicle = useQuery({
    queryKey: [...VEHICLES, id],
    refetchInterval: REFRESH_MS,
    queryFn: async (): Promise<Vehicle | null> => {
      if (!/^\d{1,15}$/.test(id)) return null;
      try {
        return await answerOf(opsApi.GET("/ops/v1/vehicles/{id}", { params: { path: { id } } }));
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) return null;
        throw error;
      }
    },
  });
  if (vehicle.data === null) throw notFound();
  return (
    <>
      <p>
        <Link to="/staff/fleet">All vehicles</Link>
      </p>
      {vehicle.error && <Errors errors={[vehicle.error.message]} />}
      {!vehicle.data && !vehicle.error && <p>Loading the vehicle…</p>}
      {vehicle.data && <VehicleView vehicle={vehicle.data} />}
    </>
  );
}

function VehicleView({ vehicle }: { vehicle: Vehicle }) {
  const now = useNow();
  const round = vehicle.current_round;
  const last = vehicle.last_position;
  return (
    <>
      <h1>Vehicle {vehicle.external_id}</h1>
      <FleetNav />
      <dl className="facts" data-testid="vehicle-facts">
        <dt>External ID</dt>
        <dd data-testid="external-id">{vehicle.external_id}</dd>
        <dt>Provider</dt>
        <dd>{vehicle.provider}</dd>
        <dt>Label</dt>
        <dd>{vehicle.label ?? "—"}</dd>
        <dt>Tracker token</dt>
        <dd data-testid="token-state">
          {vehicle.has_provider_token ? "set" : "none: positions are taken without one"}
        </dd>
        <dt>Current round</dt>
        <dd data-testid="current-round">
          {round
            ? `round #${round.id}, ${round.messenger.name}, started ${round.started_at ? when(round.started_at) : "—"}`
            : "none"}
        </dd>
        <dt>Last position</dt>
        <dd data-testid="last-position">
          {last ? (
            <>
              {last.latitude.toFixed(5)}, {last.longitude.toFixed(5)}, recorded {when(last.recorded_at)} (
              <span data-testid="last-position-age">{age(last.recorded_at, now)}</span>), round #{last.round_id}
            </>
          ) : (
            "none yet"
          )}
        </dd>
        <dt>Added</dt>
        <dd>{when(vehicle.created_at)}</dd>
      </dl>
      <p>
        Its tracker sends positions to <code>POST /external/vehicles/{vehicle.external_id}/geolocations</code>
        {vehicle.has_provider_token ? ", with the token in X-Provider-Token" : ""}; they are kept while it is on an
        active round.
      </p>
      <VehicleForms vehicle={vehicle} />
      <Suspense fallback={<p>Loading the map…</p>}>
        <VehicleMap vehicleId={vehicle.id} refreshMs={REFRESH_MS} />
      </Suspense>
    </>
  );
}

function VehicleForms({ vehicle }: { vehicle: Vehicle }) {
  const mayChange = useMayChange("fleet");
  const [done, setDone] = useState<string | null>(null);
  const id = String(vehicle.id);
  const change = useChange(
    (body: VehicleChange) => answerOf(opsApi.PATCH("/ops/v1/vehicles/{id}", { params: { path: { id } }, body })),
    { invalidate: [VEHICLES] },
  );
  const token = useChange(
    (body: VehicleChange) => answerOf(opsApi.PATCH("/ops/v1/vehicles/{id}", { params: { path: { id } }, body })),
    { invalidate: [VEHICLES] },
  );
  const [rotated, setRotated] = useState<string | null>(null);
  const rotate = useChange(
    () => answerOf(opsApi.POST("/ops/v1/vehicles/{id}/provider_token", { params: { path: { id } } })),
    { invalidate: [VEHICLES], onSuccess: (answer) => setRotated(answer.provider_token) },
  );
  if (!mayChange) return null;
  const onDetails = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setDone(null);
    change.mutate({ provider: textOf(form, "provider"), label: textOf(form, "label") ?? null } as VehicleChange, {
      onSuccess: () => setDone("Vehicle saved."),
    });
  };
  const onToken = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const element = event.currentTarget;
    const value = String(new FormData(element).get("provider_token") ?? "");
    setDone(null);
    setRotated(null);
    token.mutate({ provider_token: value } as VehicleChange, {
      onSuccess: () => {
        element.reset();
        setDone("Tracker token set: give it to the provider.");
      },
    });
  };
  return (
    <>
      {done && <p role="status">{done}</p>}
      <form
        onSubmit={onDetails}
        noValidate
        className="delivery-form"
        aria-label="Provider and label"
        key={vehicle.provider + vehicle.label}
      >
        <h2>Provider and label</h2>
        <Field
          label="Tracker provider"
          name="provider"
          path="provider"
          errors={change.errors}
          defaultValue={vehicle.provider}
        />
        <Field
          label="Label (optional)"
          name="label"
          path="label"
          errors={change.errors}
          defaultValue={vehicle.label ?? ""}
        />
        <button type="submit" disabled={change.isPending}>
          Save provider and label
        </button>
      </form>
      <Errors errors={change.errors} claimed={["provider", "label"]} />
      <section aria-labelledby="token-heading">
        <h2 id="token-heading">Tracker token</h2>
        <p>
          With a token set, geo-ingest takes this vehicle's positions only with it. It is kept as a hash: a token is
          shown once, when made here, or not at all, when typed. A new one stops the previous one at once.
        </p>
        {rotated && (
          <ShownOnce
            label={`The new tracker token of ${vehicle.external_id}`}
            secret={rotated}
            what="token"
            testId="new-tracker-token"
          />
        )}
        <p>
          <button
            type="button"
            disabled={rotate.isPending}
            onClick={() => {
              setDone(null);
              setRotated(null);
              rotate.mutate();
            }}
          >
            {vehicle.has_provider_token ? "Rotate the token" : "Make a token"}
          </button>
        </p>
        <Errors errors={rotate.errors} />
        <form onSubmit={onToken} noValidate className="filters" aria-label="Set the token the provider gave">
          <Field
            label="Token the provider sends (16 characters or more)"
            name="provider_token"
            type="password"
            path="provider_token"
            errors={token.errors}
          />
          <button type="submit" disabled={token.isPending}>
            Set the token
          </button>
          {vehicle.has_provider_token && (
            <button
              type="button"
              className="secondary"
              disabled={token.isPending}
              onClick={() => {
                setDone(null);
                setRotated(null);
                token.mutate({ provider_token: null }, { onSuccess: () => setDone("Tracker token removed.") });
              }}
            >
              Remove the token
            </button>
          )}
        </form>
        <Errors errors={token.errors} claimed={["provider_token"]} />
      </section>
    </>
  );
}
