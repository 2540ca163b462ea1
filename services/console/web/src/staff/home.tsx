/** The staff's home page: who is signed in, and what each role may do. */
import { useQuery } from "@tanstack/react-query";
import { staffSessionQuery } from "./staff-bff.ts";

const ROLE_RIGHTS = {
  admin: "You may read and change everything.",
  dispatcher: "You may read everything and change the fleet and the day's work (vehicles, messengers, rounds, tasks).",
  read_only: "You may read everything and change nothing.",
} as const;

export function StaffHomePage() {
  const { data } = useQuery(staffSessionQuery);
  if (!data?.staff) return null;
  return (
    <section aria-labelledby="staff-home">
      <h1 id="staff-home">Welcome, {data.staff.name}</h1>
      <p>
        Signed in as {data.staff.email}. {ROLE_RIGHTS[data.staff.role]} The operator API checks every change you make
        and records it in the audit log under your name.
      </p>
    </section>
  );
}
