/**
 * The npm registry these machines reach serves only the Linux builds of packages that ship one
 * optional package per platform (biome, turbo...). `npm install` then leaves the other
 * platforms' packages out of package-lock.json, and `npm ci` refuses the lock as out of sync.
 * This adds each missing optional platform package to the lock with its os/cpu, so `npm ci`
 * sees the lock complete and skips them as foreign platforms, as it would with a full registry.
 * Plain JavaScript, so any Node runs it, before Node 24 is installed: `.ci/run` runs it ahead of
 * `npm ci`, and `npm run lock:stubs` after an `npm install` that changed the lock.
 */
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
writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
process.stdout.write(`lock-platform-stubs: ${added} foreign-platform packages recorded\n`);
