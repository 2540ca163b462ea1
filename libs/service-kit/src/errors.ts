/**
 * Errors that reach a caller, in the spec's shape: `{"errors": ["<field label> <problem>"]}`.
 * Each service declares its own errors once, in its errors file, with these builders.
 */
import type { ErrorObject } from "@dos/contracts";
import { DAY_PATTERN, TIMESTAMP_PATTERN } from "@dos/contracts";

export class HttpError extends Error {
  override name = "HttpError";
  readonly statusCode: number;
  readonly messages: string[];
  readonly headers: Record<string, string>;

  constructor(statusCode: number, messages: string | string[], headers: Record<string, string> = {}) {
    const list = Array.isArray(messages) ? messages : [messages];
    super(list.join("; "));
    this.statusCode = statusCode;
    this.messages = list;
    this.headers = headers;
  }
}

/** 422: the request is understood but a field is wrong. */
export const unprocessable = (messages: string | string[]) => new HttpError(422, messages);
/** 404 for a resource the caller cannot see (unknown, or another account's). */
export const notFound = (label: string) => new HttpError(404, `${label} not found`);
/** 401 when credentials are missing or wrong. */
export const unauthorized = (message = "authentication credentials are missing or invalid") =>
  new HttpError(401, message);
/** 403 when the caller is known but its role does not allow the request. */
export const forbidden = (message: string) => new HttpError(403, message);
/** 409 when the request conflicts with what exists (an e-mail already taken). */
export const conflict = (message: string) => new HttpError(409, message);
/** 503 with Retry-After, when a dependency does not answer. */
export const unavailable = (message: string, retryAfterSeconds = 5) =>
  new HttpError(503, message, { "retry-after": String(retryAfterSeconds) });

/** Turns a path like `/dropoff/place/postal_code` or `/packages/0/amount` into `packages[0].amount`. */
export function fieldLabel(instancePath: string, child?: string): string {
  const parts = instancePath
    .split("/")
    .slice(1)
    .map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"));
  if (child !== undefined) parts.push(child);
  let label = "";
  for (const raw of parts) {
    const part = shortened(raw);
    label += /^\d+$/.test(part) ? `[${part}]` : label ? `.${part}` : part;
  }
  return label || "body";
}

/** Longest field name a message repeats: an unknown key may be as long as the body. */
const MAX_LABEL_PART = 64;
const shortened = (part: string) => (part.length > MAX_LABEL_PART ? `${part.slice(0, MAX_LABEL_PART)}…` : part);

/**
 * Turns ajv errors (with allErrors) into the spec's messages. A union ("anyOf") is reported
 * through the one branch that fits the value best, not as a wall of every branch's problems.
 */
export function validationMessages(errors: ErrorObject[], root = ""): string[] {
  const messages = new Set<string>();
  for (const error of pruneUnionBranches(errors)) {
    messages.add(messageFor(error, root));
  }
  return capMessages([...messages]);
}

/** Most messages one error answer lists; the rest are counted, so the answer stays short. */
export const MAX_ERROR_MESSAGES = 20;

/** The first MAX_ERROR_MESSAGES messages, then one saying how many more there were. */
export function capMessages(messages: string[]): string[] {
  if (messages.length <= MAX_ERROR_MESSAGES) return messages;
  const more = messages.length - MAX_ERROR_MESSAGES;
  return [...messages.slice(0, MAX_ERROR_MESSAGES), `and ${more} more problem${more === 1 ? "" : "s"}`];
}

function messageFor(error: ErrorObject, root: string): string {
  const prefix = (label: string) => (root ? (label === "body" ? root : `${root}.${label}`) : label);
  const label = prefix(fieldLabel(error.instancePath));
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "required":
      return `${prefix(fieldLabel(error.instancePath, String(params.missingProperty)))} is required`;
    case "additionalProperties":
      return `${prefix(fieldLabel(error.instancePath, String(params.additionalProperty)))} is not a known field`;
    case "type":
      return `${label} must be ${article(String(params.type))}`;
    case "minLength":
      return Number(params.limit) === 1
        ? `${label} must not be blank`
        : `${label} must be at least ${params.limit} characters`;
    case "maxLength":
      return `${label} must be at most ${params.limit} characters`;
    case "minItems":
      return `${label} must have at least ${params.limit} ${Number(params.limit) === 1 ? "entry" : "entries"}`;
    case "maxItems":
      return `${label} must have at most ${params.limit} entries`;
    case "minimum":
    case "maximum":
    case "exclusiveMinimum":
    case "exclusiveMaximum":
      return `${label} must be ${comparison(error.keyword)} ${params.limit}`;
    case "pattern":
      if (params.pattern === TIMESTAMP_PATTERN) {
        return `${label} must be an ISO 8601 timestamp with UTC offset (YYYY-MM-DDThh:mm:ss.sss+hh:mm)`;
      }
      return params.pattern === DAY_PATTERN ? `${label} must be a date (YYYY-MM-DD)` : `${label} has an invalid format`;
    case "format":
      return `${label} must be a valid ${params.format === "email" ? "e-mail address" : params.format}`;
    case "const":
    case "enum":
      return `${label} must be one of ${allowedValues(error).join(", ")}`;
    case "uniqueItems":
      // ajv names the later entry i and the earlier one j.
      return `${label} must not repeat an entry (${label}[${params.j}] and ${label}[${params.i}] are the same)`;
    case "anyOf":
      return `${label} ${unionDescription(error)}`;
    default:
      return `${label} ${error.message ?? "is invalid"}`;
  }
}

