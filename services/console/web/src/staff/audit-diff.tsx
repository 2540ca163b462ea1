/**
 * An audit entry's values before and after, as a person reads a change: field by field (nested
 * fields by their dotted path), the changed, added and removed ones first and marked, the
 * unchanged ones folded away; the raw JSON is one click further.
 */

type Leaf = string | number | boolean | null | "[]" | "{}";
type Change = "changed" | "added" | "removed" | "same";

/** The object's leaves by path (`tasks[0].status`); an empty array or object is a leaf of its own. */
function flatten(value: unknown, path: string, out: Map<string, Leaf>): Map<string, Leaf> {
  if (Array.isArray(value)) {
    if (value.length === 0) out.set(path || "(value)", "[]");
    value.forEach((item, index) => {
      flatten(item, `${path}[${index}]`, out);
    });
  } else if (value !== null && typeof value === "object") {
    const entries = Object.entries(value);
    if (entries.length === 0) out.set(path || "(value)", "{}");
    for (const [key, item] of entries) flatten(item, path ? `${path}.${key}` : key, out);
  } else {
    out.set(path || "(value)", value as Leaf);
  }
  return out;
}

interface Row {
  path: string;
  change: Change;
  before?: Leaf;
  after?: Leaf;
}

/** Every field of either side, in the order the values list them, with what became of it. */
function diffRows(before: unknown, after: unknown): Row[] {
  const old = before === null || before === undefined ? new Map<string, Leaf>() : flatten(before, "", new Map());
  const now = after === null || after === undefined ? new Map<string, Leaf>() : flatten(after, "", new Map());
  const rows: Row[] = [];
  for (const [path, value] of old) {
    if (!now.has(path)) rows.push({ path, change: "removed", before: value });
    else if (now.get(path) === value) rows.push({ path, change: "same", before: value, after: value });
    else rows.push({ path, change: "changed", before: value, after: now.get(path) });
  }
  for (const [path, value] of now) if (!old.has(path)) rows.push({ path, change: "added", after: value });
  return rows;
}

const shown = (value: Leaf | undefined) => {
  if (value === undefined) return <span className="absent">—</span>;
  if (value === null) return <span className="absent">null</span>;
  if (value === "") return <span className="absent">(empty)</span>;
  return typeof value === "string" ? value : JSON.stringify(value);
};

const CHANGE_LABELS: Record<Exclude<Change, "same">, string> = {
  changed: "changed",
  added: "added",
  removed: "removed",
};

function RowsTable({ rows, caption }: { rows: Row[]; caption: string }) {
  return (
    <table className="diff">
      <caption className="visually-hidden">{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Field</th>
          <th scope="col">Before</th>
          <th scope="col">After</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.path} className={row.change}>
            <th scope="row">
              <code>{row.path}</code>
              {row.change !== "same" && (
                <>
                  {" "}
                  <span className="change-tag">{CHANGE_LABELS[row.change]}</span>
                </>
              )}
            </th>
            <td>{shown(row.before)}</td>
            <td>{shown(row.after)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * The values of one entry: what changed, marked; what did not, folded; the raw JSON. `titleId`
 * names the entry's title, which describes the folded parts' toggles (one "Raw JSON" among many).
 */
export function AuditDiff(props: { before: unknown; after: unknown; label: string; titleId: string }) {
  const rows = diffRows(props.before, props.after);
  const moved = rows.filter((row) => row.change !== "same");
  const same = rows.filter((row) => row.change === "same");
  if (rows.length === 0) return <p className="diff-none">No values recorded: nothing was read or changed.</p>;
  return (
    <div className="audit-values">
      {moved.length > 0 ? (
        <RowsTable rows={moved} caption={`Fields changed by ${props.label}`} />
      ) : (
        <p className="diff-none">No field changed.</p>
      )}
      {same.length > 0 && (
        <details>
          <summary aria-describedby={props.titleId}>
            {same.length} unchanged field{same.length === 1 ? "" : "s"}
          </summary>
          <RowsTable rows={same} caption={`Fields unchanged by ${props.label}`} />
        </details>
      )}
      <details>
        <summary aria-describedby={props.titleId}>Raw JSON</summary>
        <div className="raw-json">
          <div>
            <h4>Before</h4>
            <pre>{JSON.stringify(props.before, null, 2)}</pre>
          </div>
          <div>
            <h4>After</h4>
            <pre>{JSON.stringify(props.after, null, 2)}</pre>
          </div>
        </div>
      </details>
    </div>
  );
}
