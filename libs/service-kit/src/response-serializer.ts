/**
 * Response serialisation without a validation per nullable field. The contracts write a
 * nullable value as `anyOf: [schema, {type: "null"}]` (TypeBox's Union, what OpenAPI 3.1
 * shows), and fast-json-stringify serialises an anyOf by running Ajv on the value against each
 * branch, at every response: a v2 Delivery has some thirty of them, two of which validate a
 * whole task. The serialiser is given the same schema with each such union written as
 * `{...schema, nullable: true}`, which it serialises with one `=== null` test. The route keeps
 * its schema as written: validation and the OpenAPI document never see the rewritten copy.
 */
import { createRequire } from "node:module";
import type { FastifyServerOptions } from "fastify";

type SerializerFactory = NonNullable<
  NonNullable<NonNullable<FastifyServerOptions["schemaController"]>["compilersFactory"]>["buildSerializer"]
>;

// Fastify's own serializer factory, resolved from fastify: the very one it would use by default.
const fromFastify = createRequire(import.meta.resolve("fastify"));
const { SerializerSelector } = fromFastify("@fastify/fast-json-stringify-compiler") as {
  SerializerSelector: () => SerializerFactory;
};

/** Fastify's default serializer factory, fed the schemas with nullable unions rewritten. */
export function nullableUnionSerializer(): SerializerFactory {
  const defaults = SerializerSelector();
  return (externalSchemas, options) => {
    const compile = defaults(externalSchemas, options);
    return (route) => compile({ ...route, schema: withNullableUnions(route.schema) });
  };
}

type Schema = Record<string, unknown>;
const COMBINATORS = ["anyOf", "oneOf", "allOf", "not", "if", "$ref", "nullable"];

/**
 * A copy of `schema` with each `anyOf: [S, {type: "null"}]` of a plain typed S as S made
 * nullable, and each union of string literals as a string.
 */
export function withNullableUnions(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withNullableUnions);
  if (schema === null || typeof schema !== "object") return schema;
  const copy: Schema = {};
  for (const [key, value] of Object.entries(schema)) copy[key] = withNullableUnions(value);
  const { anyOf, ...annotations } = copy;
  if (!Array.isArray(anyOf)) return copy;
  // A union of string literals (a status, a direction) is a string with its enum.
  if (anyOf.every((option: Schema) => option.type === "string" && typeof option.const === "string")) {
    return { type: "string", enum: anyOf.map((option: Schema) => option.const), ...annotations };
  }
  if (anyOf.length !== 2) return copy;
  const nullAt = anyOf.findIndex((option: Schema) => option.type === "null" && Object.keys(option).length === 1);
  const other = anyOf[1 - nullAt] as Schema | undefined;
  if (nullAt === -1 || !other || typeof other.type !== "string" || COMBINATORS.some((k) => k in other)) return copy;
  return { ...other, ...annotations, nullable: true };
}
