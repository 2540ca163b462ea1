/**
 * `npm run ops -- <command> [flags]`: the operator CLI, a thin client of the operator API.
 * OPS_API_URL (default: delivery-api's internal listener, var/demo.json's ops_url, else
 * http://localhost:3004) and OPS_TOKEN (else var/ops-token, which
 * `npm start` writes). Exit codes: 0 done, 1 refused by the API, 2 usage error, 3 unreachable.
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { type FlagSpec, type ParsedArgs, parseArgs, UsageError } from "./cli-args.ts";
import { RAW_REQUEST_FLAGS, rawRequest } from "./ops-bodies.ts";
import { COMMANDS, type CommandSpec, type Method } from "./ops-commands.ts";

export const EXIT = { ok: 0, refused: 1, usage: 2, unreachable: 3 } as const;
const REQUEST_TIMEOUT_MS = 15_000;
const TOKEN_FILE = fileURLToPath(new URL("../../../../var/ops-token", import.meta.url));
const DEMO_FILE = fileURLToPath(new URL("../../../../var/demo.json", import.meta.url));
/** API_OPS_PORT's default: the operator API answers only on delivery-api's internal listener. */
const DEFAULT_OPS_URL = "http://localhost:3004";

interface Io {
  out(text: string): void;
  err(text: string): void;
}

export async function runOps(argv: string[], env: NodeJS.ProcessEnv, io: Io): Promise<number> {
  const [resource, action, ...rest] = argv;
  if (resource === undefined || resource === "help" || resource === "--help" || resource === "-h") {
    const topic = [action, rest[0]].filter(Boolean).join(" ");
    if (topic && !COMMANDS[topic] && topic !== "request") {
      io.err(`ops: unknown command '${topic}'; run \`npm run ops -- help\`\n`);
      return EXIT.usage;
    }
    io.out(topic ? commandHelp(topic) : overview());
    return EXIT.ok;
  }
  let request: { method: Method; path: string; body: unknown };
  try {
    if (resource === "request") {
      request = rawRequest(parseArgs([action ?? "", ...rest].filter(Boolean), RAW_REQUEST_FLAGS, "request"));
    } else {
      const name = `${resource} ${action ?? ""}`.trim();
      const spec = COMMANDS[name];
      if (!spec) throw new UsageError(unknownCommand(resource, action));
      request = buildRequest(spec, parseArgs(rest, spec.flags, name));
    }
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    // The help of the command given, when there is one; the list of commands otherwise.
    const name = resource === "request" ? "request" : `${resource} ${action ?? ""}`.trim();
    const topic = name === "request" || COMMANDS[name] ? ` ${name}` : "";
    io.err(`ops: ${error.message}\nrun \`npm run ops -- help${topic}\` for usage\n`);
    return EXIT.usage;
  }
  const token = env.OPS_TOKEN || (existsSync(TOKEN_FILE) ? readFileSync(TOKEN_FILE, "utf8").trim() : "");
  if (!token) {
    io.err("ops: OPS_TOKEN is not set and var/ops-token does not exist; export OPS_TOKEN=<operator token>\n");
    return EXIT.usage;
  }
  return send(request, (env.OPS_API_URL || demoOpsUrl() || DEFAULT_OPS_URL).replace(/\/+$/, ""), token, io);
}

/** Where `npm start` put the operator API (START_PORT may move it), when it wrote var/demo.json. */
function demoOpsUrl(): string | undefined {
  try {
    const demo = JSON.parse(readFileSync(DEMO_FILE, "utf8")) as { ops_url?: unknown };
    return typeof demo.ops_url === "string" ? demo.ops_url : undefined;
  } catch {
    return undefined;
  }
}

function buildRequest(spec: CommandSpec, args: ParsedArgs) {
  if (!spec.positionals && args.positionals.length > 0) {
    throw new UsageError(`unexpected argument '${args.positionals[0]}'`);
  }
  const path = spec.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(args.flags[name])));
  const query = new URLSearchParams();
  const body: Record<string, unknown> = {};
  let hasBody = false;
  for (const [name, value] of Object.entries(args.flags)) {
    const flag = spec.flags[name];
    if (!flag || flag.at === "path") continue;
    const field = flag.field ?? name;
    if (flag.at === "query") {
      query.set(field, String(value));
      continue;
    }
    hasBody = true;
    setField(body, field, value);
  }
  const search = query.size > 0 ? `?${query}` : "";
  const writes = spec.method === "POST" || spec.method === "PUT" || spec.method === "PATCH";
  const built = spec.body ? spec.body(args) : hasBody || writes ? body : undefined;
  return { method: spec.method, path: `${path}${search}`, body: built };
}