function article(type: string): string {
  const names: Record<string, string> = {
    integer: "an integer",
    number: "a number",
    string: "a string",
    boolean: "true or false",
    object: "an object",
    array: "an array",
    null: "null",
  };
  return type
    .split(",")
    .map((t) => names[t] ?? t)
    .join(" or ");
}

function comparison(keyword: string): string {
  return (
    { minimum: "at least", maximum: "at most", exclusiveMinimum: "greater than", exclusiveMaximum: "less than" }[
      keyword
    ] ?? keyword
  );
}

function allowedValues(error: ErrorObject): string[] {
  const schema = error.parentSchema as { const?: unknown; enum?: unknown[] } | undefined;
  if (schema?.enum) return schema.enum.map(String);
  if (schema?.const !== undefined) return [String(schema.const)];
  return [];
}

type SchemaNode = Record<string, unknown> & { anyOf?: SchemaNode[] };

/** The branches of a union, with nested unions (a nullable enum) flattened. */
function flatBranches(schema: SchemaNode | undefined): SchemaNode[] {
  return (schema?.anyOf ?? []).flatMap((branch) => (branch.anyOf ? flatBranches(branch) : [branch]));
}

function unionDescription(error: ErrorObject): string {
  const branches = flatBranches(error.parentSchema as SchemaNode);
  const literals = branches.filter((b) => b.const !== undefined || b.type === "null");
  if (literals.length === branches.length) {
    return `must be one of ${branches.map((b) => (b.type === "null" ? "null" : String(b.const))).join(", ")}`;
  }
  const kinds = branches.map((b) => (b.title ? String(b.title) : String(b.type ?? "value")));
  return `must be ${kinds.map(article).join(" or ")}`;
}

/**
 * With allErrors, ajv reports every branch of a union. Keep, for each failed anyOf, only the
 * errors of the branch that matched the value's type and failed least; drop the anyOf summary
 * when a branch explains the problem.
 *
 * An error belongs to a union when it sits under the union's schema path and under the value the
 * union judged (its instance path): every item of an array shares the schema path, so the instance
 * path tells one item's union from the next. Each error finds its unions through its own paths'
 * prefixes (a few, bounded by the schema's depth), so the work grows with the number of errors,
 * not with its square or cube as it did when every union scanned every error.
 */
function pruneUnionBranches(errors: ErrorObject[]): ErrorObject[] {
  const unions = new Map<string, ErrorObject>();
  for (const error of errors) if (error.keyword === "anyOf") unions.set(unionKey(error), error);
  if (unions.size === 0) return errors;
  const members = new Map<ErrorObject, ErrorObject[]>();
  for (const error of errors) {
    for (const union of enclosingUnions(error, unions)) {
      const list = members.get(union);
      if (list) list.push(error);
      else members.set(union, [error]);
    }
  }
  const dropped = new Set<ErrorObject>();
  // Innermost unions first, so an outer union judges branches already pruned.
  const ordered = [...unions.values()].sort((a, b) => b.schemaPath.length - a.schemaPath.length);
  for (const union of ordered) {
    const base = union.schemaPath.replace(/\/anyOf$/, "/anyOf/");
    const byBranch = new Map<string, ErrorObject[]>();
    for (const error of members.get(union) ?? []) {
      if (dropped.has(error)) continue;
      const branch = error.schemaPath.slice(base.length).split("/")[0] ?? "";
      const list = byBranch.get(branch);
      if (list) list.push(error);
      else byBranch.set(branch, [error]);
    }
    const candidates = [...byBranch.values()].filter(
      (branchErrors) =>
        !branchErrors.some(
          (e) =>
            e.instancePath === union.instancePath &&
            (e.keyword === "type" || e.keyword === "const" || e.keyword === "anyOf"),
        ),
    );
    const best = candidates.sort((a, b) => score(a) - score(b))[0];
    for (const branchErrors of byBranch.values()) {
      if (branchErrors !== best) for (const error of branchErrors) dropped.add(error);
    }
    if (best) dropped.add(union);
  }
  return errors.filter((error) => !dropped.has(error));
}

const unionKey = (union: { instancePath: string; schemaPath: string }) =>
  `${union.instancePath}\u0000${union.schemaPath}`;

/** The unions (other than itself) whose branches produced this error. */
function enclosingUnions(error: ErrorObject, unions: Map<string, ErrorObject>): ErrorObject[] {
  const found: ErrorObject[] = [];
  const schemaPrefixes: string[] = [];
  for (let at = error.schemaPath.indexOf("/anyOf/"); at >= 0; at = error.schemaPath.indexOf("/anyOf/", at + 1)) {
    schemaPrefixes.push(error.schemaPath.slice(0, at + "/anyOf".length));
  }
  if (schemaPrefixes.length === 0) return found;
  const instancePrefixes = [""];
  for (let at = error.instancePath.indexOf("/", 1); at >= 0; at = error.instancePath.indexOf("/", at + 1)) {
    instancePrefixes.push(error.instancePath.slice(0, at));
  }
  if (error.instancePath) instancePrefixes.push(error.instancePath);
  for (const schemaPath of schemaPrefixes) {
    for (const instancePath of instancePrefixes) {
      const union = unions.get(unionKey({ instancePath, schemaPath }));
      if (union && union !== error) found.push(union);
    }
  }
  return found;
}

/** A branch whose only complaints are unknown fields fits worse than one with a missing value. */
function score(branchErrors: ErrorObject[]): number {
  return branchErrors.reduce((sum, e) => sum + (e.keyword === "additionalProperties" ? 3 : 1), 0);
}
