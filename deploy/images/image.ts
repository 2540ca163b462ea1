/**
 * Run in the image build (deploy/images/Dockerfile), from the repository's (or the pruned tree's) root:
 *   node deploy/images/image.ts scopes [<service>]
 *     the workspaces the image holds: the service's, and those its package.json names under
 *     `image.include` (delivery-api's carries the operator CLI), for turbo prune and the SBOM;
 *     without a service, those of every image (the graph the images' shared build stage compiles);
 *   node deploy/images/image.ts assemble <service> <out>
 *     the runtime tree in <out>: the root manifest, and each pruned workspace's package.json with
 *     what its `files` lists (default: dist); then the image's two entry files, from the service's
 *     `start` script (`node [V8 flags] <script>`), the one source of how it runs:
 *       node.env: NODE_OPTIONS with those flags (read by `node --env-file`), empty without flags;
 *       main.js: imports the script, so the image's command is the same for every service.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

interface Manifest {
  name: string;
  workspaces?: string[];
  files?: string[];
  scripts?: { start?: string };
  image?: { include?: string[] };
}

const readManifest = (dir: string): Manifest => JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"));

function scopes(service: string): string[] {
  const manifest = readManifest(path.join("services", service));
  return [manifest.name, ...(manifest.image?.include ?? [])];
}

/** Parses `node [--flag ...] <script>`; anything else is refused, naming the script. */
function parseStart(start: string | undefined, service: string): { flags: string[]; script: string } {
  const words = (start ?? "").trim().split(/\s+/);
  const script = words.at(-1);
  const flags = words.slice(1, -1);
  if (
    words[0] !== "node" ||
    !script ||
    script.startsWith("-") ||
    !flags.every((flag) => /^--[\w-]+(=\S+)?$/.test(flag))
  ) {
    throw new Error(
      `services/${service}/package.json: scripts.start must be "node [--flag ...] <script>", got ${JSON.stringify(start)}`,
    );
  }
  return { flags, script };
}

function assemble(service: string, out: string): void {
  mkdirSync(out, { recursive: true });
  cpSync("package.json", path.join(out, "package.json"));
  // turbo prune lists the pruned workspaces' folders one by one in the root manifest.
  for (const dir of readManifest(".").workspaces ?? []) {
    for (const entry of ["package.json", ...(readManifest(dir).files ?? ["dist"])]) {
      if (existsSync(path.join(dir, entry)))
        cpSync(path.join(dir, entry), path.join(out, dir, entry), { recursive: true });
    }
  }
  const { flags, script } = parseStart(readManifest(path.join("services", service)).scripts?.start, service);
  writeFileSync(path.join(out, "node.env"), flags.length > 0 ? `NODE_OPTIONS="${flags.join(" ")}"\n` : "");
  const target = path.posix.join("services", service, script);
  writeFileSync(
    path.join(out, "main.js"),
    `// The image's entry: services/${service}'s start script.\nimport "./${target}";\n`,
  );
}

/** Every service's scopes: the images are those of the workspaces under services/. */
function allScopes(): string[] {
  const services = readdirSync("services").filter((name) => existsSync(path.join("services", name, "package.json")));
  return [...new Set(services.flatMap(scopes))];
}

const [command, service, out] = process.argv.slice(2);
if (command === "scopes") process.stdout.write((service ? scopes(service) : allScopes()).join(" "));
else if (command === "assemble" && service && out) assemble(service, out);
else throw new Error("usage: node deploy/images/image.ts scopes [<service>] | assemble <service> <out>");
