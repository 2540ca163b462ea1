/**
 * A delivery's status timeline: its events (the ones webhooks carry) from the client API, oldest
 * first, refreshed until the delivery has ended so a status change appears by itself.
 */
import type { components } from "@dos/api-types/client-v2";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { clientApi } from "../client-api.ts";
import { type DeliveryStatus, STATUS_LABELS, when } from "./display.tsx";

type Delivery = components["schemas"]["Delivery"];
type TimelineEvent = components["schemas"]["DeliveryTimelineEvent"];

/** Statuses of a delivery on its way: the courier's position is shown. */
export const UNDER_WAY: ReadonlySet<DeliveryStatus> = new Set(["scheduled", "picked_up"]);
/** Statuses in which a delivery still changes by itself (dispatch, the courier's progress): pages showing it ask again. */
export const CHANGING: ReadonlySet<DeliveryStatus> = new Set(["saved", "scheduled", "picked_up"]);
/** How often a page showing a delivery under way asks again. */
export const REFRESH_MS = 3000;

const label = (status: string) => STATUS_LABELS[status as DeliveryStatus] ?? status;

function describe(event: TimelineEvent): string {
  switch (event.type) {
    case "delivery.created":
      return `Created (${label(event.status)})`;
    case "delivery.updated":
      return "Changed";
    case "delivery.cancelled":
      return "Cancelled";
    case "delivery.redelivery_created":
      return "Redelivery asked";
    case "delivery.status_changed":
      return event.previous_status ? `${label(event.previous_status)} → ${label(event.status)}` : label(event.status);
  }
}

export function DeliveryTimeline({ delivery }: { delivery: Delivery }) {
  const events = useQuery({
    // Under the delivery's key, so that a change made on the page refreshes the timeline too; with
    // its status, so that the last change (after which nothing is asked again) is read as well.
    queryKey: ["delivery", String(delivery.id), "events", delivery.status],
    placeholderData: keepPreviousData,
    refetchInterval: CHANGING.has(delivery.status) ? REFRESH_MS : false,
    queryFn: async () => {
      const { data, error } = await clientApi.GET("/api/v2/deliveries/{delivery_id}/events", {
        params: { path: { delivery_id: delivery.id } },
      });
      if (error) throw new Error(error.errors.join("; "));
      return data;
    },
  });
  return (
    <section aria-labelledby="timeline-heading" className="timeline">
      <h2 id="timeline-heading">Timeline</h2>
      {events.error && <p role="alert">The timeline could not be loaded: {events.error.message}</p>}
      {events.data && (
        <ol data-testid="timeline">
          {events.data.map((event) => (
            <li key={event.id} data-type={event.type}>
              <time dateTime={event.occurred_at}>{when(event.occurred_at)}</time> {describe(event)}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
