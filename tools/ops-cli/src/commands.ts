/**
 * The operator CLI's commands, derived from the operator API's OpenAPI document: each operation
 * `<group>.<action>` is the command `<group> <action>`, its summary the command's, and its path
 * parameters, query parameters and JSON body properties its flags. A new operator route is a new
 * command; nothing here names one.
 *
 * Flags:
 * - a path parameter is named after what it identifies: `accountId` → `--account`, and a bare
 *   `{id}` after the segment before it (`/rounds/{id}` → `--round`); `-id` is kept when the
 *   short name is also a body field (`--address-id` beside the place's `--address`);
 * - query parameters and body properties keep their names, `_` written `-` (`--per-page`);
 * - an object property of scalars is one flag per field (`--settings.bring-back-containers`);
 * - a list of scalars is comma-separated (`--events a,b`), a list of objects of scalars too, each
 *   item its values in the schema's order (`--zones 75001:48.86:2.34,75002:48.87:2.34`) or JSON;
 *   anything else is JSON (`--rate-limit '{"quota":600,"window_seconds":60}'`);
 * - an operation with a JSON body also takes the whole body as `--json TEXT` or `--file PATH`,
 *   which the flags then complete.
 */

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
export type Scalar = "string" | "integer" | "number" | "boolean";

export interface Flag {
  /** Without the leading `--`. */
  name: string;
  at: "path" | "query" | "body";
  /** The path parameter, query parameter or body property (dotted when nested). */
  field: string;
  kind: Scalar | "list" | "records" | "json";
  /** A list's items, or a record's fields in order. */
  items?: Array<{ name: string; kind: Scalar }>;
  /** The values a string may take. */
  values?: string[];
  /** `""` gives null. */
  nullable: boolean;
  required: boolean;
  help: string;
}

export interface Command {
  /** `<group> <action>`. */
  name: string;
  summary: string;
  description?: string;
  method: Method;
  /** Under /ops/v1, with `{param}` placeholders. */
  path: string;
  flags: Flag[];
  /** The operation takes a JSON body (`--json` / `--file` are then flags too). */
  jsonBody: boolean;
}

/** The part of an OpenAPI 3.1 document the CLI reads. */
export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation | unknown>>;
  components?: { schemas?: Record<string, Schema> };
}
interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  parameters?: Array<{ name: string; in: string; required?: boolean; description?: string; schema?: Schema }>;
  requestBody?: { content?: Record<string, { schema?: Schema }> };
}
export interface Schema {
  $ref?: string;
  type?: string;
  const?: unknown;
  enum?: unknown[];
  anyOf?: Schema[];
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  description?: string;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  maxItems?: number;
}

const METHODS = ["get", "post", "put", "patch", "delete"];
const SCALARS = new Set(["string", "integer", "number", "boolean"]);
export const API_PREFIX = "/ops/v1";

export function commandsOf(doc: OpenApiDocument): Map<string, Command> {
  const resolve = (schema: Schema | undefined): Schema => {
    let current = schema ?? {};
    for (let depth = 0; current.$ref && depth < 10; depth++) {
      current = doc.components?.schemas?.[current.$ref.replace("#/components/schemas/", "")] ?? {};
    }
    return current;
  };
  const operations = Object.entries(doc.paths).flatMap(([fullPath, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, operation]) => ({ fullPath, method, operation: operation as Operation })),
  );
  const bodySchema = (operation: Operation) => operation.requestBody?.content?.["application/json"]?.schema;
  // A path flag has one name in every command: `--address-id` everywhere, since some body has `address`.
  const taken = new Set(
    operations.flatMap(({ operation }) => {
      const body = bodySchema(operation);
      const query = (operation.parameters ?? []).filter((p) => p.in === "query").map((p) => kebab(p.name));
      return [...query, ...(body ? bodyFlagsOf(resolve(body), resolve).map((flag) => flag.name) : [])];
    }),
  );
  const commands = new Map<string, Command>();
  for (const { fullPath, method, operation } of operations) {
    const [group, action, ...rest] = (operation.operationId ?? "").split(".");
    if (!group || !action || rest.length > 0) {
      throw new Error(
        `${method.toUpperCase()} ${fullPath}: operationId '${operation.operationId}' is not <group>.<action>`,
      );
    }
    const name = `${group} ${action}`;
    if (commands.has(name)) throw new Error(`operationId ${operation.operationId} is given twice`);
    const body = bodySchema(operation);
    const bodyFlags = body ? bodyFlagsOf(resolve(body), resolve) : [];
    const path = fullPath.startsWith(API_PREFIX) ? fullPath.slice(API_PREFIX.length) : fullPath;
    const flags: Flag[] = [];
    for (const parameter of operation.parameters ?? []) {
      const schema = resolve(parameter.schema);
      if (parameter.in === "path") {
        flags.push({
          ...describe(schema, resolve),
          name: pathFlagName(path, parameter.name, taken),
          at: "path",
          field: parameter.name,
          // Path values are checked by the API, which answers 404 for an id that cannot exist.
          kind: "string",
          nullable: false,
          required: true,
          help: parameter.description ?? pathHelp(path, parameter.name),
        });
      } else if (parameter.in === "query") {
        flags.push({
          ...describe(schema, resolve),
          name: kebab(parameter.name),
          at: "query",
          field: parameter.name,
          required: Boolean(parameter.required) && schema.default === undefined,
          ...(parameter.description ? { help: parameter.description } : {}),
        });
      }
    }
    // What the path names first, then the query, then the body.
    flags.sort((a, b) => Number(b.at === "path") - Number(a.at === "path"));
    flags.push(...bodyFlags);
    commands.set(name, {
      name,
      summary: operation.summary ?? name,
      ...(operation.description ? { description: operation.description } : {}),
      method: method.toUpperCase() as Method,
      path,
      flags,
      jsonBody: body !== undefined,
    });
  }
  return commands;
}

