/**
 * The staff's pages, in one place. To add one: write its component (a file of its own in
 * staff/), add its route to staffPages, and set its section's `to` in STAFF_SECTIONS (an entry
 * without `to` is shown, not linked). Every route here sits in the staff shell (router.tsx):
 * it exists for a staff session only, and the BFF answers its URL with 404 to anyone else.
 */
import { type AnyRoute, createRoute, lazyRouteComponent } from "@tanstack/react-router";
import { auditSearchOf } from "./audit-search.ts";
import { StaffHomePage } from "./home.tsx";
import type { StaffRole } from "./staff-bff.ts";
import { PersonalTokensPage } from "./tokens.tsx";

export function staffPages<TShell extends AnyRoute>(getParentRoute: () => TShell) {
  return [
    createRoute({ getParentRoute, path: "/staff", component: StaffHomePage }),
    createRoute({ getParentRoute, path: "/staff/tokens", component: PersonalTokensPage }),
    // Chunks of their own, loaded when opened: a shop user's initial load does not carry them.
    createRoute({
      getParentRoute,
      path: "/staff/audit",
      validateSearch: auditSearchOf,
      component: lazyRouteComponent(() => import("./audit.tsx"), "AuditPage"),
    }),
    createRoute({
      getParentRoute,
      path: "/staff/system",
      component: lazyRouteComponent(() => import("./system.tsx"), "SystemPage"),
    }),
    createRoute({
      getParentRoute,
      path: "/staff/people",
      component: lazyRouteComponent(() => import("./people.tsx"), "StaffPeoplePage"),
    }),
  ] as const;
}

type StaffPath = ReturnType<typeof staffPages<AnyRoute>>[number]["path"];

/** The shell's navigation, in order; `roles`: shown to these roles only (the API refuses the others anyway). */
export const STAFF_SECTIONS: ReadonlyArray<{ label: string; to?: StaffPath; roles?: readonly StaffRole[] }> = [
  { label: "Accounts" },
  { label: "Fleet" },
  { label: "Dispatch" },
  { label: "Live map" },
  { label: "System", to: "/staff/system" },
  { label: "Audit", to: "/staff/audit" },
  { label: "Staff", to: "/staff/people", roles: ["admin"] },
  { label: "Personal tokens", to: "/staff/tokens" },
];
