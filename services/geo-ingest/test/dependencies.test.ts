/** PostgreSQL going away: positions are refused with 503 (never a 200 from memory), and served again when it returns. */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { startProxyTo, type TcpProxy, testInfra, waitFor } from "@dos/service-kit/testing";
import { type Harness, postPosition, startHarness } from "./harness.ts";

describe("PostgreSQL unreachable", () => {
  let proxy: TcpProxy;
  let h: Harness;
  before(async () => {
    proxy = await startProxyTo(testInfra().databaseUrl);
    h = await startHarness("geo_deps", {}, { databaseProxy: proxy });
  });
  after(async () => {
    // A failed before() leaves either unset; a proxy left listening would keep the run from ending.
    await proxy?.restore().catch(() => {});
    await h?.close();
    await proxy?.close();
  });

  test("a position that cannot be committed is answered 503 with Retry-After, and its retry is served", async () => {
    await h.putVehicle({ vehicle_external_id: "VAN-DB", active_round_id: 800 });
    const body = (offsetMs: number) => ({
      timestamp: new Date(Date.now() - offsetMs).toISOString(),
      latitude: 47.2,
      longitude: -1.55,
      provider: "acme-trackers",
      tracker_id: 3,
    });
    assert.equal((await postPosition(h, "VAN-DB", body(5000))).statusCode, 200);
    await new Promise((resolve) => setTimeout(resolve, 1000));

    await proxy.cut();
    const refused = await postPosition(h, "VAN-DB", body(3000));
    assert.equal(refused.statusCode, 503);
    assert.equal(refused.headers["retry-after"], "1");
    assert.deepEqual(refused.json(), { errors: ["position cannot be stored right now, retry later"] });
    assert.equal((await h.app.inject({ method: "GET", url: "/readyz" })).statusCode, 503);

    await proxy.restore();
    // The refused request gave its slot back: the tracker's immediate retry is stored, not a 429.
    const retried = await postPosition(h, "VAN-DB", body(3000));
    assert.equal(retried.statusCode, 200, retried.body);
    await waitFor(
      async () => (await h.app.inject({ method: "GET", url: "/readyz" })).statusCode === 200,
      5000,
      "ready",
    );
    assert.equal((await h.positions("VAN-DB")).length, 2);
  });
});
