/** The `pricing` schema as Kysely sees it, assembled from each feature's table file. */
import type { Kysely } from "kysely";
import type { TariffsTable } from "../tariffs/tariffs.table.ts";

export interface DB {
  tariffs: TariffsTable;
}

export type Db = Kysely<DB>;
