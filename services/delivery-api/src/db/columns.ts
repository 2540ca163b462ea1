import type { ColumnType } from "kysely";

/** A creation time: the database's default when not given, never updated. */
export type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
