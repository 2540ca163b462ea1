/**
 * The advisory locks by which replicas share the partitions of DELIVERY_EVENTS. They are session
 * locks on one connection of each replica's own: PostgreSQL releases them when that connection
 * ends, so a replica that dies (even by SIGKILL) frees its partitions at once. Keys are two
 * 32-bit numbers: a class derived from the NATS namespace and the kind of lock, and the partition
 * (or, for membership, a number the replica picked).
 */
import { createHash } from "node:crypto";
import type pg from "pg";

/** The lock classes of one namespace: members hold one each, owners one per partition. */
export interface LockClasses {
  member: number;
  partition: number;
}

/** Classes that differ between namespaces, so two deployments on one database never meet. */
export function lockClasses(namespace: string): LockClasses {
  const classOf = (kind: string) =>
    createHash("sha256").update(`webhook-dispatcher:${namespace}:${kind}`).digest().readUInt32BE(0) & 0x7fffffff;
  return { member: classOf("member"), partition: classOf("partition") };
}

export async function tryLock(client: pg.ClientBase, lockClass: number, key: number): Promise<boolean> {
  const { rows } = await client.query<{ locked: boolean }>("select pg_try_advisory_lock($1::int, $2::int) as locked", [
    lockClass,
    key,
  ]);
  return rows[0]?.locked === true;
}

export async function unlock(client: pg.ClientBase, lockClass: number, key: number): Promise<void> {
  await client.query("select pg_advisory_unlock($1::int, $2::int)", [lockClass, key]);
}

/** How many replicas hold a member lock of the class in this database: the live replicas. */
export async function countMembers(client: pg.ClientBase, memberClass: number): Promise<number> {
  const { rows } = await client.query<{ members: number }>(
    `select count(*)::int as members from pg_locks
     where locktype = 'advisory' and granted and classid = $1::int::oid and objsubid = 2
       and database = (select oid from pg_database where datname = current_database())`,
    [memberClass],
  );
  return rows[0]?.members ?? 0;
}
