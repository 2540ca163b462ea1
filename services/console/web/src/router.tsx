/**
 * The console's routes. Pages behind sign-in redirect to /sign-in when no session is live; the
 * session (who, which account) is one cached query that sign-in and sign-out refresh.
 */
import type { QueryClient } from "@tanstack/react-query";
import { createRootRouteWithContext, createRoute, createRouter, redirect } from "@tanstack/react-router";
import { BillingPage } from "./pages/billing.tsx";
import { DeliveriesPage, DeliveryPage, listSearchOf, NewDeliveryPage } from "./pages/deliveries.tsx";
import { HomePage } from "./pages/home.tsx";
import { Layout, NotFoundPage } from "./pages/layout.tsx";
import { InvitationPage, ResetCompletePage, ResetRequestPage, SignInPage } from "./pages/sign-in.tsx";
import { WebhooksPage } from "./pages/webhooks.tsx";
import { sessionQuery } from "./session.ts";

interface RouterContext {
  queryClient: QueryClient;
}

const rootRoute = createRootRouteWithContext<RouterContext>()({
  component: Layout,
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

const routeTree = rootRoute.addChildren([
  signedIn.addChildren([home, deliveries, newDelivery, delivery, webhooks, billing]),
  signIn,
  invitation,
  resetRequest,
  resetComplete,
]);

export function createConsoleRouter(queryClient: QueryClient) {
  return createRouter({ routeTree, context: { queryClient }, defaultPreload: false });
}
