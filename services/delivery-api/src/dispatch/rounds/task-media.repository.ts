/** Proof images of tasks (signatures and pictures). */
import type { Insertable } from "kysely";
import type { Db } from "../../db/database.ts";
import type { TaskMediaTable } from "./rounds.table.ts";

export async function deleteSignature(db: Db, taskId: number) {
  await db.deleteFrom("task_media").where("task_id", "=", taskId).where("kind", "=", "signature").execute();
}

export async function countPictures(db: Db, taskId: number): Promise<number> {
  const count = await db
    .selectFrom("task_media")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .where("task_id", "=", taskId)
    .where("kind", "=", "picture")
    .executeTakeFirstOrThrow();
  return Number(count.n);
}

export async function insertTaskMedia(db: Db, values: Insertable<TaskMediaTable>) {
  await db.insertInto("task_media").values(values).execute();
}

/** The task's proof images, oldest first. */
export function listTaskMedia(db: Db, taskId: number) {
  return db
    .selectFrom("task_media")
    .select(["id", "kind"])
    .where("task_id", "=", taskId)
    .orderBy("created_at")
    .execute();
}

/** The proof images of these tasks, oldest first (a task holds 11 at most: 10 pictures and a signature). */
export function mediaOfTasks(db: Db, taskIds: number[]) {
  if (taskIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom("task_media")
    .select(["id", "task_id", "kind", "content_type"])
    .where("task_id", "in", taskIds)
    .orderBy("created_at")
    .orderBy("id")
    .execute();
}

/** A proof image by its id. */
export function findTaskMedia(db: Db, id: string) {
  return db.selectFrom("task_media").select(["content_type", "bytes"]).where("id", "=", id).executeTakeFirst();
}
