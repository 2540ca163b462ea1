/**
 * Run in the image build (deploy/images/Dockerfile): turns the service's `start` script, the one
 * source of how it runs (`node [V8 flags] <script>`), into the image's two entry files:
 *   - node.env: NODE_OPTIONS with those flags (read by `node --env-file`), empty when there are none;
 *   - main.js: imports the script, so the image's command is the same for every service.
 * Usage: node deploy/images/entry.ts <service> <runtime root>
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

interface StartCommand {
  flags: string[];
  script: string;
}

/** Parses `node [--flag ...] <script>`; anything else is refused, naming the script. */
function parseStart(start: string | undefined, service: string): StartCommand {
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

const [service, out] = process.argv.slice(2);
if (!service || !out) throw new Error("usage: node deploy/images/entry.ts <service> <runtime root>");
const manifest = JSON.parse(readFileSync(path.join("services", service, "package.json"), "utf8"));
const { flags, script } = parseStart(manifest.scripts?.start, service);
writeFileSync(path.join(out, "node.env"), flags.length > 0 ? `NODE_OPTIONS="${flags.join(" ")}"\n` : "");
const target = path.posix.join("services", service, script);
writeFileSync(
  path.join(out, "main.js"),
  `// The image's entry: services/${service}'s start script.\nimport "./${target}";\n`,
);
