/**
 * The staff's pages, in one place. To add one: write its component (a file of its own in
 * staff/), add its route to staffPages, and set its section's `to` in STAFF_SECTIONS (an entry
 * without `to` is shown, not linked). Every route here sits in the staff shell (router.tsx):
 * it exists for a staff session only, and the BFF answers its URL with 404 to anyone else.
 */
import { type AnyRoute, createRoute } from "@tanstack/react-router";
import { StaffHomePage } from "./home.tsx";
import { PersonalTokensPage } from "./tokens.tsx";

export function staffPages<TShell extends AnyRoute>(getParentRoute: () => TShell) {
  return [
    createRoute({ getParentRoute, path: "/staff", component: StaffHomePage }),
    createRoute({ getParentRoute, path: "/staff/tokens", component: PersonalTokensPage }),
  ] as const;
}

type StaffPath = ReturnType<typeof staffPages<AnyRoute>>[number]["path"];

/** The shell's navigation, in order. */
export const STAFF_SECTIONS: ReadonlyArray<{ label: string; to?: StaffPath }> = [
  { label: "Accounts" },
  { label: "Fleet" },
  { label: "Dispatch" },
  { label: "Live map" },
  { label: "System" },
  { label: "Audit" },
  { label: "Personal tokens", to: "/staff/tokens" },
];
