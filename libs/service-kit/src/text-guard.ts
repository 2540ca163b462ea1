import { isAscii } from "node:buffer";

/**
 * Strings a body may not carry, found before any schema or SQL sees them:
 * - U+0000: PostgreSQL text cannot hold it, so a write would fail with a 500;
 * - an unpaired UTF-16 surrogate (a JSON escape such as `\ud800` without its other half): it is
 *   no character, and PostgreSQL would silently store U+FFFD in its place.
 * The JSON body parser of every service asks here, and such a body is a 422 naming each field.
 */

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A body's text, or null when its bytes are not UTF-8: they are refused, not silently turned into
 * U+FFFD and stored. ASCII (most bodies) is read byte for byte, without the decoder's checks.
 */
export function bodyText(bytes: Buffer): string | null {
  if (isAscii(bytes)) return bytes.toString("latin1");
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

/** Whether the raw JSON text can hold either at all: the walk below is only needed then. */
export function mayHoldForbiddenText(text: string): boolean {
  return text.includes("\u0000") || /\\u0000|\\u[dD][89a-fA-F]/.test(text);
}

/** The messages naming every field (and key) of a parsed body that holds one, at most 20. */
export function textProblems(body: unknown): string[] {
  const problems: string[] = [];
  collectProblems(body, "", problems);
  return problems.slice(0, 20);
}

/** Why a string cannot be stored as it is, or null. */
function problemOf(value: string): string | null {
  if (value.includes("\u0000")) return "must not contain the NUL character";
  if (value.isWellFormed()) return null;
  const lone = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.exec(value)?.[0] ?? "";
  return `must be valid Unicode text (${escaped(lone)} is half of a surrogate pair)`;
}

/** A string as a JSON escape would write it, so that a message never carries the bad text itself. */
function escaped(value: string): string {
  let out = "";
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i);
    const pair = unit >= 0xd800 && unit <= 0xdbff && /[\udc00-\udfff]/.test(value[i + 1] ?? "");
    if (pair) {
      out += value.slice(i, i + 2);
      i++;
    } else if (unit === 0 || (unit >= 0xd800 && unit <= 0xdfff)) out += `\\u${unit.toString(16).padStart(4, "0")}`;
    else out += value[i];
  }
  return out;
}

/**
 * Walks the body with an explicit stack, not recursion: a hostile body nested thousands of
 * levels deep must be answered, not overflow the call stack into a 500.
 */
function collectProblems(body: unknown, root: string, problems: string[]) {
  type Item = { value: unknown; label: string; keyProblem?: string };
  const stack: Item[] = [{ value: body, label: root }];
  while (stack.length > 0 && problems.length < 20) {
    const { value, label, keyProblem } = stack.pop() as Item;
    if (keyProblem) problems.push(keyProblem);
    if (typeof value === "string") {
      const problem = problemOf(value);
      if (problem) problems.push(`${label || "body"} ${problem}`);
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], label: `${label}[${i}]` });
    } else if (value !== null && typeof value === "object") {
      const children: Item[] = Object.entries(value).map(([key, item]) => {
        const name = escaped(key);
        const child = label ? `${label}.${name}` : name;
        const problem = problemOf(key);
        return { value: item, label: child, keyProblem: problem ? `${child} ${problem}` : undefined };
      });
      // Pushed in reverse so fields are reported in body order, as the recursive walk did.
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i] as Item);
    }
  }
}
