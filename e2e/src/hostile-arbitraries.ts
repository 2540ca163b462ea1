/**
 * The hostile inputs of the hostile-input suite, as fast-check arbitraries: valid bodies with one
 * value of the wrong type, random JSON, deep nesting, huge bodies, invalid UTF-8, text that is not
 * JSON, the right body with the wrong content type or none, and ids and query strings to abuse.
 */
import fc from "fast-check";

/** A value of another JSON type than the given one (never a valid replacement). */
function wrongType(value: unknown): fc.Arbitrary<unknown> {
  const others = [
    typeof value !== "string" && fc.string({ maxLength: 20 }),
    typeof value !== "number" && fc.oneof(fc.integer(), fc.double({ noNaN: true })),
    typeof value !== "boolean" && fc.boolean(),
    !Array.isArray(value) && fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }),
    (typeof value !== "object" || value === null || Array.isArray(value)) &&
      fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }),
  ].filter(Boolean) as Array<fc.Arbitrary<unknown>>;
  return fc.oneof(...others);
}

/** Paths to every leaf and inner value of a JSON value. */
function paths(value: unknown, prefix: Array<string | number> = []): Array<Array<string | number>> {
  if (value === null || typeof value !== "object") return [prefix];
  const children = Object.entries(value).flatMap(([k, v]) =>
    paths(v, [...prefix, Array.isArray(value) ? Number(k) : k]),
  );
  return prefix.length === 0 ? children : [prefix, ...children];
}

/** A valid body with one value (leaf or subtree) replaced by a value of another type. */
function mutated(valid: unknown): fc.Arbitrary<unknown> {
  return fc.constantFrom(...paths(valid)).chain((path) => {
    let target: unknown = valid;
    for (const key of path) target = (target as Record<string, unknown>)[key];
    return wrongType(target).map((replacement) => {
      const copy = structuredClone(valid) as Record<string | number, unknown>;
      let node = copy;
      for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
      node[path.at(-1) as string | number] = replacement;
      return copy;
    });
  });
}

const json = (value: unknown) => Buffer.from(JSON.stringify(value));
const deep = (depth: number) => Buffer.from(`${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`);

/** Bodies no endpoint may accept, and the content type they are sent with. */
export function hostileBodies(valid: unknown[]): fc.Arbitrary<{ body?: Buffer; type?: string }> {
  const jsonType = fc.constantFrom("application/json", "application/json; charset=utf-8", "Application/JSON");
  return fc.oneof(
    fc.record({
      body: fc
        .constantFrom(...valid)
        .chain(mutated)
        .map(json),
      type: jsonType,
    }),
    fc.record({ body: fc.jsonValue({ maxDepth: 4 }).map(json), type: jsonType }),
    fc.record({ body: fc.integer({ min: 200, max: 20_000 }).map(deep), type: jsonType }),
    fc.record({
      body: fc.integer({ min: 200, max: 5000 }).map((n) => Buffer.from(`${"[".repeat(n)}${"]".repeat(n)}`)),
      type: jsonType,
    }),
    fc.record({
      body: fc.constantFrom(300_000, 1_500_000).map((n) => json({ comments: "x".repeat(n) })),
      type: jsonType,
    }),
    fc.record({
      body: fc
        .uint8Array({ minLength: 1, maxLength: 6 })
        .map((bytes) =>
          Buffer.concat([Buffer.from('{"comments":"'), Buffer.from([0xc3, 0x28, 0xff, ...bytes]), Buffer.from('"}')]),
        ),
      type: jsonType,
    }),
    fc.record({ body: fc.string({ maxLength: 50 }).map((s) => Buffer.from(s)), type: jsonType }),
    fc.record({
      body: fc.constantFrom(...valid).map(json),
      type: fc.constantFrom(
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/xml",
      ),
    }),
    fc.record({ body: fc.constantFrom(...valid).map(json) }, { requiredKeys: [] }),
  );
}

export const hostileId = fc.oneof(
  fc.constantFrom(
    "0",
    "-1",
    "1.5",
    "99999999999999999999",
    "abc",
    "%00",
    "%2e%2e%2f",
    "1%20or%201=1",
    encodeURIComponent("🚚"),
    "latest",
  ),
  fc.integer({ min: -10, max: 10_000_000 }).map(String),
  fc.string({ minLength: 1, maxLength: 300 }).map(encodeURIComponent),
);
export const hostileQuery = fc.oneof(
  fc.constant(""),
  fc.constantFrom("?page=-1", "?per_page=100000", "?page=abc", "?client_order_reference=%00", "?limit=0", "?limit=1e9"),
  fc
    .dictionary(
      fc.constantFrom("page", "per_page", "client_order_reference", "limit", "x"),
      fc.string({ maxLength: 30 }),
    )
    .map((q) => `?${new URLSearchParams(q)}`),
);
