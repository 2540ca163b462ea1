/** The frame of every page: the account's name, a test-account banner, navigation, sign-out. */
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { Link, Outlet, useLocation, useNavigate } from "@tanstack/react-router";
import { bff } from "../bff.ts";
import { sessionQuery } from "../session.ts";
import { StaffFrame } from "../staff/shell.tsx";
import { staffSessionQuery } from "../staff/staff-bff.ts";

/**
 * The staff's frame on a staff page of a signed-in staff person; the shop's frame anywhere else,
 * the staff's way in and their not-found page included, so that a shop user (or a stranger) sees
 * at /staff/… exactly what they see at any address that does not exist.
 */
export function Frame() {
  const { pathname } = useLocation();
  const staffPage = pathname === "/staff" || pathname.startsWith("/staff/");
  const staff = useQuery({ ...staffSessionQuery, enabled: staffPage });
  if (staffPage && staff.isPending) return null;
  return staffPage && staff.data?.signed_in ? <StaffFrame /> : <Layout />;
}

function Layout() {
  const session = useQuery(sessionQuery);
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const user = session.data?.user;
  const signOut = async (everywhere: boolean) => {
    await (everywhere ? bff.signOutEverywhere() : bff.signOut());
    await queryClient.invalidateQueries({ queryKey: ["session"] });
    await navigate({ to: "/sign-in" });
  };
  return (
    <>
      {user?.account.environment === "test" && (
        <div className="test-banner" role="status">
          Test account: nothing here is real or billed
        </div>
      )}
      <header className="top">
        <span className="brand">Delivery console</span>
        {user && (
          <nav aria-label="Main">
            <Link to="/">Account</Link>
            <Link to="/deliveries">Deliveries</Link>
            <Link to="/webhooks">Webhooks</Link>
            <Link to="/billing">Billing</Link>
          </nav>
        )}
        {user && (
          <div className="who">
            <span>
              {user.account.company_name} · {user.email}
            </span>
            <button type="button" onClick={() => signOut(false)}>
              Sign out
            </button>
            <button type="button" className="secondary" onClick={() => signOut(true)}>
              Sign out everywhere
            </button>
          </div>
        )}
      </header>
      <main>
        <Outlet />
      </main>
    </>
  );
}

export function NotFoundPage() {
  return (
    <section>
      <h1>Page not found</h1>
      <p>Nothing here: the address is wrong, or what it names belongs to another account.</p>
      <Link to="/">Back to the console</Link>
    </section>
  );
}
