/**
 * Whether a schema bounds the work of validating what it accepts. A request body's arrays and
 * strings need a maxItems / maxLength, so that an attacker-sized value is refused by its size
 * before anything looks inside it; a query string's or path's numbers need a maximum, so that a
 * number no column holds is a 422 rather than a database error. The service kit refuses to
 * compile a route schema that breaks these rules, and the contracts test walks every body schema.
 */

type Node = Record<string, unknown>;

/** What a body's raw text may hold at most before it is parsed (the service kit's bounds). */
export interface TextBounds {
  entriesPerArray: number;
  fieldsPerObject: number;
}

/**
 * The places (JSON pointers into the schema) of every array without maxItems and string without
 * maxLength; with `bounds`, also of every array or object the schema allows larger than them.
 */
export function unboundedPaths(schema: unknown, bounds?: TextBounds): string[] {
  const found: string[] = [];
  walk(schema, "#", (node, path) => {
    if (hasType(node, "array") && typeof node.maxItems !== "number") found.push(`${path} (array without maxItems)`);
    if (bounds && typeof node.maxItems === "number" && node.maxItems > bounds.entriesPerArray) {
      found.push(`${path} (maxItems ${node.maxItems} over the ${bounds.entriesPerArray} entries a body may hold)`);
    }
    const fields = node.properties && typeof node.properties === "object" ? Object.keys(node.properties).length : 0;
    if (bounds && fields > bounds.fieldsPerObject) {
      found.push(`${path} (${fields} properties, over the ${bounds.fieldsPerObject} fields a body's object may hold)`);
    }
    if (hasType(node, "string") && typeof node.maxLength !== "number" && !isFixed(node)) {
      found.push(`${path} (string without maxLength)`);
    }
  });
  return found;
}

/** The places of every integer or number without a maximum (query strings and path parameters). */
export function unboundedNumbers(schema: unknown): string[] {
  const found: string[] = [];
  walk(schema, "#", (node, path) => {
    const numeric = hasType(node, "integer") || hasType(node, "number");
    if (numeric && typeof node.maximum !== "number" && typeof node.exclusiveMaximum !== "number") found.push(path);
  });
  return found;
}

function hasType(node: Node, type: string): boolean {
  return node.type === type || (Array.isArray(node.type) && node.type.includes(type));
}

/** A string that must equal one of a few given values is as long as the longest of them. */
function isFixed(node: Node): boolean {
  return node.const !== undefined || Array.isArray(node.enum);
}

/** Visits every subschema that can judge a part of the value. */
function walk(schema: unknown, path: string, visit: (node: Node, path: string) => void): void {
  if (schema === null || typeof schema !== "object") return;
  const node = schema as Node;
  visit(node, path);
  for (const key of ["anyOf", "oneOf", "allOf", "prefixItems"]) {
    const list = node[key];
    if (Array.isArray(list)) for (const [i, child] of list.entries()) walk(child, `${path}/${key}/${i}`, visit);
  }
  for (const key of ["items", "additionalItems", "additionalProperties", "not", "contains", "if", "then", "else"]) {
    const child = node[key];
    if (Array.isArray(child)) for (const [i, item] of child.entries()) walk(item, `${path}/${key}/${i}`, visit);
    else walk(child, `${path}/${key}`, visit);
  }
  for (const key of ["properties", "patternProperties"]) {
    const children = node[key];
    if (children && typeof children === "object") {
      for (const [name, child] of Object.entries(children)) walk(child, `${path}/${key}/${name}`, visit);
    }
  }
}

/**
 * The largest proof image (a task's signature or picture): delivery-api's default upload limit
 * (API_MEDIA_MAX_BYTES), and the most the console forwards to it.
 */
export const PROOF_IMAGE_MAX_BYTES = 5 * 1024 * 1024;
