/**
 * The images as a cluster runs them, on this machine's podman (scripts/images.ts builds them):
 * root filesystem read-only with a tmpfs on /tmp (the manifests' emptyDir), uid 65532, no
 * capabilities, the host's network so that they reach the machine's PostgreSQL and NATS on loopback.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { PODMAN_ENV } from "../../scripts/images.ts";

/** podman with the project's containers.conf; its standard output, trimmed. */
export function podman(args: string[]): string {
  return execFileSync("podman", args, {
    env: PODMAN_ENV,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    maxBuffer: 64 * 1024 * 1024,
  }).trim();
}

/** podman's exit code and output, for the runs that are expected to fail. */
export function podmanResult(args: string[]): { status: number | null; output: string } {
  const result = spawnSync("podman", args, { env: PODMAN_ENV, encoding: "utf8" });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

const LOCKED_DOWN = [
  "--read-only",
  "--tmpfs=/tmp:rw,size=64m,mode=1777",
  "--user=65532:65532",
  "--cap-drop=all",
  "--security-opt=no-new-privileges",
  "--network=host",
];

function envArgs(env: Record<string, string>): string[] {
  return Object.entries(env).flatMap(([name, value]) => ["--env", `${name}=${value}`]);
}

/** Runs a command of the image to its end (the migrations Job's, say); throws with its output on failure. */
export function runToCompletion(image: string, command: string[], env: Record<string, string>): string {
  const [entrypoint, ...args] = command as [string, ...string[]];
  const result = podmanResult([
    "run",
    "--rm",
    ...LOCKED_DOWN,
    ...envArgs(env),
    `--entrypoint=${entrypoint}`,
    image,
    ...args,
  ]);
  if (result.status !== 0) throw new Error(`${image} ${command.join(" ")} exited ${result.status}:\n${result.output}`);
  return result.output;
}

/** Starts the image's own command in the background; returns the container's name. */
export function startContainer(image: string, name: string, env: Record<string, string>): string {
  podman(["run", "--detach", "--name", name, ...LOCKED_DOWN, ...envArgs(env), image]);
  return name;
}

/** Stops (SIGTERM, then the grace period) and removes containers, ignoring those already gone. */
export function removeContainers(names: string[]): void {
  if (names.length > 0) podmanResult(["rm", "--force", "--time", "15", ...names]);
}
