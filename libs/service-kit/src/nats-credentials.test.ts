/**
 * The NATS credentials a service is given (commonConfig's NATS_* variables): checked at boot with
 * the variable at fault named, and used for real against a nats-server of this test's own that
 * requires mutual TLS and a user (password or nkey).
 */
import assert from "node:assert/strict";
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { nkeys } from "@nats-io/nats-core";
import { Type } from "@sinclair/typebox";
import { ConfigError, commonConfig, loadConfig } from "./config.ts";
import { createLogger } from "./logger.ts";
import { connectNats, natsCredentials } from "./nats.ts";

const schema = Type.Object(commonConfig);
const base = { DATABASE_URL: "postgres://postgres@127.0.0.1:5432/db", NATS_URL: "nats://127.0.0.1:4222" };
const failure = (env: Record<string, string>) => {
  try {
    loadConfig(schema, { prefix: "NONE_", env: { ...base, ...env } });
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.message;
  }
  assert.fail("the configuration was accepted");
};

let dir: string;
before(() => {
  dir = mkdtempSync(path.join(tmpdir(), "dos-nats-credentials-"));
});
after(() => rmSync(dir, { recursive: true, force: true }));

test("the boot refuses half a pair, two methods at once, and files that cannot be read or are not credentials", () => {
  assert.equal(failure({ NATS_USER: "pricing" }), "NATS_PASSWORD is required with NATS_USER");
  assert.equal(failure({ NATS_PASSWORD: "x" }), "NATS_USER is required with NATS_PASSWORD");
  assert.equal(
    failure({ NATS_USER: "pricing", NATS_PASSWORD: "x", NATS_TOKEN: "t" }),
    "NATS_TOKEN is invalid: set only one of NATS_USER/NATS_PASSWORD, NATS_TOKEN",
  );
  assert.match(
    failure({ NATS_CREDS_FILE: path.join(dir, "absent.creds") }),
    /^NATS_CREDS_FILE is invalid: cannot read .*ENOENT/,
  );
  const notSeed = path.join(dir, "not-a-seed");
  writeFileSync(notSeed, "hunter2");
  const message = failure({ NATS_NKEY_SEED_FILE: notSeed });
  assert.equal(message, "NATS_NKEY_SEED_FILE is invalid: must hold a user nkey seed (SU…)");
  assert.ok(!message.includes("hunter2"), "the file's content is never shown");
  writeFileSync(path.join(dir, "plain.creds"), "not creds");
  assert.match(failure({ NATS_CREDS_FILE: path.join(dir, "plain.creds") }), /^NATS_CREDS_FILE is invalid: must hold/);
  assert.equal(failure({ NATS_TLS_CERT_FILE: notSeed }), "NATS_TLS_KEY_FILE is required with NATS_TLS_CERT_FILE");
  assert.match(failure({ NATS_TLS_CA_FILE: path.join(dir, "ca.pem") }), /^NATS_TLS_CA_FILE is invalid: cannot read/);
});

test("no variable set: no authentication and no TLS, unless the URL says tls://", () => {
  assert.deepEqual(natsCredentials({}), {});
  assert.deepEqual(natsCredentials({ NATS_URL: "tls://nats:4222" }), { tls: {} });
});

describe("against a nats-server requiring mutual TLS and a user", () => {
  const user = nkeys.createUser();
  let server: ChildProcess;
  let url: string;
  const files = () => ({
    ca: path.join(dir, "ca.pem"),
    cert: path.join(dir, "client.pem"),
    key: path.join(dir, "client-key.pem"),
    seed: path.join(dir, "user.nk"),
  });

  before(async () => {
    const openssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "ignore" });
    const days = ["-days", "2"];
    openssl(
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      "ca-key.pem",
      "-out",
      "ca.pem",
      ...days,
      "-subj",
      "/CN=test-ca",
    );
    for (const [name, extra] of [
      ["server", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
      ["client", "extendedKeyUsage=clientAuth"],
    ] as const) {
      openssl(
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        `${name}-key.pem`,
        "-out",
        `${name}.csr`,
        "-subj",
        `/CN=${name}`,
      );
      writeFileSync(path.join(dir, `${name}.ext`), `${extra}\n`);
      openssl(
        "x509",
        "-req",
        "-in",
        `${name}.csr`,
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca-key.pem",
        "-CAcreateserial",
        "-out",
        `${name}.pem`,
        ...days,
        "-extfile",
        `${name}.ext`,
      );
    }
    writeFileSync(files().seed, new TextDecoder().decode(user.getSeed()));
    const port = await freePort();
    url = `nats://127.0.0.1:${port}`;
    const config = {
      listen: `127.0.0.1:${port}`,
      tls: {
        cert_file: path.join(dir, "server.pem"),
        key_file: path.join(dir, "server-key.pem"),
        ca_file: files().ca,
        verify: true,
      },
      authorization: { users: [{ user: "pricing", password: "pricing-password" }, { nkey: user.getPublicKey() }] },
    };
    writeFileSync(path.join(dir, "server.conf"), JSON.stringify(config));
    server = spawn("nats-server", ["-c", path.join(dir, "server.conf")], { stdio: "ignore" });
    await waitListening(port);
  });
  after(async () => {
    if (server && server.exitCode === null) {
      const exited = new Promise((resolve) => server.once("exit", resolve));
      server.kill("SIGTERM");
      await exited;
    }
  });

  const logger = createLogger("nats-credentials-test", "silent");
  const tlsFiles = () => ({
    NATS_TLS_CA_FILE: files().ca,
    NATS_TLS_CERT_FILE: files().cert,
    NATS_TLS_KEY_FILE: files().key,
  });

  test("a user and password, or an nkey seed file, connect over TLS with the client certificate", async () => {
    for (const credentials of [
      { NATS_USER: "pricing", NATS_PASSWORD: "pricing-password" },
      { NATS_NKEY_SEED_FILE: files().seed },
    ]) {
      const nats = await connectNats(url, "test", logger, natsCredentials({ ...credentials, ...tlsFiles() }));
      await nats.check();
      assert.equal(nats.nc.info?.tls_required, true);
      await nats.drain();
    }
  });

  test("a wrong password, or no client certificate, is refused", async () => {
    await assert.rejects(
      connectNats(
        url,
        "test",
        logger,
        natsCredentials({ NATS_USER: "pricing", NATS_PASSWORD: "wrong", ...tlsFiles() }),
      ),
      /Authorization/i,
    );
    await assert.rejects(
      connectNats(
        url,
        "test",
        logger,
        natsCredentials({ NATS_USER: "pricing", NATS_PASSWORD: "pricing-password", NATS_TLS_CA_FILE: files().ca }),
      ),
    );
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

async function waitListening(port: number): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ port, host: "127.0.0.1" });
      socket.once("connect", () => resolve(socket.destroy() === socket));
      socket.once("error", () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`nats-server on ${port} did not start`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
