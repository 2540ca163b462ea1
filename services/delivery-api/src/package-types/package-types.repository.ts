/** The package type catalogue of each account; archived entries stay for the deliveries that used them. */
import type { Insertable, Updateable } from "kysely";
import type { Db } from "../db/database.ts";
import type { PackageTypesTable } from "./package-types.table.ts";

export function insertPackageType(db: Db, values: Insertable<PackageTypesTable>) {
  return db.insertInto("package_types").values(values).returningAll().executeTakeFirstOrThrow();
}

/** The account's types, in id order; archived ones only when asked. */
export function listPackageTypes(db: Db, accountId: number, options: { includeArchived: boolean }) {
  let query = db.selectFrom("package_types").selectAll().where("account_id", "=", accountId);
  if (!options.includeArchived) query = query.where("archived_at", "is", null);
  return query.orderBy("id").execute();
}

export function findPackageType(db: Db, accountId: number, id: number) {
  return db
    .selectFrom("package_types")
    .selectAll()
    .where("id", "=", id)
    .where("account_id", "=", accountId)
    .executeTakeFirst();
}

export function findPackageTypeByName(db: Db, accountId: number, name: string) {
  return db
    .selectFrom("package_types")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("name", "=", name)
    .executeTakeFirst();
}

export function updatePackageType(db: Db, id: number, values: Updateable<PackageTypesTable>) {
  return db.updateTable("package_types").set(values).where("id", "=", id).returningAll().executeTakeFirstOrThrow();
}
