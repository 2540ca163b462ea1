/**
 * `npm run soak` (the steady profile, the default): the whole system under a steady load of
 * creates, updates, positions and webhooks for `--minutes` (or SOAK_SECONDS; default 600 s),
 * sampled every SOAK_SAMPLE_SECONDS (default 60; shorter runs sample six times). It
 * prints throughput, p50/p99 latencies, errors, each service's memory and the backlogs, writes the soak section of e2e/RESULTS.md, and exits 1 when memory or backlogs
 * grow without bound:
 *   - memory: per service, the mean RSS of the last third of the samples is at most 1.5× the mean
 *     of the first third (the sample at boot excluded: it is before any work);
 *   - backlogs: the mean backlog of the last third is at most 1.5× the first third's (+ 100 for
 *     noise), and within 60 s of the load's end the backlog is back to 0;
 *   - nothing lost: every event of the outbox reached the webhook receiver.
 */
import { rmSync } from "node:fs";
import path from "node:path";
import { root } from "../../scripts/system.ts";
import { clientHeaders, type SeededAccount, seedAccounts } from "../src/client.ts";
import { type LoadKind, type LoadResult, startLoad } from "../src/load.ts";
import { GEO_OPS_TOKEN, operator } from "../src/operator.ts";
import { runContext, writeResultsSection } from "../src/results.ts";
import { bootSystemUnderTest, type SystemUnderTest } from "../src/system.ts";
import { registerReceiver, startWebhookReceiver } from "../src/webhook-receiver.ts";
import { type Sample, startProbes } from "./soak-probes.ts";

const RATES: Record<LoadKind, number> = { create: 20, update: 10, position: 45 };
const VEHICLES = 60;
const LOG_DIR = path.join(root, "var", "soak-logs");

const say = (line: string) => process.stdout.write(`${line}\n`);

/** Runs the steady soak for `seconds`; the exit code: 0 when everything held. */
export async function runSteadySoak(seconds: number): Promise<number> {
  const sampleSeconds = Number(process.env.SOAK_SAMPLE_SECONDS ?? Math.min(60, Math.max(5, seconds / 6)));
  rmSync(LOG_DIR, { recursive: true, force: true });
  const system = await bootSystemUnderTest({ GEO_OPS_TOKEN }, { logDir: LOG_DIR });
  try {
    return await soak(system, seconds, sampleSeconds);
  } finally {
    await system.teardown();
  }
}

async function soak(system: SystemUnderTest, seconds: number, sampleSeconds: number): Promise<number> {
  const [account] = seedAccounts(system) as [SeededAccount];
  const api = system.url("delivery-api");
  const receiver = await startWebhookReceiver();
  await registerReceiver(api, clientHeaders(account), receiver);
  const fleet = operator(system.opsUrl, system.url("geo-ingest"));
  const vehicles = [];
  for (let i = 0; i < VEHICLES; i++) vehicles.push((await fleet.startRound([])).vehicle);
  for (const vehicle of vehicles) await fleet.position(vehicle, 48.86, 2.34, new Date());

  const started = Date.now();
  const probes = await startProbes(system, started);
  const samples: Sample[] = [await probes.sample()];
  say(`soak: ${seconds} s, sampling every ${sampleSeconds} s; load ${JSON.stringify(RATES)} requests/s`);
  say(header());
  say(row(samples[0] as Sample, []));
  const load = startLoad({ api, geo: system.url("geo-ingest"), account, vehicles, rates: RATES, maxInFlight: 64 });
  let windowStart = started;
  while (Date.now() - started < seconds * 1000) {
    await new Promise((resolve) =>
      setTimeout(resolve, Math.min(sampleSeconds * 1000, started + seconds * 1000 - Date.now())),
    );
    const sample = await probes.sample();
    samples.push(sample);
    say(row(sample, load.between(windowStart, Date.now())));
    windowStart = Date.now();
  }
  await load.stop();
  const loadEnded = Date.now();
  let drained = await probes.sample();
  while (drained.backlog > 0 && Date.now() - loadEnded < 60_000) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    drained = await probes.sample();
  }
  const drainMs = Date.now() - loadEnded;
  const outbox = await probes.outboxIds();
  const received = new Set(receiver.received.map((r) => r.webhookId));
  const missing = outbox.filter((id) => !received.has(id)).length;
  await receiver.close();
  await probes.close();

  const loadSeconds = (loadEnded - started) / 1000;
  const lines = summary(load.results, loadSeconds, receiver.received, started);
  const verdicts = judge(samples, drained, drainMs, missing, outbox.length);
  for (const line of [...lines, ...verdicts.lines]) say(line);
  writeResultsSection(
    "soak",
    [
      "## Soak (`npm run soak`, the steady profile)",
      "",
      `${runContext()} ${Math.round(loadSeconds)} s of load (${JSON.stringify(RATES)} requests/s offered, ${VEHICLES} vehicles), machine's own PostgreSQL and NATS, a fresh database and namespace.`,
      "",
      "```",
      header(),
      ...samples.map((s) => row(s, [])),
      "```",
      "",
      ...lines.map((l) => `- ${l}`),
      "",
      ...verdicts.lines.map((l) => `- ${l}`),
    ].join("\n"),
  );
  return verdicts.ok ? 0 : 1;
}

