import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { after, before, describe, test } from "node:test";
import { SERVICES, serviceEntry } from "../../scripts/system.ts";
import { bootSystemUnderTest, type SystemUnderTest } from "../src/system.ts";

describe("the four services as separate processes", () => {
  let system: SystemUnderTest;
  before(async () => {
    system = await bootSystemUnderTest();
  });
  after(async () => system.teardown());

  test("each answers /livez, /readyz and /metrics", async () => {
    for (const service of system.services) {
      assert.equal((await fetch(`${service.url}/livez`)).status, 200, service.spec.name);
      const ready = (await (await fetch(`${service.url}/readyz`)).json()) as {
        status: string;
        checks: Record<string, string>;
      };
      assert.equal(ready.status, "ready", service.spec.name);
      assert.equal(ready.checks.postgres, "ok", service.spec.name);
      assert.equal(ready.checks.nats, "ok", service.spec.name);
      const metrics = await (await fetch(`${service.url}/metrics`)).text();
      assert.match(metrics, new RegExp(`process_cpu_user_seconds_total\\{service="${service.spec.name}"\\}`));
    }
  });

  test("SIGTERM stops each one with exit code 0 within 10 s", async () => {
    const results = await system.stop();
    for (const result of results) {
      assert.equal(result.code, 0, `${result.name} exited ${result.code ?? result.signal}`);
      assert.ok(result.ms < 10_000, `${result.name} took ${result.ms} ms`);
    }
  });
});

/**
 * Only a guard against a boot that hangs: these boots end in well under a second, but on a
 * loaded 2-core machine starting Node alone took more than 10 s once, and killed the test.
 */
const BOOT_GUARD_MS = 30_000;

describe("configuration errors", () => {
  for (const spec of SERVICES) {
    test(`${spec.name} with a malformed DATABASE_URL prints one clear line and exits 78`, () => {
      const result = spawnSync(process.execPath, [serviceEntry(spec, "main")], {
        env: {
          PATH: process.env.PATH,
          DATABASE_URL: "mysql://root:secret@localhost/x",
          NATS_URL: "nats://127.0.0.1:4222",
          API_OPS_TOKEN: "an-operator-token-long-enough-0123",
          WEBHOOKS_SECRET_KEY: "a-webhooks-secret-key-long-enough-0123",
        },
        encoding: "utf8",
        timeout: BOOT_GUARD_MS,
      });
      assert.equal(result.status, 78);
      assert.equal(result.stdout, "");
      assert.equal(
        result.stderr,
        'configuration error: DATABASE_URL is invalid: must be a postgres:// URL (got "mysql://root:***@localhost/x")\n',
      );
    });
  }

  test("an unreachable database stops the boot with one log line naming DATABASE_URL", () => {
    const pricing = SERVICES.find((spec) => spec.name === "pricing");
    assert.ok(pricing);
    const result = spawnSync(process.execPath, [serviceEntry(pricing, "main")], {
      env: {
        PATH: process.env.PATH,
        DATABASE_URL: "postgres://postgres@127.0.0.1:1/none",
        NATS_URL: "nats://127.0.0.1:4222",
      },
      encoding: "utf8",
      timeout: BOOT_GUARD_MS,
    });
    assert.equal(result.status, 1);
    const lines = result.stdout.trim().split("\n");
    assert.equal(lines.length, 1, result.stdout);
    const line = JSON.parse(lines[0] ?? "{}");
    assert.equal(line.level, "fatal");
    assert.match(line.error, /^cannot reach PostgreSQL \(DATABASE_URL\): connect ECONNREFUSED/);
    assert.equal(result.stderr, "");
  });
});
