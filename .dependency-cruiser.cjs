/**
 * The import rules of the monorepo, checked by `npm test` (scripts/test.ts) over every workspace
 * folder and the scripts. Each rule says why it exists; a violation names the import.
 */
const fs = require("node:fs");
const path = require("node:path");

const API = "^services/delivery-api/src/";
/** Wiring: what builds the app from its features. Nothing below it may import it. */
const COMPOSITION_ROOT = "(^(services|libs|tools)/[^/]+/src/(app|main)\\.ts$|\\.feature\\.ts$)";

/**
 * Commands: the files the packages' npm scripts run with node (a built `dist/src/x.js` stands for
 * `src/x.ts`). Like main.ts they are entry points, so they may build the app.
 */
function commandEntries() {
  const root = __dirname;
  const packageDirs = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"))
    .workspaces.flatMap((glob) => {
      if (!glob.endsWith("/*")) return [glob];
      const parent = glob.slice(0, -2);
      if (!fs.existsSync(path.join(root, parent))) return [];
      return fs.readdirSync(path.join(root, parent)).map((name) => `${parent}/${name}`);
    })
    .concat(".");
  const entries = [];
  for (const dir of packageDirs) {
    const manifest = path.join(root, dir, "package.json");
    if (!fs.existsSync(manifest)) continue;
    const scripts = JSON.parse(fs.readFileSync(manifest, "utf8")).scripts ?? {};
    for (const command of Object.values(scripts)) {
      for (const match of command.matchAll(/\bnode\b(?:\s+--?\S+)*\s+([^\s]+\.(?:ts|js|mjs))/g)) {
        const file = path.posix.normalize(path.posix.join(dir, match[1].replace(/^dist\/(.*)\.js$/, "$1.ts")));
        entries.push(`^${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`);
      }
    }
  }
  return [...new Set(entries)];
}

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "A cycle makes modules impossible to read, test or load one at a time.",
      from: {},
      to: { circular: true },
    },
    {
      name: "no-composition-root-import",
      severity: "error",
      comment:
        "Features are assembled by app.ts/main.ts/*.feature.ts; a feature never reaches back up into its wiring " +
        "(the commands npm scripts run are entry points, like main.ts).",
      from: { path: "^(services|libs|tools)/[^/]+/src/", pathNot: [COMPOSITION_ROOT, ...commandEntries()] },
      to: { path: COMPOSITION_ROOT },
    },
    {
      name: "no-service-imports-service",
      severity: "error",
      comment:
        "Services share nothing but the NATS bus and libs/contracts (plus the mechanisms of libs/service-kit). " +
        "Their tests may start another service as a real collaborator; their code may not import one.",
      from: { path: "^services/([^/]+)/src/" },
      to: { path: "^services/", pathNot: "^services/$1/" },
    },
    {
      name: "no-lib-imports-service",
      severity: "error",
      comment: "Libraries sit below every service.",
      from: { path: "^libs/" },
      to: { path: "^(services|e2e)/" },
    },
    {
      name: "api-lower-layers-import-no-feature",
      severity: "error",
      comment:
        "delivery-api's lower layers (http/ request input, lib/ model rules, db/ the schema) sit below " +
        "the features: they import only each other, and db/ the features' table files it assembles.",
      from: { path: `${API}(http|lib|db)/` },
      to: { path: API, pathNot: [`${API}(http|lib|db)/`, "\\.table\\.ts$"] },
    },
    {
      name: "api-services-take-plain-values",
      severity: "error",
      comment:
        "Services and repositories take plain values: request parsing (src/http, fastify) belongs to the routes.",
      from: { path: `${API}.*\\.(service|repository)\\.ts$` },
      to: { path: [`${API}http/`, "node_modules/fastify/"] },
    },
    {
      name: "api-sql-only-in-repositories",
      severity: "error",
      comment:
        "SQL lives in repositories (and the schema's table types in db/ and *.table.ts): anything else " +
        "may import kysely's types, never its runtime (sql, the builders' helpers).",
      from: { path: API, pathNot: ["\\.(repository|table)\\.ts$", `${API}db/`] },
      to: { path: "node_modules/kysely/", dependencyTypesNot: ["type-only"] },
    },
    {
      name: "api-routes-use-services",
      severity: "error",
      comment: "Routes reach the database through a service, never a repository or the schema's tables.",
      from: { path: `${API}.*routes\\.ts$` },
      to: { path: "\\.(repository|table)\\.ts$" },
    },
    {
      name: "api-dispatch-reaches-deliveries-via-port",
      severity: "error",
      comment:
        "Dispatch (rounds, tasks, messengers, vehicles, positions, fleet, tracking, SMS, simulator) " +
        "needs a few operations of deliveries, named in dispatch/deliveries.port.ts; it never imports deliveries/.",
      from: { path: `${API}dispatch/` },
      to: { path: `${API}deliveries/` },
    },
    {
      name: "api-deliveries-knows-only-the-dispatch-port",
      severity: "error",
      comment: "Deliveries implements dispatch's port and knows nothing else of dispatch.",
      from: { path: `${API}deliveries/` },
      to: { path: `${API}dispatch/`, pathNot: `${API}dispatch/deliveries\\.port\\.ts$` },
    },
    {
      name: "api-idempotency-below-deliveries",
      severity: "error",
      comment: "Idempotency keys are a mechanism the delivery routes use; it knows nothing of deliveries.",
      from: { path: `${API}idempotency/` },
      to: { path: `${API}deliveries/` },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    // Build output only; packages in node_modules are seen (not followed), so rules can name them.
    exclude: { path: "^((libs|services)/[^/]+|e2e)/dist/" },
    // swc parses TypeScript here (dependency-cruiser does not yet read it with TypeScript 7's
    // compiler) and keeps type-only imports: a layer is a layer for types too.
    parser: "swc",
    enhancedResolveOptions: {
      extensions: [".ts", ".js", ".mjs", ".json"],
      conditionNames: ["types", "import", "node", "default"],
      exportsFields: ["exports"],
    },
  },
};