/** The body's properties as flags; an object of scalars becomes one flag per field. */
function bodyFlagsOf(body: Schema, resolve: (schema: Schema | undefined) => Schema): Flag[] {
  const flags: Flag[] = [];
  const required = new Set(body.required ?? []);
  for (const [property, raw] of Object.entries(body.properties ?? {})) {
    const schema = resolve(raw);
    if (schema.type === "object" && schema.properties && scalarFields(schema, resolve)) {
      const inner = new Set(required.has(property) ? (schema.required ?? []) : []);
      for (const [field, fieldSchema] of Object.entries(schema.properties)) {
        flags.push({
          ...describe(resolve(fieldSchema), resolve),
          name: `${kebab(property)}.${kebab(field)}`,
          at: "body",
          field: `${property}.${field}`,
          required: inner.has(field),
        });
      }
      continue;
    }
    flags.push({
      ...describe(schema, resolve),
      name: kebab(property),
      at: "body",
      field: property,
      required: required.has(property),
    });
  }
  return flags;
}

/** A schema's flag kind, allowed values, nullability and help. */
function describe(
  schema: Schema,
  resolve: (schema: Schema | undefined) => Schema,
): Omit<Flag, "name" | "at" | "field" | "required"> {
  const members = (schema.anyOf ?? [schema]).map(resolve);
  const present = members.filter((member) => member.type !== "null");
  const nullable = present.length < members.length;
  const values = present.every((member) => member.const !== undefined)
    ? present.map((member) => String(member.const))
    : present.length === 1 && present[0]?.enum
      ? present[0].enum.map(String)
      : undefined;
  const only = present.length === 1 ? (present[0] ?? {}) : {};
  const help = helpOf(schema.description ?? only.description, only, nullable);
  if (values) return { kind: "string", values, nullable, help };
  if (present.length !== 1) return { kind: "json", nullable, help };
  if (only.type && SCALARS.has(only.type)) return { kind: only.type as Scalar, nullable, help };
  if (only.type === "array") {
    const item = resolve(only.items);
    const itemValues = (item.anyOf ?? []).map(resolve);
    if (item.type && SCALARS.has(item.type))
      return { kind: "list", items: [{ name: "", kind: item.type as Scalar }], nullable, help };
    if (itemValues.length > 0 && itemValues.every((member) => member.const !== undefined)) {
      return {
        kind: "list",
        items: [{ name: "", kind: "string" }],
        values: itemValues.map((member) => String(member.const)),
        nullable,
        help,
      };
    }
    const fields = item.type === "object" ? scalarFields(item, resolve) : undefined;
    if (fields) return { kind: "records", items: fields, nullable, help };
  }
  return { kind: "json", nullable, help };
}

/** An object's fields when every one is a scalar, in the schema's order. */
function scalarFields(schema: Schema, resolve: (schema: Schema | undefined) => Schema) {
  const fields = Object.entries(schema.properties ?? {}).map(([name, field]) => ({ name, type: resolve(field).type }));
  if (fields.length === 0 || !fields.every((field) => field.type && SCALARS.has(field.type))) return undefined;
  return fields.map((field) => ({ name: field.name, kind: field.type as Scalar }));
}

/** What the schema says about a value: its description, bounds and default. */
function helpOf(description: string | undefined, schema: Schema, nullable: boolean): string {
  const bounds: string[] = [];
  if (schema.minimum !== undefined || schema.maximum !== undefined) {
    bounds.push(`${schema.minimum ?? "…"} to ${schema.maximum ?? "…"}`);
  }
  if (schema.maxLength !== undefined) bounds.push(`at most ${schema.maxLength} characters`);
  if (schema.maxItems !== undefined) bounds.push(`at most ${schema.maxItems} items`);
  if (schema.default !== undefined) bounds.push(`default ${JSON.stringify(schema.default)}`);
  if (nullable) bounds.push('"" for null');
  return [description?.replace(/\.$/, ""), bounds.join(", ")].filter(Boolean).join("; ");
}

/** `accountId` → account, `delivery_id` → delivery, `{id}` after `/rounds/` → round. */
function pathFlagName(path: string, parameter: string, taken: Set<string>): string {
  let short = parameter.replace(/(Id|_id)$/, "");
  if (parameter === "id") {
    const segments = path.split("/");
    const segment = segments[segments.indexOf("{id}") - 1] ?? "id";
    short = segment.replace(/s$/, "");
  }
  const name = kebab(short);
  return taken.has(name) ? kebab(parameter.replace(/_?[iI]d$/, "_id")) : name;
}

const kebab = (name: string) =>
  name
    .replace(/([a-z0-9])([A-Z])/g, "$1-$2")
    .replaceAll("_", "-")
    .toLowerCase();
/** `the account id`, `the round id`, `the postal code`. */
function pathHelp(path: string, parameter: string): string {
  const words = pathFlagName(path, parameter, new Set()).replaceAll("-", " ");
  return /(^id|Id|_id)$/.test(parameter) ? `the ${words} id` : `the ${words}`;
}
