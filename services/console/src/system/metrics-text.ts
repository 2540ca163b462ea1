/**
 * Reading the Prometheus text format a service's /metrics answers (what prom-client writes): only
 * the samples of the metrics asked for are parsed, so a scrape of a few hundred lines costs a
 * scan and a handful of small parses.
 */

export interface Sample {
  labels: Record<string, string>;
  value: number;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(,|\})/y;

const number = (text: string): number => {
  if (text === "+Inf") return Number.POSITIVE_INFINITY;
  if (text === "-Inf") return Number.NEGATIVE_INFINITY;
  return text === "" ? Number.NaN : Number(text);
};

const unescapeLabel = (value: string) =>
  value.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c === "\\" ? "\\" : c === '"' ? '"' : `\\${c}`));

/** The samples of the `wanted` metrics in `text`, by name; a malformed line is skipped, not fatal. */
export function parseMetrics(text: string, wanted: ReadonlySet<string>): Map<string, Sample[]> {
  const found = new Map<string, Sample[]>();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const name = NAME.exec(line)?.[0];
    if (!name || !wanted.has(name)) continue;
    let rest = line.slice(name.length);
    const labels: Record<string, string> = {};
    if (rest.startsWith("{")) {
      if (rest.startsWith("{}")) {
        rest = rest.slice(2);
      } else {
        LABEL.lastIndex = 1;
        let closed = false;
        for (let match = LABEL.exec(rest); match; match = LABEL.exec(rest)) {
          labels[match[1] as string] = unescapeLabel(match[2] as string);
          if (match[3] === "}") {
            closed = true;
            break;
          }
        }
        if (!closed) continue;
        rest = rest.slice(LABEL.lastIndex);
      }
    }
    const value = number(rest.trim().split(/\s+/)[0] ?? "");
    if (Number.isNaN(value)) continue;
    const samples = found.get(name) ?? [];
    samples.push({ labels, value });
    found.set(name, samples);
  }
  return found;
}

/** The sum of a metric's samples (every label set), or undefined when the text had none. */
export function total(samples: Map<string, Sample[]>, name: string): number | undefined {
  const of = samples.get(name);
  return of === undefined ? undefined : of.reduce((sum, sample) => sum + sample.value, 0);
}
