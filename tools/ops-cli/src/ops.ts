/**
 * `npm run ops -- <group> <action> [flags]`: the operator CLI, a thin client of the operator API
 * whose commands come from its OpenAPI document (libs/contracts/openapi/ops-v1.json, see
 * commands.ts). Where it sends them: OPS_API_URL, else var/demo.json's ops_url (written by
 * `npm start`), else http://localhost:<API_OPS_PORT, default 3004>. The token: OPS_TOKEN (the
 * automation token, or a person's personal staff token `dos_staff_…`: the requests are then theirs,
 * with their role, in the audit log under their name), else API_OPS_TOKEN, else var/ops-token.
 * Exit codes: 0 done, 1 refused by the API, 2 usage error, 3 unreachable.
 */
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { API_PREFIX, type Command, commandsOf, type Flag, type Method, type OpenApiDocument } from "./commands.ts";
import { buildRequest, flagsOf, type HttpRequest, recordShape, UsageError } from "./request.ts";

export const EXIT = { ok: 0, refused: 1, usage: 2, unreachable: 3 } as const;
const REQUEST_TIMEOUT_MS = 15_000;
/** The repository (var/ holds what `npm start` wrote), from src/ or dist/src/ alike. */
const ROOT = repositoryRoot(new URL(".", import.meta.url));
/** API_OPS_PORT's default: the operator API answers only on delivery-api's internal listener. */
const DEFAULT_OPS_PORT = "3004";
const USAGE = "npm run ops --";
const TOKEN_HINT =
  "OPS_TOKEN must be the automation token or a live personal staff token (dos_staff_…, from the console's " +
  "Personal tokens page); a revoked or expired token, or a disabled person's, is refused";

export interface Io {
  out(text: string): void;
  err(text: string): void;
}

/** The operator API's document, as committed beside the contracts. */
export function loadDocument(): OpenApiDocument {
  const file = createRequire(import.meta.url).resolve("@dos/contracts/openapi/ops-v1.json");
  return JSON.parse(readFileSync(file, "utf8")) as OpenApiDocument;
}

export async function runOps(
  argv: string[],
  env: NodeJS.ProcessEnv,
  io: Io,
  document: OpenApiDocument = loadDocument(),
): Promise<number> {
  const commands = commandsOf(document);
  const [group, action, ...rest] = argv;
  const wantsHelp = rest.includes("--help") || rest.includes("-h");
  if (group === undefined || group === "help" || group === "--help" || group === "-h") {
    const topic = [action, rest[0]].filter(Boolean).join(" ");
    if (!topic) {
      io.out(overview(commands));
      return EXIT.ok;
    }
    return help(commands, topic, io);
  }
  if (wantsHelp || action === "--help" || action === "-h") {
    return help(commands, action === "--help" || action === "-h" ? group : `${group} ${action}`, io);
  }
  const name = `${group} ${action ?? ""}`.trim();
  let request: HttpRequest;
  try {
    if (group === "request") request = rawRequest([action ?? "", ...rest].filter(Boolean));
    else {
      const command = commands.get(name);
      if (!command) throw new UsageError(unknownCommand(commands, group, action));
      request = buildRequest(command, rest);
    }
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    const topic = group === "request" ? " request" : commands.has(name) ? ` ${name}` : "";
    io.err(`ops: ${error.message}\nrun \`${USAGE} help${topic}\` for usage\n`);
    return EXIT.usage;
  }
  const token = env.OPS_TOKEN || env.API_OPS_TOKEN || readToken();
  if (!token) {
    io.err(
      "ops: neither OPS_TOKEN nor API_OPS_TOKEN is set and var/ops-token does not exist; export OPS_TOKEN=<operator token>\n",
    );
    return EXIT.usage;
  }
  return send(request, opsUrl(env), token, io);
}

function repositoryRoot(from: URL): URL {
  for (let dir = from; dir.pathname !== "/"; dir = new URL("..", dir)) {
    if (existsSync(new URL("package-lock.json", dir))) return dir;
  }
  return new URL(`file://${process.cwd()}/`);
}

function readToken(): string {
  const file = fileURLToPath(new URL("var/ops-token", ROOT));
  return existsSync(file) ? readFileSync(file, "utf8").trim() : "";
}

/** OPS_API_URL, else where `npm start` put the operator API, else the default port on this host. */
function opsUrl(env: NodeJS.ProcessEnv): string {
  if (env.OPS_API_URL) return env.OPS_API_URL.replace(/\/+$/, "");
  try {
    const demo = JSON.parse(readFileSync(new URL("var/demo.json", ROOT), "utf8")) as { ops_url?: unknown };
    if (typeof demo.ops_url === "string") return demo.ops_url.replace(/\/+$/, "");
  } catch {
    // No demo file: npm start has not run here.
  }
  return `http://localhost:${env.API_OPS_PORT || DEFAULT_OPS_PORT}`;
}

