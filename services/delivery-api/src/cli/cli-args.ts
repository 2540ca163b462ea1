/**
 * The operator CLI's argument parser: `--flag value`, `--flag=value`, bare boolean flags and
 * positionals, checked against the command's declared flags. Every mistake is a UsageError that
 * names the flag, so the CLI can print it and exit 2 before any request is sent.
 */
// The kit's own entry for it: the CLI starts without loading the service machinery.
import { nearestName } from "@dos/service-kit/nearest-name";

export class UsageError extends Error {
  override name = "UsageError";
}

/** `list` is comma-separated text: `--events a,b` → ["a", "b"]. */
export type FlagType = "string" | "integer" | "number" | "boolean" | "list";

export interface FlagSpec {
  type: FlagType;
  help: string;
  required?: boolean;
  /** Allowed values of a string flag. */
  values?: readonly string[];
  /** An empty value ("") means null: clears an optional field on update. */
  nullable?: boolean;
}

export type FlagValue = string | number | boolean | string[] | null;

export interface ParsedArgs {
  flags: Record<string, FlagValue>;
  positionals: string[];
}

/** Parses `args` against `specs`; `label` names the command in messages. */
export function parseArgs(args: string[], specs: Record<string, FlagSpec>, label: string): ParsedArgs {
  const flags: Record<string, FlagValue> = {};
  const positionals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? "";
    if (!arg.startsWith("--") || arg === "--") {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    const spec = specs[name];
    if (!spec) throw new UsageError(`unknown flag --${name} for '${label}'${suggestion(name, Object.keys(specs))}`);
    if (name in flags) throw new UsageError(`--${name} is given twice`);
    let raw: string | undefined = eq === -1 ? undefined : arg.slice(eq + 1);
    if (raw === undefined) {
      const next = args[i + 1];
      if (spec.type === "boolean") {
        if (next === "true" || next === "false") raw = args[++i];
        else raw = "true";
      } else if (next === undefined || (next.startsWith("--") && next.length > 2)) {
        throw new UsageError(`--${name} needs a value (${spec.help})`);
      } else {
        raw = args[++i];
      }
    }
    flags[name] = convert(name, raw ?? "", spec);
  }
  for (const [name, spec] of Object.entries(specs)) {
    if (spec.required && !(name in flags)) throw new UsageError(`--${name} is required (${spec.help})`);
  }
  return { flags, positionals };
}

function convert(name: string, raw: string, spec: FlagSpec): FlagValue {
  if (raw === "" && spec.nullable) return null;
  switch (spec.type) {
    case "boolean":
      if (raw === "true" || raw === "false") return raw === "true";
      throw new UsageError(`--${name} must be true or false (got '${raw}')`);
    case "integer":
      if (/^-?\d{1,15}$/.test(raw)) return Number(raw);
      throw new UsageError(`--${name} must be an integer (got '${raw}')`);
    case "list": {
      const items = raw.split(",").map((item) => item.trim());
      if (items.every((item) => item !== "")) return items;
      throw new UsageError(`--${name} must be comma-separated values without blanks (got '${raw}')`);
    }
    case "number": {
      const value = Number(raw);
      if (raw.trim() !== "" && Number.isFinite(value)) return value;
      throw new UsageError(`--${name} must be a number (got '${raw}')`);
    }
    default:
      if (spec.values && !spec.values.includes(raw)) {
        throw new UsageError(`--${name} must be one of ${spec.values.join(", ")} (got '${raw}')`);
      }
      if (raw === "") throw new UsageError(`--${name} must not be empty`);
      return raw;
  }
}

/** " (did you mean --x?)" for a near miss: same prefix or at most two edits away. */
function suggestion(name: string, known: string[]): string {
  const near = known.find((k) => k.startsWith(name) || name.startsWith(k)) ?? nearestName(name, known, 2);
  return near ? ` (did you mean --${near}?)` : "";
}
