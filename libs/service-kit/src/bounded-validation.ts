/**
 * Validators whose work is bounded by the route's limits, not by the size of what was sent.
 *
 * ajv with `allErrors` visits every item of an array even when the array is already too long,
 * and reports a problem per item: 16,000 numbers where packages were expected took 6.6 s and a
 * 1.1 MB answer. So a body is judged first by a validator that stops at its first error (a
 * maxItems or maxLength is checked before the items or characters, so an oversized value costs
 * no more than a small one); the full list of problems, which a developer fixing a request
 * wants, is collected only when that is cheap: the first problem is not a size problem and the
 * body holds few values.
 */
import { unboundedNumbers, unboundedPaths, type ValidateFunction } from "@dos/contracts";
import { MAX_JSON_ENTRIES, MAX_JSON_FIELDS } from "./json-shape.ts";

/** Bodies with more values than this are answered with their first problem only. */
const FULL_REPORT_MAX_VALUES = 2000;

const SIZE_KEYWORDS = new Set(["maxItems", "maxLength", "maxProperties"]);

/** A body validator: the verdict from `firstError`, the detailed list from `allErrors` when bounded. */
export function boundedBodyValidator(firstError: ValidateFunction, allErrors: ValidateFunction): ValidateFunction {
  const validate = ((data: unknown, context?: unknown) => {
    if (firstError(data, context as never)) {
      validate.errors = null;
      return true;
    }
    const errors = firstError.errors ?? [];
    const sizeProblem = errors.some((error) => SIZE_KEYWORDS.has(error.keyword));
    if (sizeProblem || !holdsAtMost(data, FULL_REPORT_MAX_VALUES)) {
      validate.errors = errors;
      return false;
    }
    allErrors(data, context as never);
    validate.errors = allErrors.errors ?? errors;
    return false;
  }) as ValidateFunction;
  // Fastify hands an Ajv validator its parent object only when it sees this.
  validate.schemaEnv = firstError.schemaEnv;
  return validate;
}

/** Whether a parsed JSON value holds at most `limit` values (objects, arrays and scalars), counted without recursion. */
export function holdsAtMost(value: unknown, limit: number): boolean {
  const stack: unknown[] = [value];
  let count = 0;
  while (stack.length > 0) {
    const item = stack.pop();
    if (++count > limit) return false;
    if (Array.isArray(item)) {
      if (count + item.length > limit) return false;
      for (const child of item) stack.push(child);
    } else if (item !== null && typeof item === "object") {
      for (const key in item) {
        if (count + stack.length > limit) return false;
        stack.push((item as Record<string, unknown>)[key]);
      }
    }
  }
  return true;
}

/**
 * Refuses, when a route is compiled, a schema that would let a request cost unbounded work:
 * a body array or string without its maximum size, a query-string or path number without a
 * maximum. A developer sees it at the first test run, not an attacker in production.
 */
export function assertBoundedSchema(schema: unknown, httpPart: string, route: string): void {
  const problems =
    httpPart === "body"
      ? unboundedPaths(schema, { entriesPerArray: MAX_JSON_ENTRIES, fieldsPerObject: MAX_JSON_FIELDS })
      : httpPart === "querystring" || httpPart === "params"
        ? unboundedNumbers(schema).map((path) => `${path} (number without maximum)`)
        : [];
  if (problems.length > 0) {
    throw new Error(`${route}: the ${httpPart} schema is unbounded at ${problems.join(", ")}`);
  }
}
