/**
 * Size-driven hostile bodies: for a write route, the largest body under its limit made of the
 * worst case for a validator (an array of numbers where objects are expected, an object of
 * unknown keys, deep nesting, one huge string). The client API's write routes and their fields
 * are read from its OpenAPI document, so a new route or field is covered without being listed.
 */

export interface WriteRoute {
  method: string;
  path: string;
  /** Body fields that take an array, and fields that take a string (empty when unknown). */
  arrays: string[];
  strings: string[];
}

type SchemaNode = { type?: unknown; anyOf?: SchemaNode[]; properties?: Record<string, SchemaNode> };
type OpenApi = {
  paths: Record<string, Record<string, { requestBody?: { content?: Record<string, { schema?: SchemaNode }> } }>>;
};

const takes = (schema: SchemaNode | undefined, type: string): boolean =>
  schema?.type === type || (schema?.anyOf ?? []).some((branch) => takes(branch, type));

/** Every operation of the document that takes a JSON body, with its path parameters filled in. */
export function writeRoutesFromOpenApi(doc: OpenApi, params: Record<string, string>): WriteRoute[] {
  const routes: WriteRoute[] = [];
  for (const [template, operations] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const schema = operation.requestBody?.content?.["application/json"]?.schema;
      if (!schema) continue;
      const path = template.replace(/\{(\w+)\}/g, (_, name: string) => {
        const value = params[name];
        if (value === undefined) throw new Error(`no value for {${name}} in ${template}`);
        return value;
      });
      const fields = Object.entries(schema.properties ?? {});
      routes.push({
        method: method.toUpperCase(),
        path,
        arrays: fields.filter(([, field]) => takes(field, "array")).map(([name]) => name),
        strings: fields.filter(([, field]) => takes(field, "string")).map(([name]) => name),
      });
    }
  }
  return routes;
}

/** Room left for the JSON around the filling, so every body stays under the limit. */
const MARGIN = 64;

/** The worst-case bodies for one route, each at most `limit` bytes. */
export function worstCaseBodies(route: WriteRoute, limit: number): Array<{ kind: string; body: string }> {
  const room = limit - MARGIN;
  const numbers = (key: string | undefined) => {
    const count = Math.floor((room - (key ? key.length + 6 : 0)) / 2);
    const list = `[${Array(count).fill("1").join(",")}]`;
    return key ? `{"${key}":${list}}` : list;
  };
  const unknownKeys = () => {
    const parts: string[] = [];
    let size = 2;
    for (let i = 0; size + 12 + String(i).length < room; i++) {
      const part = `"k${i}":{}`;
      parts.push(part);
      size += part.length + 1;
    }
    return `{${parts.join(",")}}`;
  };
  const deep = (key: string) => {
    const depth = Math.floor((room - key.length - 6) / 2);
    return `{"${key}":${"[".repeat(depth)}${"]".repeat(depth)}}`;
  };
  const longString = (key: string) => `{"${key}":"${"x".repeat(room - key.length - 8)}"}`;
  const arrayField = route.arrays[0];
  const stringField = route.strings[0] ?? "name";
  return [
    { kind: arrayField ? `${arrayField}: numbers` : "body: numbers", body: numbers(arrayField) },
    { kind: "unknown keys", body: unknownKeys() },
    { kind: `${arrayField ?? stringField}: nesting`, body: deep(arrayField ?? stringField) },
    { kind: `${stringField}: long string`, body: longString(stringField) },
  ];
}
