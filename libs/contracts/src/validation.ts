/**
 * One way to compile the contract schemas, shared by HTTP routes and bus consumers, so a body
 * and a message are judged by the same rules.
 */
import type { TSchema } from "@sinclair/typebox";
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import addFormatsModule, { type FormatsPlugin } from "ajv-formats";

// ajv-formats is CommonJS: under nodenext its function sits on the default export's `default`.
const addFormats = ((addFormatsModule as unknown as { default?: FormatsPlugin }).default ??
  addFormatsModule) as FormatsPlugin;

/** An ajv instance with the options every service uses. */
export function createAjv(options: { allErrors?: boolean; coerceTypes?: boolean } = {}): Ajv {
  const ajv = new Ajv({
    allErrors: options.allErrors ?? false,
    strict: false,
    coerceTypes: options.coerceTypes ?? false,
    useDefaults: true,
    removeAdditional: false,
    // The error mapper reads the failing schema to name allowed values.
    verbose: true,
  });
  addFormats(ajv, ["email", "uuid", "uri", "date-time"]);
  return ajv;
}

const sharedAjv = createAjv({ allErrors: true });

/** A compiled validator that returns the value typed, or the list of problems. */
export function compileValidator<T>(schema: TSchema) {
  const validate = sharedAjv.compile(schema) as ValidateFunction<T>;
  return (value: unknown): { ok: true; value: T } | { ok: false; errors: ErrorObject[] } =>
    validate(value) ? { ok: true, value } : { ok: false, errors: validate.errors ?? [] };
}

/**
 * The JSON body of a NATS message or KV entry, or undefined when it is empty or not JSON: a
 * validator then refuses it like any other malformed value.
 */
export function jsonBody(message: { json(): unknown }): unknown {
  try {
    return message.json();
  } catch {
    return undefined;
  }
}

export type { ErrorObject, ValidateFunction };
