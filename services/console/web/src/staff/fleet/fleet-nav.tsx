/** The fleet's two lists, vehicles and messengers, and the way between them. */
import { Link } from "@tanstack/react-router";

export function FleetNav() {
  return (
    <nav aria-label="Fleet" className="subnav">
      <ul>
        <li>
          <Link to="/staff/fleet" activeOptions={{ exact: true }} activeProps={{ "aria-current": "page" }}>
            Vehicles
          </Link>
        </li>
        <li>
          <Link to="/staff/fleet/messengers" activeProps={{ "aria-current": "page" }}>
            Messengers
          </Link>
        </li>
      </ul>
    </nav>
  );
}
