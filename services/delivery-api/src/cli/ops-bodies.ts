/** Request bodies the operator CLI builds from something other than flags: zones, JSON, raw requests. */
import { readFileSync } from "node:fs";
import { type ParsedArgs, UsageError } from "./cli-args.ts";
import type { CommandFlag, Method } from "./ops-commands.ts";

/** A body given as JSON, inline or from a file (tariffs and raw requests). */
export const jsonBodyFlags: Record<string, CommandFlag> = {
  json: { type: "string", help: "the JSON body" },
  file: { type: "string", help: "a file holding the JSON body" },
};
export function jsonBody(args: ParsedArgs, required: boolean): unknown {
  const { json, file } = args.flags;
  if (json !== undefined && file !== undefined) throw new UsageError("give --json or --file, not both");
  let source = typeof json === "string" ? json : undefined;
  if (typeof file === "string") {
    try {
      source = readFileSync(file, "utf8");
    } catch (error) {
      throw new UsageError(`--file cannot be read: ${(error as Error).message}`);
    }
  }
  if (source === undefined) {
    if (required) throw new UsageError("--json or --file is required (the JSON body)");
    return undefined;
  }
  try {
    return JSON.parse(source);
  } catch (error) {
    throw new UsageError(`--${file !== undefined ? "file" : "json"} is not valid JSON: ${(error as Error).message}`);
  }
}

/** `75001:48.8626:2.3363` → a zone. */
export function zonesFromPositionals(args: ParsedArgs) {
  if (args.positionals.length === 0) throw new UsageError("give at least one zone as POSTAL_CODE:LATITUDE:LONGITUDE");
  return {
    zones: args.positionals.map((item) => {
      const [postal_code, latitude, longitude, ...rest] = item.split(":");
      const lat = Number(latitude);
      const lon = Number(longitude);
      if (
        !postal_code ||
        rest.length > 0 ||
        !latitude ||
        !longitude ||
        !Number.isFinite(lat) ||
        !Number.isFinite(lon)
      ) {
        throw new UsageError(`zone '${item}' must be POSTAL_CODE:LATITUDE:LONGITUDE, e.g. 75001:48.8626:2.3363`);
      }
      return { postal_code, latitude: lat, longitude: lon };
    }),
  };
}

/** `request METHOD PATH [--json|--file]`: any operator route, for what no command covers. */
export function rawRequest(args: ParsedArgs): { method: Method; path: string; body: unknown } {
  const [method, path, ...rest] = args.positionals;
  const methods: Method[] = ["GET", "POST", "PUT", "PATCH", "DELETE"];
  const upper = method?.toUpperCase() as Method;
  if (!methods.includes(upper)) throw new UsageError(`request needs a method first: ${methods.join(", ")}`);
  if (!path?.startsWith("/")) throw new UsageError("request needs a path under /ops/v1, e.g. /accounts/1/zones");
  if (rest.length > 0) throw new UsageError(`unexpected argument '${rest[0]}'`);
  return { method: upper, path, body: jsonBody(args, false) };
}
export const RAW_REQUEST_FLAGS = jsonBodyFlags;

/** `accounts rate-limit`: both --quota and --window, or --default alone. */
export function rateLimitBody(args: ParsedArgs): unknown {
  const { quota, window } = args.flags;
  if (args.flags.default === true) {
    if (quota !== undefined || window !== undefined)
      throw new UsageError("--default takes neither --quota nor --window");
    return { rate_limit: null };
  }
  if (quota === undefined || window === undefined) {
    throw new UsageError("give both --quota and --window, or --default");
  }
  return { rate_limit: { quota, window_seconds: window } };
}
