/**
 * Roles on the operator API, route by route: every route the app registers under /ops/v1 has a
 * rule in the one table (src/staff/ops-access.ts), the rule is what the staff contract says, and
 * delivery-api refuses over HTTP what a role may not do — 403 naming the role, audited as refused.
 * A new route without a rule fails the first test.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { OPS_ACCESS, ruleOf } from "../src/staff/ops-access.ts";
import { OPS_TOKEN, startTestApi, type TestApi } from "./fixtures.ts";
import { createTestStaff, type TestStaff } from "./staff-fixtures.ts";

/** The fleet and the day's work, which dispatchers change (the contract's list). */
const DISPATCH = new Set(["vehicles", "messengers", "rounds", "tasks", "deliveries", "fleet"]);

/** The rule the contract gives a route, written from its words, independently of the table. */
function contractRule(method: string, url: string): string {
  if (url.startsWith("/staff/me/tokens")) return "staff";
  const reads = method === "GET" || method === "HEAD";
  if (url === "/staff/me") return "read_only";
  if (url.startsWith("/staff")) return "admin";
  if (reads) return "read_only";
  const first = url.split("/")[1] ?? "";
  if (DISPATCH.has(first) || url.endsWith("/courier_simulator")) return "dispatcher";
  return "admin";
}

describe("operator API roles", () => {
  let api: TestApi;
  let people: Record<"admin" | "dispatcher" | "read_only", TestStaff>;
  before(async () => {
    api = await startTestApi();
    people = {
      admin: await createTestStaff(api, "admin"),
      dispatcher: await createTestStaff(api, "dispatcher"),
      read_only: await createTestStaff(api, "read_only"),
    };
  });
  after(async () => api.close());

  const routes = () => api.app.opsRouteRegistry.routes.filter((route) => route.method !== "HEAD");

  test("every registered operator route has its rule in the table, and the table names no other route", () => {
    const registered = routes().map((route) => `${route.method} ${route.url}`);
    assert.ok(registered.length >= 70, `only ${registered.length} routes seen`);
    const missing = registered.filter((key) => !(key in OPS_ACCESS));
    assert.deepEqual(missing, [], "routes without a rule in src/staff/ops-access.ts");
    const stale = Object.keys(OPS_ACCESS).filter((key) => !registered.includes(key));
    assert.deepEqual(stale, [], "rules for routes that do not exist");
  });

  test("each route's rule is the contract's: reads for all, the fleet and the day's work for dispatchers", () => {
    for (const { method, url } of routes()) {
      assert.equal(ruleOf(method, url), contractRule(method, url), `${method} ${url}`);
    }
    // HEAD follows GET.
    assert.equal(ruleOf("HEAD", "/vehicles"), "read_only");
    assert.equal(ruleOf("HEAD", "/staff"), "admin");
  });

  test("over HTTP, each role and automation is refused exactly the routes above it, with 403 naming the role", async () => {
    const callers = [
      { who: "read_only", rank: 0, token: people.read_only.token, staff: true },
      { who: "dispatcher", rank: 1, token: people.dispatcher.token, staff: true },
      { who: "automation", rank: 2, token: OPS_TOKEN, staff: false },
    ];
    const rank: Record<string, number> = { read_only: 0, dispatcher: 1, admin: 2 };
    const before = await api.db.selectFrom("audit_log").select("id").execute();
    let refusedChanges = 0;
    for (const { method, url, audited } of routes()) {
      const rule = ruleOf(method, url);
      // Path parameters are never looked at before the role is: any value does.
      const path = url.replace(/:[A-Za-z0-9_]+/g, "1");
      const shown = `${method} /ops/v1${url.replace(/:([A-Za-z0-9_]+)/g, "{$1}")}`;
      for (const caller of callers) {
        const refused = rule === "staff" ? !caller.staff : caller.rank < (rank[rule] ?? 2);
        const response = await api.app.inject({
          method: method as "GET",
          url: `/ops/v1${path}`,
          headers: { authorization: `Bearer ${caller.token}` },
        });
        if (refused) {
          assert.equal(response.statusCode, 403, `${caller.who} ${shown}: ${response.body}`);
          const [message] = response.json().errors as string[];
          assert.ok(message?.startsWith(`${caller.who} may not ${shown}`), `${message}`);
          // A phone position is telemetry, left out of the audit log even when refused.
          if (method !== "GET" && audited) refusedChanges++;
        } else {
          assert.notEqual(response.statusCode, 403, `${caller.who} ${shown}`);
          assert.notEqual(response.statusCode, 401, `${caller.who} ${shown}`);
        }
      }
    }
    assert.ok(refusedChanges > 60, `${refusedChanges}`);
    // Every refused change is in the audit log as refused, with who tried.
    const refusals = await api.db
      .selectFrom("audit_log")
      .select(["actor_name", "status_code", "before", "after"])
      .where("status_code", "=", 403)
      .where(
        "id",
        ">",
        before.reduce((max, row) => Math.max(max, row.id), 0),
      )
      .execute();
    assert.equal(refusals.length, refusedChanges);
    assert.ok(refusals.every((row) => row.before === null && row.after === null));
    assert.deepEqual(
      new Set(refusals.map((row) => row.actor_name)),
      new Set([people.read_only.name, people.dispatcher.name, "automation"]),
    );
  });
});
