/**
 * Builds the pages (Vite, web/ into dist/web) and checks the initial load's budget: the
 * JavaScript and CSS that index.html loads (scripts, stylesheets, module preloads), gzipped,
 * must stay under 250 KB; the build fails naming the size otherwise. Code split off for later
 * (the map) is not in the initial load and does not count.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "vite";

export const BUDGET_BYTES = 250 * 1000;

const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const outDir = path.join(packageDir, "dist", "web");

await build({ configFile: path.join(packageDir, "web", "vite.config.ts"), logLevel: "warn" });

const html = readFileSync(path.join(outDir, "index.html"), "utf8");
const initial = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+\.(?:js|css))"/g)].map((m) => m[1] as string);
let total = 0;
for (const file of new Set(initial)) total += gzipSync(readFileSync(path.join(outDir, file)), { level: 9 }).length;
const kb = (bytes: number) => `${(bytes / 1000).toFixed(1)} KB`;
if (total > BUDGET_BYTES) {
  process.stderr.write(
    `console build: the initial load is ${kb(total)} gzipped (${initial.length} files), over the budget of ${kb(BUDGET_BYTES)}\n`,
  );
  process.exit(1);
}
process.stdout.write(
  `console build: initial load ${kb(total)} gzipped of ${kb(BUDGET_BYTES)} (${initial.length} files)\n`,
);