function header(): string {
  return "   t  rss MB (api geo pricing webhooks)  outbox  consumers(pending+ack)  webhook-queue  backlog | window";
}

function row(sample: Sample, window: LoadResult[]): string {
  const rss = Object.values(sample.rssMb)
    .map((mb) => mb.toFixed(0).padStart(4))
    .join(" ");
  const consumers = Object.values(sample.consumers)
    .map((c) => `${c.pending}+${c.ackPending}`)
    .join(",");
  const ok = window.filter((r) => r.status >= 200 && r.status < 300).length;
  const win = window.length > 0 ? ` | ${window.length} requests, ${ok} 2xx, p99 ${p(window, 0.99)} ms` : "";
  return `${String(sample.atSeconds).padStart(4)}  ${rss.padEnd(33)}  ${String(sample.outboxUnpublished).padStart(6)}  ${consumers.padStart(22)}  ${String(sample.webhookQueue).padStart(13)}  ${String(sample.backlog).padStart(7)}${win}`;
}

function p(results: Array<{ ms: number }>, quantile: number): number {
  const sorted = results.map((r) => r.ms).sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * quantile))] ?? 0;
}

function summary(
  results: LoadResult[],
  seconds: number,
  received: Array<{ receivedAt: number; event: { occurred_at?: string } & object }>,
  started: number,
): string[] {
  const lines: string[] = [];
  for (const kind of ["create", "update", "position"] as const) {
    const all = results.filter((r) => r.kind === kind);
    const ok = all.filter((r) => r.status >= 200 && r.status < 300);
    const errors: Record<string, number> = {};
    for (const r of all.filter((x) => x.status < 200 || x.status >= 300))
      errors[r.status] = (errors[r.status] ?? 0) + 1;
    lines.push(
      `${kind}: ${(ok.length / seconds).toFixed(1)}/s answered 2xx (${ok.length} of ${all.length}), p50 ${p(ok, 0.5)} ms, p99 ${p(ok, 0.99)} ms, errors ${JSON.stringify(errors)}`,
    );
  }
  const latencies = received
    .filter((r) => r.receivedAt >= started)
    .map((r) => ({ ms: r.receivedAt - Date.parse((r.event as { occurred_at: string }).occurred_at) }));
  lines.push(
    `webhooks: ${(latencies.length / seconds).toFixed(1)}/s received (${received.length} requests), change → receiver p50 ${p(latencies, 0.5)} ms, p99 ${p(latencies, 0.99)} ms`,
  );
  return lines;
}

function judge(samples: Sample[], drained: Sample, drainMs: number, missing: number, events: number) {
  const lines: string[] = [];
  let ok = true;
  const steady = samples.slice(1);
  const third = Math.max(1, Math.floor(steady.length / 3));
  const mean = (values: number[]) => values.reduce((s, v) => s + v, 0) / Math.max(1, values.length);
  const first = steady.slice(0, third);
  const last = steady.slice(-third);
  for (const name of Object.keys(samples[0]?.rssMb ?? {})) {
    const a = mean(first.map((s) => s.rssMb[name] ?? 0));
    const b = mean(last.map((s) => s.rssMb[name] ?? 0));
    const held = b <= 1.5 * a;
    ok &&= held;
    lines.push(
      `${held ? "held" : "FAILED"}: ${name} memory ${samples[0]?.rssMb[name]} MB at start, ${samples.at(-1)?.rssMb[name]} MB at the end; last-third mean ${b.toFixed(0)} MB vs first-third ${a.toFixed(0)} MB (rule ≤ 1.5×)`,
    );
  }
  const a = mean(first.map((s) => s.backlog));
  const b = mean(last.map((s) => s.backlog));
  const flat = b <= 1.5 * a + 100;
  ok &&= flat;
  lines.push(
    `${flat ? "held" : "FAILED"}: backlog last-third mean ${b.toFixed(0)} vs first-third ${a.toFixed(0)} (rule ≤ 1.5× + 100)`,
  );
  const emptied = drained.backlog === 0;
  ok &&= emptied;
  lines.push(
    `${emptied ? "held" : "FAILED"}: backlog ${drained.backlog} ${drainMs} ms after the load ended (rule: 0 within 60 s)`,
  );
  ok &&= missing === 0;
  lines.push(
    `${missing === 0 ? "held" : "FAILED"}: ${events - missing} of ${events} events reached the webhook receiver`,
  );
  lines.push(ok ? "soak: passed" : "soak: FAILED");
  return { ok, lines };
}
