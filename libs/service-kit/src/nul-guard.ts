/**
 * PostgreSQL text cannot hold U+0000, so a NUL anywhere in a body would fail a write with a 500.
 * This preValidation hook, on every route of every service, makes such a body a 422 naming each
 * field before any schema or SQL sees it.
 */
import type { FastifyRequest } from "fastify";
import { unprocessable } from "./errors.ts";

export async function refuseNulCharacters(request: FastifyRequest) {
  const problems: string[] = [];
  collectNul(request.body, "", problems);
  if (problems.length > 0) throw unprocessable(problems.slice(0, 20));
}

function collectNul(value: unknown, label: string, problems: string[]) {
  if (typeof value === "string") {
    if (value.includes("\u0000")) problems.push(`${label || "body"} must not contain the NUL character`);
  } else if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) collectNul(item, `${label}[${i}]`, problems);
  } else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      const name = key.replaceAll("\u0000", "\\u0000");
      if (name !== key) problems.push(`${label ? `${label}.` : ""}${name} must not contain the NUL character`);
      collectNul(item, label ? `${label}.${name}` : name, problems);
    }
  }
}
