/**
 * From a command's argv to its HTTP request, with node:util's parseArgs. Every mistake is a
 * UsageError naming the flag, so the CLI prints it and exits 2 before any request is sent.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { nearestName } from "@dos/service-kit/nearest-name";
import type { Command, Flag, Method, Scalar } from "./commands.ts";

export class UsageError extends Error {
  override name = "UsageError";
}

export interface HttpRequest {
  method: Method;
  /** Under /ops/v1, with its query string. */
  path: string;
  body: unknown;
}

/** `--json` and `--file`: the whole body, which the body flags complete. */
const BODY_FLAGS = {
  json: { kind: "json", help: "the whole JSON body; the flags complete it" },
  file: { kind: "string", help: "a file holding the whole JSON body" },
} as const;

/** The flags `command` takes: its own, and `--json` / `--file` when it has a JSON body. */
export function flagsOf(command: Command): Flag[] {
  if (!command.jsonBody) return command.flags;
  const whole = Object.entries(BODY_FLAGS).map(
    ([name, flag]): Flag => ({
      name,
      at: "body",
      field: "",
      kind: flag.kind,
      nullable: false,
      required: false,
      help: flag.help,
    }),
  );
  return [...command.flags, ...whole];
}

export function buildRequest(command: Command, argv: string[]): HttpRequest {
  const flags = flagsOf(command);
  const given = parse(command, flags, argv);
  const whole = wholeBody(given.json, given.file);
  const path = command.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const flag = flags.find((f) => f.at === "path" && f.field === name);
    return encodeURIComponent(String(flag ? given[flag.name] : ""));
  });
  const query = new URLSearchParams();
  const body: Record<string, unknown> = whole ?? {};
  for (const flag of flags) {
    const raw = given[flag.name];
    if (raw === undefined) {
      // With a whole body, the API names what it lacks.
      if (flag.required && !(flag.at === "body" && whole))
        throw new UsageError(`--${flag.name} is required (${flag.help || flag.kind})`);
      continue;
    }
    if (flag.at === "path" || flag.field === "") continue;
    const value = convert(flag, raw);
    if (flag.at === "query") query.set(flag.field, String(value));
    else setField(body, flag.field, value);
  }
  const search = query.size > 0 ? `?${query}` : "";
  const writes = command.method !== "GET" && command.method !== "DELETE";
  const hasBody = Object.keys(body).length > 0 || whole !== undefined;
  return {
    method: command.method,
    path: `${path}${search}`,
    body: command.jsonBody && (hasBody || writes) ? body : undefined,
  };
}

type Given = Record<string, string | boolean | undefined>;

function parse(command: Command, flags: Flag[], argv: string[]): Given {
  const options = Object.fromEntries(
    flags.map((flag) => [flag.name, { type: flag.kind === "boolean" ? ("boolean" as const) : ("string" as const) }]),
  );
  const parsed = (() => {
    try {
      return parseArgs({
        args: argv,
        options,
        strict: true,
        allowPositionals: false,
        allowNegative: true,
        tokens: true,
      });
    } catch (error) {
      throw new UsageError(usageMessage(command, flags, error as Error & { code?: string }));
    }
  })();
  const seen = new Set<string>();
  for (const token of parsed.tokens) {
    if (token.kind !== "option") continue;
    if (seen.has(token.name)) throw new UsageError(`--${token.name} is given twice`);
    seen.add(token.name);
  }
  return parsed.values as Given;
}

/** parseArgs' message, rewritten to name the flag as the user wrote it and what it wants. */
function usageMessage(command: Command, flags: Flag[], error: Error & { code?: string }): string {
  const quoted = /'([^']+)'/.exec(error.message)?.[1] ?? "";
  const name =
    quoted
      .replace(/^--?/, "")
      .replace(/ <value>$/, "")
      .split("=")[0] ?? "";
  const flag = flags.find((f) => f.name === name || `no-${f.name}` === name);
  switch (error.code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION":
      return `unknown flag --${name} for '${command.name}'${didYouMean(
        name,
        flags.map((f) => f.name),
      )}`;
    case "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL":
      return `unexpected argument '${quoted}'`;
    case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE":
      if (flag?.kind === "boolean") return `--${flag.name} takes no value: give --${flag.name} or --no-${flag.name}`;
      return `--${name} needs a value (${flag?.help || flag?.kind || "see help"})`;
    default:
      return error.message;
  }
}

