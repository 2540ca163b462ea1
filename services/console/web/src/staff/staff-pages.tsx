/**
 * The staff's pages, in one place. To add one: write its component (a file of its own in
 * staff/), add its route to staffPages, and set its section's `to` in STAFF_SECTIONS (an entry
 * without `to` is shown, not linked). Every route here sits in the staff shell (router.tsx):
 * it exists for a staff session only, and the BFF answers its URL with 404 to anyone else.
 */
import { type AnyRoute, createRoute, lazyRouteComponent } from "@tanstack/react-router";
import { accountsSearchOf } from "./accounts/accounts-search.ts";
import { auditSearchOf } from "./audit-search.ts";
import { dispatchSearchOf } from "./dispatch/dispatch-search.ts";
import { StaffHomePage } from "./home.tsx";
import type { StaffRole } from "./staff-bff.ts";
import { PersonalTokensPage } from "./tokens.tsx";

/**
 * The sections' pages are chunks of their own, loaded when a staff person opens one: a shop's
 * people, who load the same app, never download them (the initial load's budget, README).
 */
const accounts = (name: keyof typeof import("./accounts/index.ts")) =>
  lazyRouteComponent(() => import("./accounts/index.ts"), name);
const fleet = (name: keyof typeof import("./fleet/index.ts")) =>
  lazyRouteComponent(() => import("./fleet/index.ts"), name);
const dispatch = (name: keyof typeof import("./dispatch/index.ts")) =>
  lazyRouteComponent(() => import("./dispatch/index.ts"), name);

export function staffPages<TShell extends AnyRoute>(getParentRoute: () => TShell) {
  return [
    createRoute({ getParentRoute, path: "/staff", component: StaffHomePage }),
    createRoute({ getParentRoute, path: "/staff/tokens", component: PersonalTokensPage }),
    createRoute({
      getParentRoute,
      path: "/staff/accounts",
      validateSearch: accountsSearchOf,
      component: accounts("AccountsPage"),
    }),
    createRoute({ getParentRoute, path: "/staff/accounts/new", component: accounts("NewAccountPage") }),
    createRoute({ getParentRoute, path: "/staff/accounts/$accountId", component: accounts("AccountGeneralPage") }),
    createRoute({
      getParentRoute,
      path: "/staff/accounts/$accountId/places",
      component: accounts("AccountPlacesPage"),
    }),
    createRoute({ getParentRoute, path: "/staff/accounts/$accountId/zones", component: accounts("AccountZonesPage") }),
    createRoute({
      getParentRoute,
      path: "/staff/accounts/$accountId/package-types",
      component: accounts("AccountPackageTypesPage"),
    }),
    createRoute({
      getParentRoute,
      path: "/staff/accounts/$accountId/tariffs",
      component: accounts("AccountTariffsPage"),
    }),
    createRoute({ getParentRoute, path: "/staff/fleet", component: fleet("VehiclesPage") }),
    createRoute({ getParentRoute, path: "/staff/fleet/vehicles/$vehicleId", component: fleet("VehiclePage") }),
    createRoute({ getParentRoute, path: "/staff/fleet/messengers", component: fleet("MessengersPage") }),
    createRoute({
      getParentRoute,
      path: "/staff/dispatch",
      validateSearch: dispatchSearchOf,
      component: dispatch("DispatchBoardPage"),
    }),
    createRoute({ getParentRoute, path: "/staff/dispatch/rounds/$roundId", component: dispatch("RoundPage") }),
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
      path: "/staff/live",
      component: lazyRouteComponent(() => import("./live/live-map-page.tsx"), "LiveMapPage"),
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
  { label: "Accounts", to: "/staff/accounts" },
  { label: "Fleet", to: "/staff/fleet" },
  { label: "Dispatch", to: "/staff/dispatch" },
  { label: "Live map", to: "/staff/live" },
  { label: "System", to: "/staff/system" },
  { label: "Audit", to: "/staff/audit" },
  { label: "Staff", to: "/staff/people", roles: ["admin"] },
  { label: "Personal tokens", to: "/staff/tokens" },
];
