/**
 * What the signed-in person's role lets them change, so that a page hides the buttons of what
 * they may not do. Only a courtesy: delivery-api decides every call by the person's role (its
 * table of roles), whatever a page shows, and its 403 is shown as a message when it comes.
 */
import { useQuery } from "@tanstack/react-query";
import { staffSessionQuery } from "./staff-bff.ts";

/** Accounts and all they hold are administrators'; the fleet and the day's dispatch are dispatchers' too. */
export type StaffArea = "accounts" | "fleet" | "dispatch";

export function useMayChange(area: StaffArea): boolean {
  const role = useQuery(staffSessionQuery).data?.staff?.role;
  if (role === "admin") return true;
  return (area === "fleet" || area === "dispatch") && role === "dispatcher";
}
