/**
 * The demo staff (an admin, a dispatcher and a read-only person): created when missing, found
 * again by e-mail, never changed afterwards (an operator's later change survives a re-seed).
 * They get no token here: the console mints one per session, and a person mints their own
 * personal token for the CLI.
 */
import type { Db } from "../db/database.ts";
import { findStaffByEmail, insertStaff } from "../staff/staff.repository.ts";
import { DEMO_STAFF } from "./demo-data.ts";

/** One demo person as var/demo.json lists it. */
export interface DemoStaff {
  id: number;
  email: string;
  name: string;
  role: "admin" | "dispatcher" | "read_only";
}

export async function seedDemoStaff(db: Db): Promise<DemoStaff[]> {
  const people: DemoStaff[] = [];
  for (const data of DEMO_STAFF) {
    const row = (await findStaffByEmail(db, data.email)) ?? (await insertStaff(db, data));
    people.push({ id: row.id, email: row.email, name: row.name, role: row.role });
  }
  return people;
}