async function send(request: HttpRequest, baseUrl: string, token: string, io: Io) {
  const url = `${baseUrl}${API_PREFIX}${request.path}`;
  let response: Response;
  try {
    response = await fetch(url, {
      method: request.method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(request.body !== undefined ? { "content-type": "application/json" } : {}),
      },
      body: request.body !== undefined ? JSON.stringify(request.body) : undefined,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  } catch (error) {
    const { cause } = error as { cause?: { code?: string; message?: string } };
    const reason = cause?.code ?? cause?.message ?? (error as Error).message;
    io.err(`ops: cannot reach the operator API at ${baseUrl} (${reason}); is delivery-api running? (OPS_API_URL)\n`);
    return EXIT.unreachable;
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = text === "" ? undefined : JSON.parse(text);
  } catch {
    body = text;
  }
  if (!response.ok) {
    const errors = (body as { errors?: unknown })?.errors;
    const lines = Array.isArray(errors) ? errors.map(String) : [String(text).slice(0, 500) || response.statusText];
    io.err(`ops: ${request.method} ${url} answered ${response.status}:\n${lines.map((l) => `  - ${l}\n`).join("")}`);
    if (response.status === 401) io.err(`ops: ${TOKEN_HINT}\n`);
    return EXIT.refused;
  }
  if (body === undefined) {
    io.err(`ops: done (${response.status})\n`);
    return EXIT.ok;
  }
  io.out(`${JSON.stringify(body, null, 2)}\n`);
  // The API marks an answer holding a secret it never shows again (a token, a signing secret).
  if (response.headers.get("cache-control")?.includes("no-store")) {
    io.err("ops: store the secret in this answer now; it is not shown again\n");
  }
  return EXIT.ok;
}

/** `request METHOD PATH [--json TEXT | --file PATH]`: any operator route, as it is. */
function rawRequest(args: string[]): HttpRequest {
  const [method, path, ...rest] = args;
  const methods: Method[] = ["GET", "POST", "PUT", "PATCH", "DELETE"];
  const upper = method?.toUpperCase() as Method;
  if (!methods.includes(upper)) throw new UsageError(`request needs a method first: ${methods.join(", ")}`);
  if (!path?.startsWith("/")) throw new UsageError(`request needs a path under ${API_PREFIX}, e.g. /accounts/1/zones`);
  const raw: Command = { name: "request", summary: "", method: upper, path: "", flags: [], jsonBody: true };
  const request = buildRequest(raw, rest);
  const given = rest.some((arg) => /^--(json|file)(=|$)/.test(arg));
  return { method: upper, path, body: given ? request.body : undefined };
}

function unknownCommand(commands: Map<string, Command>, group: string, action: string | undefined): string {
  const actions = [...commands.keys()]
    .filter((name) => name.startsWith(`${group} `))
    .map((name) => name.slice(group.length + 1));
  if (actions.length === 0) return `unknown command '${group}'`;
  return `'${group}' needs one of: ${actions.join(", ")}${action ? ` (got '${action}')` : ""}`;
}

function help(commands: Map<string, Command>, topic: string, io: Io): number {
  if (topic === "request") {
    io.out(
      `Usage: ${USAGE} request METHOD PATH [--json TEXT | --file PATH]\nAny operator route under ${API_PREFIX}, as it is.\n`,
    );
    return EXIT.ok;
  }
  const command = commands.get(topic);
  if (command) {
    io.out(commandHelp(command));
    return EXIT.ok;
  }
  const group = [...commands.values()].filter((c) => c.name.startsWith(`${topic} `));
  if (group.length > 0) {
    io.out(`${group.map(row).join("\n")}\n`);
    return EXIT.ok;
  }
  io.err(`ops: unknown command '${topic}'; run \`${USAGE} help\`\n`);
  return EXIT.usage;
}

const row = (command: Command) => `  ${command.name.padEnd(30)} ${command.summary}`;

function overview(commands: Map<string, Command>): string {
  return [
    `Usage: ${USAGE} <group> <action> [flags]`,
    "",
    "Operator CLI of delivery-api: one command per operation of the operator API's OpenAPI document.",
    "Environment: OPS_API_URL (default var/demo.json's ops_url, else http://localhost:<API_OPS_PORT, 3004>),",
    "OPS_TOKEN or API_OPS_TOKEN (default: the content of var/ops-token, written by npm start): the automation",
    "token, or your personal staff token (dos_staff_…, from the console): then you act with your role, audited as you.",
    "",
    "Commands:",
    ...[...commands.values()].sort((a, b) => a.name.localeCompare(b.name)).map(row),
    `  ${"request METHOD PATH".padEnd(30)} any operator route under ${API_PREFIX} [--json TEXT | --file PATH]`,
    `  ${"help [COMMAND]".padEnd(30)} this text, or the flags of one command (also: COMMAND --help)`,
    "",
    "Exit codes: 0 done, 1 refused by the API (its errors are printed), 2 usage error, 3 API unreachable.",
    "",
  ].join("\n");
}

function commandHelp(command: Command): string {
  const lines = [
    `Usage: ${USAGE} ${command.name} [flags]`,
    command.summary,
    ...(command.description ? ["", command.description] : []),
    "",
    `${command.method} ${API_PREFIX}${command.path}`,
    "",
    "Flags:",
    ...flagsOf(command).map(flagLine),
    "",
  ];
  return lines.join("\n");
}

const VALUE_NAMES = { string: "STRING", integer: "INTEGER", number: "NUMBER", json: "JSON", list: "A,B,..." } as const;

function flagLine(flag: Flag): string {
  const listOf = flag.kind === "list" && flag.values ? `any of ${flag.values.join(", ")}` : "";
  const value =
    flag.kind === "boolean"
      ? ""
      : flag.kind === "records"
        ? ` ${recordShape(flag)},...`
        : flag.at === "path" && /(^id|Id|_id)$/.test(flag.field)
          ? " ID"
          : ` ${(!listOf && flag.values?.join("|")) || VALUE_NAMES[flag.kind]}`;
  const name = flag.kind === "boolean" ? `--${flag.name} | --no-${flag.name}` : `--${flag.name}${value}`;
  const help = [listOf, flag.help].filter(Boolean).join("; ");
  return `  ${name.padEnd(44)} ${help}${flag.required ? " (required)" : ""}`.trimEnd();
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const io: Io = { out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text) };
  process.exitCode = await runOps(process.argv.slice(2), process.env, io);
}
