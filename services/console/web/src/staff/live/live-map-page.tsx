/**
 * The live map (`/staff/live`): every vehicle in an active round at its latest position, pushed by
 * the console (live-fleet.ts), with its state in words, by shape and by colour: on time, late (its
 * next task's ETA past the slot), or no position for 2 minutes. The map draws them (a chunk of its
 * own, the console's MapLibre setup); the table under it lists the same vehicles for the keyboard
 * and screen readers, each a button named `Vehicle <external id>: <state>` carrying its current
 * position (data-vehicle-id, data-lat, data-lng). A vehicle, on the map or in the table, opens its
 * round's page.
 */
import { useRouter } from "@tanstack/react-router";
import { lazy, type MouseEvent, memo, Suspense, useCallback, useEffect, useMemo, useRef, useState } from "react";
import { age } from "../../pages/display.tsx";
import { type LiveState, type LiveVehicle, roundPath, STATE_ICONS, stateOf, useLiveFleet } from "./live-fleet.ts";
import "./live.css";

/** MapLibre is heavy: the map chunk is loaded once the page is open, the table shows meanwhile. */
const LiveMapCanvas = lazy(() => import("./live-map-canvas.tsx"));

const STATES = Object.keys(STATE_ICONS) as LiveState[];

function StateMark({ state }: { state: LiveState }) {
  return (
    <span className={`live-state live-${STATE_ICONS[state].shape}`}>
      <span className="live-shape" aria-hidden="true" />
      {state}
    </span>
  );
}

/**
 * The time now for the ages and states: the time of the last update while the stream brings one
 * every second, else once a second. One render a second, not two: each is 2,000 rows.
 */
function useClock(updatedAt: number): number {
  const [tick, setTick] = useState(Date.now());
  const lastUpdate = useRef(updatedAt);
  lastUpdate.current = updatedAt;
  useEffect(() => {
    const timer = setInterval(() => {
      if (Date.now() - lastUpdate.current >= 900) setTick(Date.now());
    }, 1000);
    return () => clearInterval(timer);
  }, []);
  return Math.max(tick, updatedAt);
}

/** A plain click on a link or button to a round opens it in the app; a modified click is the browser's. */
function useOpenRound() {
  const router = useRouter();
  return useCallback((roundId: number) => router.history.push(roundPath(roundId)), [router]);
}

const VehicleRow = memo(function VehicleRow(props: {
  vehicle: LiveVehicle;
  state: LiveState;
  age: string;
  onOpen: (roundId: number) => void;
}) {
  const { vehicle, state, onOpen } = props;
  const followLink = (event: MouseEvent<HTMLAnchorElement>) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    onOpen(vehicle.roundId);
  };
  return (
    <tr>
      <td>
        <button
          type="button"
          className="link-like"
          aria-label={`Vehicle ${vehicle.externalId}: ${state}`}
          data-vehicle-id={vehicle.id}
          data-lat={vehicle.position?.latitude}
          data-lng={vehicle.position?.longitude}
          onClick={() => onOpen(vehicle.roundId)}
        >
          {vehicle.externalId}
        </button>
        {vehicle.label && <span className="live-label"> {vehicle.label}</span>}
      </td>
      <td>{vehicle.messenger}</td>
      <td>
        <a href={roundPath(vehicle.roundId)} onClick={followLink}>
          Round #{vehicle.roundId}
        </a>
      </td>
      <td>
        <StateMark state={state} />
      </td>
      <td>{props.age}</td>
    </tr>
  );
});

export function LiveMapPage() {
  const fleet = useLiveFleet();
  const now = useClock(fleet.updatedAt);
  const onOpen = useOpenRound();
  const consoleNow = now + fleet.clockOffsetMs;
  const { noPositionAfterMs } = fleet;
  const stateAt = useCallback(
    (vehicle: LiveVehicle) => stateOf(vehicle, consoleNow, noPositionAfterMs),
    [consoleNow, noPositionAfterMs],
  );
  const counts = useMemo(() => {
    const byState = new Map<LiveState, number>(STATES.map((s) => [s, 0]));
    for (const vehicle of fleet.vehicles) {
      const state = stateAt(vehicle);
      byState.set(state, (byState.get(state) ?? 0) + 1);
    }
    return byState;
  }, [fleet.vehicles, stateAt]);
  const connection = fleet.connection;

  return (
    <>
      <h1>Live map</h1>
      <p>
        Every vehicle in an active round at its latest position, moved as its tracker reports. Select a vehicle, on the
        map or in the table, to open its round.
      </p>
      <p role="status" className={`live-connection ${connection.kind}`}>
        {connection.kind === "connecting" && "Connecting to the console…"}
        {connection.kind === "live" && "Live: positions arrive as the trackers send them."}
        {(connection.kind === "retrying" || connection.kind === "stopped") && connection.message}
      </p>
      {connection.kind === "stopped" && (
        <p>
          {/* A full load: the session is over, nothing on this page is worth keeping. */}
          <a href="/staff/sign-in">Sign in again</a>
        </p>
      )}
      <p>
        {fleet.vehicles.length.toLocaleString("en-GB")} {fleet.vehicles.length === 1 ? "vehicle" : "vehicles"} in active
        rounds:
      </p>
      <ul className="live-legend" aria-label="States">
        {STATES.map((state) => (
          <li key={state}>
            <StateMark state={state} />: {(counts.get(state) ?? 0).toLocaleString("en-GB")}
          </li>
        ))}
      </ul>
      <Suspense fallback={<p>Loading the map…</p>}>
        <LiveMapCanvas vehicles={fleet.vehicles} stateOf={stateAt} onOpen={onOpen} />
      </Suspense>
      {connection.kind === "live" && fleet.vehicles.length === 0 && <p>No vehicle is in an active round.</p>}
      <table className="live-vehicles" data-testid="live-vehicles">
        <caption>Vehicles in active rounds</caption>
        <thead>
          <tr>
            <th scope="col">Vehicle</th>
            <th scope="col">Messenger</th>
            <th scope="col">Round</th>
            <th scope="col">State</th>
            <th scope="col">Last position</th>
          </tr>
        </thead>
        <tbody>
          {fleet.vehicles.map((vehicle) => (
            <VehicleRow
              key={vehicle.id}
              vehicle={vehicle}
              state={stateAt(vehicle)}
              age={vehicle.position ? age(vehicle.position.recordedMs, consoleNow) : "none"}
              onOpen={onOpen}
            />
          ))}
        </tbody>
      </table>
    </>
  );
}
