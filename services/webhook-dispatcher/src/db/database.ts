/** The `webhooks` schema as Kysely sees it, assembled from each feature's table file. */
import type { Kysely, Transaction } from "kysely";
import type { EndpointsTable } from "../endpoints/endpoints.table.ts";
import type { AttemptsTable, EventsTable, MessagesTable } from "../queue/queue.table.ts";

export interface DB {
  endpoints: EndpointsTable;
  events: EventsTable;
  messages: MessagesTable;
  attempts: AttemptsTable;
}

/** A database handle or an open transaction: repositories accept either. */
export type Db = Kysely<DB> | Transaction<DB>;
