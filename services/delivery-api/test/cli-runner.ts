/** Runs the operator CLI (tools/ops-cli) as a child process, as an operator would, against a listening app. */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { OPS_TOKEN } from "./fixtures.ts";

const CLI = fileURLToPath(new URL("../../../tools/ops-cli/src/ops.ts", import.meta.url));

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  // biome-ignore lint/suspicious/noExplicitAny: parsed CLI output, checked field by field like response.json()
  json: () => any;
}

/** `npm run ops -- ...args` against `baseUrl` with the test operator token; `env` overrides. */
export function runOpsCli(baseUrl: string, args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return new Promise<CliRun>((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { env: { ...process.env, OPS_API_URL: baseUrl, OPS_TOKEN, ...env }, timeout: 20_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : -1) : 0;
        resolve({ code, stdout, stderr, json: () => JSON.parse(stdout) });
      },
    );
  });
}
