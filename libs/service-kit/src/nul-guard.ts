/**
 * PostgreSQL text cannot hold U+0000, so a NUL anywhere in a body would fail a write with a 500.
 * The JSON body parser of every service asks here, and such a body is a 422 naming each field
 * before any schema or SQL sees it.
 */

/** Whether the raw JSON text can hold a NUL at all: the walk below is only needed then. */
export function mayHoldNul(text: string): boolean {
  return text.includes("\\u0000") || text.includes("\u0000");
}

/** The messages naming every field (and key) of a parsed body that holds a NUL, at most 20. */
export function nulProblems(body: unknown): string[] {
  const problems: string[] = [];
  collectNul(body, "", problems);
  return problems.slice(0, 20);
}

/**
 * Walks the body with an explicit stack, not recursion: a hostile body nested thousands of
 * levels deep must be answered, not overflow the call stack into a 500.
 */
function collectNul(body: unknown, root: string, problems: string[]) {
  const stack: Array<{ value: unknown; label: string }> = [{ value: body, label: root }];
  while (stack.length > 0 && problems.length < 20) {
    const { value, label } = stack.pop() as { value: unknown; label: string };
    if (typeof value === "string") {
      if (value.includes("\u0000")) problems.push(`${label || "body"} must not contain the NUL character`);
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], label: `${label}[${i}]` });
    } else if (value !== null && typeof value === "object") {
      const entries = Object.entries(value);
      const children: Array<{ value: unknown; label: string }> = [];
      for (const [key, item] of entries) {
        const name = key.replaceAll("\u0000", "\\u0000");
        if (name !== key) problems.push(`${label ? `${label}.` : ""}${name} must not contain the NUL character`);
        children.push({ value: item, label: label ? `${label}.${name}` : name });
      }
      // Pushed in reverse so fields are reported in body order, as the recursive walk did.
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i] as { value: unknown; label: string });
    }
  }
}