function setField(target: Record<string, unknown>, dotted: string, value: unknown) {
  const [head, ...tail] = dotted.split(".");
  if (!head) return;
  if (tail.length === 0) {
    target[head] = value;
    return;
  }
  if (typeof target[head] !== "object" || target[head] === null) target[head] = {};
  setField(target[head] as Record<string, unknown>, tail.join("."), value);
}

async function send(request: { method: Method; path: string; body: unknown }, baseUrl: string, token: string, io: Io) {
  const url = `${baseUrl}/ops/v1${request.path}`;
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
    return EXIT.refused;
  }
  if (body === undefined) {
    io.err(`ops: done (${response.status})\n`);
    return EXIT.ok;
  }
  io.out(`${JSON.stringify(body, null, 2)}\n`);
  const notice = request.method === "POST" ? SHOWN_ONCE.find(([path]) => path.test(request.path)) : undefined;
  if (notice) io.err(`ops: ${notice[1]}\n`);
  return EXIT.ok;
}

/** Answers to these POSTs hold a secret the API never shows again. */
const SHOWN_ONCE: Array<[RegExp, string]> = [
  [/\/tokens$/, "store this token now; it is not shown again (only its hint is kept)"],
  [/\/webhooks(\/[^/]+\/rotate)?$/, "store this signing secret now; it is not shown again"],
];

function unknownCommand(resource: string, action: string | undefined): string {
  const actions = Object.keys(COMMANDS)
    .filter((name) => name.startsWith(`${resource} `))
    .map((name) => name.slice(resource.length + 1));
  if (actions.length === 0) return `unknown command '${resource}'`;
  return `'${resource}' needs one of: ${actions.join(", ")}${action ? ` (got '${action}')` : ""}`;
}

function overview(): string {
  const rows = Object.entries(COMMANDS).map(([name, spec]) => `  ${name.padEnd(24)} ${spec.summary}`);
  return [
    "Usage: npm run ops -- <command> [flags]",
    "",
    "Operator CLI of delivery-api. Environment: OPS_API_URL (default var/demo.json's ops_url, else http://localhost:3004),",
    "OPS_TOKEN (default: the content of var/ops-token, written by npm start).",
    "",
    "Commands:",
    ...rows,
    `  ${"request METHOD PATH".padEnd(24)} any operator route under /ops/v1 [--json TEXT | --file PATH]`,
    `  ${"help [COMMAND]".padEnd(24)} this text, or the flags of one command`,
    "",
    "Exit codes: 0 done, 1 refused by the API (its errors are printed), 2 usage error, 3 API unreachable.",
    "",
  ].join("\n");
}

function commandHelp(name: string): string {
  if (name === "request") {
    return `Usage: npm run ops -- request METHOD PATH [--json TEXT | --file PATH]\n${flagLines(RAW_REQUEST_FLAGS)}\n`;
  }
  const spec = COMMANDS[name] as CommandSpec;
  const usage = `Usage: npm run ops -- ${name} [flags]${spec.positionals ? ` ${spec.positionals}` : ""}`;
  return `${usage}\n${spec.summary}\n\nFlags:\n${flagLines(spec.flags)}\n`;
}

const FLAG_VALUE_NAMES = {
  string: "STRING",
  integer: "INTEGER",
  number: "NUMBER",
  boolean: "BOOLEAN",
  list: "A,B,...",
} as const;

function flagLines(flags: Record<string, FlagSpec>): string {
  return Object.entries(flags)
    .map(([name, flag]) => {
      const value = flag.type === "boolean" ? "[true|false]" : (flag.values?.join("|") ?? FLAG_VALUE_NAMES[flag.type]);
      const usage = `  --${name} ${value}`.padEnd(40);
      return `${usage} ${flag.help}${flag.required ? " (required)" : ""}`;
    })
    .join("\n");
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const io: Io = { out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text) };
  process.exitCode = await runOps(process.argv.slice(2), process.env, io);
}
