/**
 * Which resource an operator request is about, taken from its route (pure rules, unit-tested in
 * test/audit-resource.test.ts). Route segments are static names and parameters; `me` after `staff`
 * counts as a parameter (the caller's own staff id).
 * - type: the static segments up to the last parameter, joined by `/` (`/vehicles/:id` →
 *   `vehicles`; `/rounds/:id/start` → `rounds`; `/accounts/:accountId/zones` → `accounts`;
 *   `/staff/me/tokens/:tokenId` → `staff/tokens`), and id: that parameter's value;
 * - a route that creates (answers 201): every static segment (`/accounts/:accountId/users` →
 *   `accounts/users`), and id: the `id` of the answer;
 * - a route without parameters (`/fleet/rebuild`): every static segment, no id.
 * The resource read before and after a change (its "GET counterpart") is the longest prefix of
 * the route that has a GET route and holds a parameter (or is the route itself):
 * `PATCH /vehicles/:id` → `GET /vehicles/:id`, `POST /rounds/:id/start` → `GET /rounds/:id`,
 * `DELETE /staff/:id/tokens/:tokenId` → `GET /staff/:id/tokens`; a create has none.
 */

const isParameter = (segments: string[], i: number) =>
  segments[i]?.startsWith(":") === true || (segments[i] === "me" && segments[i - 1] === "staff");

export interface Resource {
  type: string;
  id: string | null;
}

/**
 * The resource of `route` (without the /ops/v1 prefix). `created` is the answer's id of a route
 * that creates (undefined while unknown or when the create was refused).
 */
export function resourceOf(
  route: string,
  params: Record<string, string>,
  me: number | null,
  creates: boolean,
  created?: string | number,
): Resource {
  const segments = route.split("/").filter(Boolean);
  const statics = (end: number) =>
    segments
      .slice(0, end)
      .filter((_s, i) => !isParameter(segments, i))
      .join("/");
  if (creates) return { type: statics(segments.length), id: created === undefined ? null : String(created) };
  let last = -1;
  for (let i = 0; i < segments.length; i++) if (isParameter(segments, i)) last = i;
  if (last < 0) return { type: statics(segments.length), id: null };
  const segment = segments[last] as string;
  const value = segment === "me" ? (me === null ? null : String(me)) : (params[segment.slice(1)] ?? null);
  return { type: statics(last), id: value };
}

/** The route (without prefix) whose GET reads the resource of `route`, or null. */
export function counterpartOf(route: string, hasGet: (route: string) => boolean): string | null {
  const segments = route.split("/").filter(Boolean);
  for (let end = segments.length; end > 0; end--) {
    const prefix = `/${segments.slice(0, end).join("/")}`;
    const holdsParameter = segments.slice(0, end).some((_s, i) => isParameter(segments, i));
    if ((end === segments.length || holdsParameter) && hasGet(prefix)) return prefix;
  }
  return null;
}

/** The concrete path of a route pattern for these parameters (`/rounds/:id` → `/rounds/12`). */
export function pathOf(route: string, params: Record<string, string>): string {
  return route.replace(/:([A-Za-z0-9_]+)/g, (_m, name: string) => encodeURIComponent(params[name] ?? ""));
}