/** " (did you mean --company-name?)" for a near miss: a prefix, or a few edits away. */
function didYouMean(name: string, known: string[]): string {
  const near = known.find((k) => k.startsWith(name)) ?? nearestName(name, known, 2);
  return near ? ` (did you mean --${near}?)` : "";
}

function wholeBody(json: unknown, file: unknown): Record<string, unknown> | undefined {
  if (json !== undefined && file !== undefined) throw new UsageError("give --json or --file, not both");
  let source = typeof json === "string" ? json : undefined;
  if (typeof file === "string") {
    try {
      source = readFileSync(file, "utf8");
    } catch (error) {
      throw new UsageError(`--file cannot be read: ${(error as Error).message}`);
    }
  }
  if (source === undefined) return undefined;
  const flag = file !== undefined ? "--file" : "--json";
  let body: unknown;
  try {
    body = JSON.parse(source);
  } catch (error) {
    throw new UsageError(`${flag} is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw new UsageError(`${flag} must be a JSON object`);
  return body as Record<string, unknown>;
}

function convert(flag: Flag, raw: string | boolean): unknown {
  if (typeof raw === "boolean") return raw;
  if (raw === "" && flag.nullable) return null;
  switch (flag.kind) {
    case "list": {
      const items = raw.split(",").map((item) => item.trim());
      if (items.some((item) => item === ""))
        throw new UsageError(`--${flag.name} must be comma-separated values without blanks (got '${raw}')`);
      return items.map((item) => scalar(flag, item, flag.items?.[0]?.kind ?? "string"));
    }
    case "records":
      return records(flag, raw);
    case "json":
      try {
        return JSON.parse(raw);
      } catch (error) {
        throw new UsageError(`--${flag.name} is not valid JSON: ${(error as Error).message}`);
      }
    case "boolean":
      return raw;
    default:
      return scalar(flag, raw, flag.kind);
  }
}

function scalar(flag: Flag, raw: string, kind: Scalar): unknown {
  if (flag.values && !flag.values.includes(raw)) {
    throw new UsageError(`--${flag.name} must be one of ${flag.values.join(", ")} (got '${raw}')`);
  }
  switch (kind) {
    case "integer":
      if (/^-?\d{1,15}$/.test(raw)) return Number(raw);
      throw new UsageError(`--${flag.name} must be an integer (got '${raw}')`);
    case "number": {
      const value = Number(raw);
      if (raw.trim() !== "" && Number.isFinite(value)) return value;
      throw new UsageError(`--${flag.name} must be a number (got '${raw}')`);
    }
    case "boolean":
      if (raw === "true" || raw === "false") return raw === "true";
      throw new UsageError(`--${flag.name} must be true or false (got '${raw}')`);
    default:
      return raw;
  }
}

/** `75001:48.86:2.34,75002:48.87:2.34` (each item's values in field order), or a JSON array. */
function records(flag: Flag, raw: string): unknown {
  if (raw.trimStart().startsWith("[")) return convert({ ...flag, kind: "json" }, raw);
  const fields = flag.items ?? [];
  return raw.split(",").map((item) => {
    const parts = item.trim().split(":");
    if (parts.length !== fields.length || parts.some((part) => part === "")) {
      throw new UsageError(`--${flag.name}: '${item}' must be ${recordShape(flag)} (or give a JSON array)`);
    }
    return Object.fromEntries(fields.map((field, i) => [field.name, scalar(flag, parts[i] ?? "", field.kind)]));
  });
}

/** `POSTAL_CODE:LATITUDE:LONGITUDE`. */
export function recordShape(flag: Flag): string {
  return (flag.items ?? []).map((field) => field.name.toUpperCase()).join(":");
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
