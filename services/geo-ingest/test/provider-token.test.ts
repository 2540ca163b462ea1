/** Optional provider authentication (beyond the spec): X-Provider-Token against the fleet entry's hash. */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { type Harness, postPosition, startHarness } from "./harness.ts";

describe("provider token", () => {
  let h: Harness;
  const token = "s3cret-provider-token";
  before(async () => {
    h = await startHarness("geo_token");
  });
  after(() => h.close());

  test("when the fleet entry carries a token hash, requests must carry the matching X-Provider-Token", async () => {
    const hash = createHash("sha256").update(token).digest("hex");
    await h.putVehicle({ vehicle_external_id: "VAN-TOKEN", active_round_id: 601, provider_token_sha256: hash });
    const body = (tracker: number) => ({ latitude: 1, longitude: 1, provider: "acme-trackers", tracker_id: tracker });

    const missing = await postPosition(h, "VAN-TOKEN", body(1));
    assert.equal(missing.statusCode, 401);
    assert.deepEqual(missing.json(), { errors: ["X-Provider-Token is required for this vehicle"] });
    const wrong = await postPosition(h, "VAN-TOKEN", body(1), { "x-provider-token": "guess" });
    assert.equal(wrong.statusCode, 401);
    assert.deepEqual(wrong.json(), { errors: ["X-Provider-Token is invalid"] });
    // Refused requests do not use up the tracker's rate.
    const right = await postPosition(h, "VAN-TOKEN", body(1), { "x-provider-token": token });
    assert.equal(right.statusCode, 200);
    assert.equal((await h.positions("VAN-TOKEN")).length, 1);
  });

  test("a vehicle without a token hash needs no header (the spec's behaviour)", async () => {
    await h.putVehicle({ vehicle_external_id: "VAN-OPEN", active_round_id: 602 });
    const response = await postPosition(h, "VAN-OPEN", { latitude: 1, longitude: 1, provider: "acme-trackers" });
    assert.equal(response.statusCode, 200);
  });
});
