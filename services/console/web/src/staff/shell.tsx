/**
 * The staff's frame: who is signed in (name, role), the navigation of the staff's sections
 * (STAFF_SECTIONS, staff-pages.tsx: the one place a new page is added), and sign-out.
 */
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { Link, Outlet, useNavigate } from "@tanstack/react-router";
import { staffBff, staffSessionQuery } from "./staff-bff.ts";
import { STAFF_SECTIONS } from "./staff-pages.tsx";

const ROLE_LABELS = { admin: "Administrator", dispatcher: "Dispatcher", read_only: "Read-only" } as const;

export function StaffFrame() {
  const session = useQuery(staffSessionQuery);
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const staff = session.data?.staff;
  const signOut = async () => {
    await staffBff.signOut();
    queryClient.removeQueries({ queryKey: ["staff"] });
    await queryClient.invalidateQueries({ queryKey: ["staff-session"] });
    await navigate({ to: "/staff/sign-in" });
  };
  return (
    <>
      <header className="top staff">
        <Link to="/staff" className="brand">
          Delivery console · Staff
        </Link>
        {staff && (
          <nav aria-label="Staff">
            <ul>
              {STAFF_SECTIONS.filter((section) => !section.roles || section.roles.includes(staff.role)).map(
                (section) => (
                  <li key={section.label}>
                    {section.to ? (
                      <Link to={section.to} activeProps={{ "aria-current": "page" }}>
                        {section.label}
                      </Link>
                    ) : (
                      <span className="soon">
                        {section.label}
                        <span className="visually-hidden"> (not available yet)</span>
                      </span>
                    )}
                  </li>
                ),
              )}
            </ul>
          </nav>
        )}
        {staff && (
          <div className="who">
            <span>
              {staff.name} · {ROLE_LABELS[staff.role]}
            </span>
            <button type="button" onClick={signOut}>
              Sign out
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
