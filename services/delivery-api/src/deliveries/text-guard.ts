/**
 * PostgreSQL refuses the NUL character in text and JSON; a body carrying one must be a 422
 * naming the field, never a 500. The walk is iterative and bounded, so a hostile, deeply
 * nested body cannot exhaust the stack (the schema refuses such shapes anyway).
 */
import { unprocessable } from "@dos/service-kit";

const MAX_NODES = 100_000;

/** A preValidation hook: 422 when any string (or key) of the body contains U+0000. */
export async function rejectNulCharacters(request: { body: unknown }) {
  const label = nulFieldLabel(request.body);
  if (label !== null) throw unprocessable(`${label} must not contain the NUL character`);
}

/** The label of the first field holding a NUL character, or null. */
export function nulFieldLabel(body: unknown): string | null {
  const stack: Array<{ value: unknown; label: string }> = [{ value: body, label: "body" }];
  for (let visited = 0; stack.length > 0 && visited < MAX_NODES; visited++) {
    const { value, label } = stack.pop() as { value: unknown; label: string };
    if (typeof value === "string") {
      if (value.includes("\u0000")) return label;
    } else if (Array.isArray(value)) {
      value.forEach((item, index) => stack.push({ value: item, label: `${label}[${index}]` }));
    } else if (value !== null && typeof value === "object") {
      for (const [key, item] of Object.entries(value)) {
        const child = label === "body" ? key : `${label}.${key}`;
        if (key.includes("\u0000")) return label;
        stack.push({ value: item, label: child });
      }
    }
  }
  return null;
}
