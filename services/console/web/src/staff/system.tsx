/**
 * The System page: each service's readiness (every replica's), the webhook backlog and dead
 * letters, and the positions stored per second, as the console's backend read them from the
 * services' own /readyz and /metrics (GET /api/staff/system). Read again every few seconds; a
 * service that does not answer is shown as such, and the page keeps its last reading when the
 * console itself cannot be reached.
 */
import { useQuery } from "@tanstack/react-query";
import type { SystemView } from "../../../src/shared/page-shapes.ts";
import { Errors } from "../pages/form-parts.tsx";
import { staffBff } from "./staff-bff.ts";
import "./staff-admin.css";

/** How often the page reads again; the backend serves one reading per interval to every page. */
const REFRESH_MS = 5000;

const STATE_LABELS: Record<SystemView["services"][number]["state"], string> = {
  ready: "Ready",
  degraded: "Degraded",
  not_ready: "Not ready",
  not_answering: "Not answering",
};
const REPLICA_LABELS: Record<SystemView["services"][number]["replicas"][number]["state"], string> = {
  ready: "ready",
  not_ready: "not ready",
  not_answering: "not answering",
};
const REASON_LABELS: Record<string, string> = {
  attempts: "every attempt failed",
  endpoint_disabled: "endpoint disabled",
};

const count = (value: number | null) => (value === null ? "unknown" : value.toLocaleString("en-GB"));
const clock = (timestamp: string) => new Date(timestamp).toLocaleTimeString("en-GB", { timeZone: "UTC" });

function duration(seconds: number | null): string {
  if (seconds === null) return "unknown";
  if (seconds < 1) return "none pending";
  if (seconds < 120) return `${Math.round(seconds)} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  return `${Math.round(seconds / 3600)} h`;
}

export function SystemPage() {
  const reading = useQuery({
    queryKey: ["staff", "system"],
    queryFn: staffBff.system,
    refetchInterval: REFRESH_MS,
    refetchIntervalInBackground: false,
  });
  const view = reading.data;
  return (
    <>
      <h1>System</h1>
      <p>
        What each service says of itself on its own health and metrics endpoints, read by the console every{" "}
        {view?.sample_seconds ?? REFRESH_MS / 1000} s; this page reads again every {REFRESH_MS / 1000} s.
        {view && (
          <>
            {" "}
            Last reading:{" "}
            <time dateTime={view.sampled_at} data-testid="sampled-at">
              {clock(view.sampled_at)} UTC
            </time>
            .
          </>
        )}
      </p>
      {reading.isPending && <p role="status">Reading the services…</p>}
      {reading.isError && (
        <Errors
          errors={[
            view
              ? `The console could not read the services again (${reading.error.message}): the figures below are from the last reading.`
              : `The console could not read the services: ${reading.error.message}`,
          ]}
        />
      )}
      {view && (
        <>
          <h2>Services</h2>
          <table className="services">
            <caption className="visually-hidden">Readiness of each service</caption>
            <thead>
              <tr>
                <th scope="col">Service</th>
                <th scope="col">State</th>
                <th scope="col">Replicas ready</th>
                <th scope="col">Details</th>
              </tr>
            </thead>
            <tbody>
              {view.services.map((service) => {
                const ready = service.replicas.filter((r) => r.state === "ready").length;
                const troubled = service.replicas.filter((r) => r.state !== "ready");
                return (
                  <tr key={service.name} data-service={service.name}>
                    <th scope="row">{service.name}</th>
                    <td>
                      <span className={`state ${service.state}`}>{STATE_LABELS[service.state]}</span>
                    </td>
                    <td>
                      {ready} of {service.replicas.length}
                    </td>
                    <td>
                      {service.problems.map((problem) => (
                        <p key={problem}>{problem}</p>
                      ))}
                      {troubled.length > 0 && (
                        <ul className="replicas">
                          {troubled.map((replica) => (
                            <li key={replica.address}>
                              <code>{replica.address}</code> {REPLICA_LABELS[replica.state]}
                              {replica.problems.length > 0 ? `: ${replica.problems.join("; ")}` : ""}
                            </li>
                          ))}
                        </ul>
                      )}
                      {service.problems.length === 0 && troubled.length === 0 && "—"}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>

          <h2>Webhooks</h2>
          {view.webhooks.replicas_read === 0 ? (
            <p>webhook-dispatcher's metrics could not be read: the figures are unknown.</p>
          ) : (
            <dl className="facts figures">
              <dt>Backlog (messages waiting for a retry)</dt>
              <dd data-testid="webhook-backlog">{count(view.webhooks.backlog)}</dd>
              <dt>Oldest waiting message</dt>
              <dd>{duration(view.webhooks.oldest_pending_age_seconds)}</dd>
              <dt>Events not yet taken from the stream</dt>
              <dd>{count(view.webhooks.events_not_taken_in)}</dd>
              <dt>Dead letters since the dispatcher started</dt>
              <dd data-testid="webhook-dead-letters">
                {count(view.webhooks.dead_lettered_since_start)}
                {Object.entries(view.webhooks.dead_lettered_by_reason)
                  .filter(([, n]) => n > 0)
                  .map(([reason, n]) => ` · ${n} ${REASON_LABELS[reason] ?? reason}`)
                  .join("")}
              </dd>
            </dl>
          )}

          <h2>Positions</h2>
          {view.positions.replicas_read === 0 ? (
            <p>geo-ingest's metrics could not be read: the figures are unknown.</p>
          ) : (
            <dl className="facts figures">
              <dt>Positions stored per second</dt>
              <dd data-testid="positions-per-second">
                {view.positions.per_second === null
                  ? "measuring (two readings are needed)"
                  : `${view.positions.per_second.toLocaleString("en-GB")} per second over the last ${view.positions.window_seconds} s`}
                {view.positions.replicas_measured > 0 &&
                  view.positions.replicas_measured < view.positions.replicas_read &&
                  ` (${view.positions.replicas_measured} of ${view.positions.replicas_read} replicas measured)`}
              </dd>
              <dt>Stored since geo-ingest started</dt>
              <dd data-testid="positions-stored">{count(view.positions.stored_since_start)}</dd>
            </dl>
          )}
        </>
      )}
    </>
  );
}
