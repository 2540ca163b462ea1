/**
 * Routing a batch of delivery events in one round trip: for each event, the enabled endpoints of
 * its account that want its kind, and for each such endpoint whether the event was already
 * handled for it (an attempt is logged or a message queued: a redelivery or a re-publish) and
 * whether the endpoint's queue for that delivery holds pending messages in the database (then
 * the event must queue behind them). A prepared statement: at a steady trickle every event is a
 * batch of its own, and planning this join cost PostgreSQL more than running it.
 */
import { type Pool, runNamed } from "@dos/service-kit";
import { type Kysely, sql } from "kysely";
import type { DB } from "../db/database.ts";
import type { DeliveryEventEnvelope } from "./delivery-event.ts";

/** An endpoint an event goes to, with what its POST needs. */
export interface RoutedEndpoint {
  event_id: string;
  endpoint_id: string;
  url: string;
  secret_ciphertext: string;
  previous_secret_ciphertext: string | null;
  previous_secret_expires_at: Date | null;
  /** Already delivered or queued for this endpoint. */
  handled: boolean;
  /** The endpoint's queue for the event's delivery holds pending messages. */
  queued: boolean;
}

export type RoutableEvent = Pick<DeliveryEventEnvelope, "id" | "account_id" | "delivery_id"> & { type: string };

export async function routeEvents(db: Kysely<DB>, pool: Pool, events: RoutableEvent[]): Promise<RoutedEndpoint[]> {
  if (events.length === 0) return [];
  const column = <T>(pick: (e: RoutableEvent) => T) => events.map(pick);
  const query = sql<RoutedEndpoint>`
    select ev.event_id, e.id as endpoint_id, e.url, e.secret_ciphertext, e.previous_secret_ciphertext,
      e.previous_secret_expires_at,
      exists (select 1 from attempts a where a.event_id = ev.event_id and a.endpoint_id = e.id)
        or exists (select 1 from messages m where m.endpoint_id = e.id and m.event_id = ev.event_id) as handled,
      exists (select 1 from messages m
        where m.endpoint_id = e.id and m.delivery_id = ev.delivery_id and m.state = 'pending') as queued
    from unnest(${column((e) => e.id)}::uuid[], ${column((e) => e.account_id)}::bigint[],
      ${column((e) => e.delivery_id)}::bigint[], ${column((e) => e.type)}::text[])
      as ev(event_id, account_id, delivery_id, type)
    join endpoints e on e.account_id = ev.account_id and e.deleted_at is null and e.status = 'enabled'
      and (e.event_types is null or ev.type = any(e.event_types))
    order by e.created_at, e.id
  `;
  return runNamed(db, pool, "route_delivery_events", query);
}
