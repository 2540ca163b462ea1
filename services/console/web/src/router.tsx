/**
 * The console's routes. Pages behind sign-in redirect to /sign-in when no session is live; the
 * session (who, which account) is one cached query that sign-in and sign-out refresh. The staff's
 * pages (staff/staff-pages.tsx) are not found without a staff session: no redirect, nothing that
 * tells a shop user or a stranger they exist; their way in is /staff/sign-in.
 */
import type { QueryClient } from "@tanstack/react-query";
import { createRootRouteWithContext, createRoute, createRouter, notFound, redirect } from "@tanstack/react-router";
import { BillingPage } from "./pages/billing.tsx";
import { DeliveriesPage, DeliveryPage, listSearchOf, NewDeliveryPage } from "./pages/deliveries.tsx";
import { HomePage } from "./pages/home.tsx";
import { Frame, NotFoundPage } from "./pages/layout.tsx";
import { InvitationPage, ResetCompletePage, ResetRequestPage, SignInPage } from "./pages/sign-in.tsx";
import { WebhooksPage } from "./pages/webhooks.tsx";
import { sessionQuery } from "./session.ts";
import { StaffEnrolmentPage, StaffInvitationPage } from "./staff/enrolment.tsx";
import { StaffSecondFactorPage, StaffSignInPage } from "./staff/sign-in.tsx";
import { staffSessionQuery } from "./staff/staff-bff.ts";
import { staffPages } from "./staff/staff-pages.tsx";

interface RouterContext {
  queryClient: QueryClient;
}

const rootRoute = createRootRouteWithContext<RouterContext>()({
  component: Frame,
  notFoundComponent: NotFoundPage,
});

/** Pages of a signed-in person: the session must be live, else to the sign-in page. */
const signedIn = createRoute({
  getParentRoute: () => rootRoute,
  id: "signed-in",
  beforeLoad: async ({ context }) => {
    const session = await context.queryClient.ensureQueryData(sessionQuery);
    if (!session.signed_in) throw redirect({ to: "/sign-in" });
  },
});

const home = createRoute({ getParentRoute: () => signedIn, path: "/", component: HomePage });
const deliveries = createRoute({
  getParentRoute: () => signedIn,
  path: "/deliveries",
  validateSearch: listSearchOf,
  component: DeliveriesPage,
});
const newDelivery = createRoute({
  getParentRoute: () => signedIn,
  path: "/deliveries/new",
  component: NewDeliveryPage,
});
const delivery = createRoute({
  getParentRoute: () => signedIn,
  path: "/deliveries/$deliveryId",
  component: DeliveryPage,
});
const webhooks = createRoute({ getParentRoute: () => signedIn, path: "/webhooks", component: WebhooksPage });
const billing = createRoute({ getParentRoute: () => signedIn, path: "/billing", component: BillingPage });
const signIn = createRoute({ getParentRoute: () => rootRoute, path: "/sign-in", component: SignInPage });
const invitation = createRoute({ getParentRoute: () => rootRoute, path: "/invitation", component: InvitationPage });
const resetRequest = createRoute({
  getParentRoute: () => rootRoute,
  path: "/password-reset",
  component: ResetRequestPage,
});
const resetComplete = createRoute({
  getParentRoute: () => rootRoute,
  path: "/password-reset/new",
  component: ResetCompletePage,
});

/** The staff's shell: its pages (staff-pages.tsx) exist for a live staff session only. */
const staffShell = createRoute({
  getParentRoute: () => rootRoute,
  id: "staff",
  beforeLoad: async ({ context }) => {
    const session = await context.queryClient.ensureQueryData(staffSessionQuery);
    if (!session.signed_in) throw notFound();
  },
});
const staffSignIn = createRoute({
  getParentRoute: () => rootRoute,
  path: "/staff/sign-in",
  component: StaffSignInPage,
});
const staffSecondFactor = createRoute({
  getParentRoute: () => rootRoute,
  path: "/staff/sign-in/verify",
  component: StaffSecondFactorPage,
});
const staffInvitation = createRoute({
  getParentRoute: () => rootRoute,
  path: "/staff/invitation",
  component: StaffInvitationPage,
});
const staffEnrolment = createRoute({
  getParentRoute: () => rootRoute,
  path: "/staff/enrolment",
  component: StaffEnrolmentPage,
});

const routeTree = rootRoute.addChildren([
  signedIn.addChildren([home, deliveries, newDelivery, delivery, webhooks, billing]),
  signIn,
  invitation,
  resetRequest,
  resetComplete,
  staffShell.addChildren(staffPages(() => staffShell)),
  staffSignIn,
  staffSecondFactor,
  staffInvitation,
  staffEnrolment,
]);

export function createConsoleRouter(queryClient: QueryClient) {
  return createRouter({ routeTree, context: { queryClient }, defaultPreload: false });
}
