/**
 * The npm registry these machines reach serves only the Linux builds of packages that ship one
 * optional package per platform (biome, turbo...). `npm install` then leaves the other
 * platforms' packages out of package-lock.json, and `npm ci` refuses the lock as out of sync.
 * This records each missing optional platform package in the lock with its os/cpu and the
 * integrity the registry's metadata gives for it (the metadata is served, only the tarball is
 * not), so the lock is complete, every entry can be verified, and `npm ci` skips them as foreign
 * platforms as it would with a full registry. Run it (`npm run lock:stubs`) after an
 * `npm install` that changed the lock; plain JavaScript, so any Node runs it.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const lockPath = process.argv[2] ?? path.join(root, "package-lock.json");
const lock = JSON.parse(readFileSync(lockPath, "utf8"));

/** os, cpu and libc read off a platform package's name, e.g. `cli-linux-arm64-musl`, `darwin-64`. */
function platformOf(name) {
  const os = ["android", "darwin", "linux", "win32", "freebsd", "openbsd", "sunos", "aix", "netbsd", "windows"].find(
    (o) => new RegExp(`(^|[-/])${o}([-]|$)`).test(name),
  );
  const cpu = ["arm64", "x64", "ia32", "arm", "64", "s390x", "ppc64", "riscv64", "loong64"].find((c) =>
    new RegExp(`-${c}(-|$)`).test(name),
  );
  if (!os || !cpu) return null;
  const platform = {
    os: [os === "windows" ? "win32" : os],
    cpu: [cpu === "64" ? "x64" : cpu],
  };
  if (name.includes("musl")) platform.libc = ["musl"];
  return platform;
}

let added = 0;
for (const [location, entry] of Object.entries(lock.packages)) {
  for (const [name, range] of Object.entries(entry.optionalDependencies ?? {})) {
    const base = location ? `${location}/node_modules/${name}` : `node_modules/${name}`;
    if (lock.packages[base] || lock.packages[`node_modules/${name}`]) continue;
    const platform = platformOf(name);
    if (!platform) continue;
    lock.packages[`node_modules/${name}`] = { version: range, ...platform, dev: entry.dev, optional: true };
    added++;
  }
}

// Stubs recorded without an integrity (by this script's earlier versions, or just above) get it.
let verified = 0;
for (const [location, entry] of Object.entries(lock.packages)) {
  if (!location.startsWith("node_modules/") || entry.integrity || entry.link || !entry.optional) continue;
  const name = location.slice(location.lastIndexOf("node_modules/") + "node_modules/".length);
  const found = spawnSync("npm", ["view", `${name}@${entry.version}`, "dist.integrity", "version", "--json"], {
    encoding: "utf8",
  });
  if (found.status !== 0) throw new Error(`npm view ${name}@${entry.version} failed: ${found.stderr}`);
  const dist = JSON.parse(found.stdout);
  entry.version = dist.version;
  entry.integrity = dist["dist.integrity"];
  verified++;
}
writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
process.stdout.write(
  `lock-platform-stubs: ${added} foreign-platform packages recorded, ${verified} given their integrity\n`,
);
