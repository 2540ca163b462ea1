/** Reading the text a service's /metrics answers: written here by the kit's own registry (prom-client). */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createMetrics } from "@dos/service-kit";
import { parseMetrics, total } from "./metrics-text.ts";

test("the samples of the metrics asked for, with their labels (escaped ones too); the others skipped", async () => {
  const metrics = createMetrics("webhook-dispatcher");
  const dead = metrics.counter("webhook_dead_letters_total", "Dead letters.", ["reason"]);
  dead.inc({ reason: "attempts" }, 3);
  dead.inc({ reason: 'quote " and \\ backslash' }, 2);
  metrics.gauge("webhook_queue_depth", "Pending.").set(17);
  metrics.counter("geo_positions_written_total", "Written.").inc(5);
  const text = await metrics.registry.metrics();

  const found = parseMetrics(text, new Set(["webhook_dead_letters_total", "webhook_queue_depth", "no_such_metric"]));
  assert.deepEqual([...found.keys()].sort(), ["webhook_dead_letters_total", "webhook_queue_depth"]);
  assert.deepEqual(found.get("webhook_dead_letters_total"), [
    { labels: { reason: "attempts", service: "webhook-dispatcher" }, value: 3 },
    { labels: { reason: 'quote " and \\ backslash', service: "webhook-dispatcher" }, value: 2 },
  ]);
  assert.equal(total(found, "webhook_dead_letters_total"), 5);
  assert.equal(total(found, "webhook_queue_depth"), 17);
  assert.equal(total(found, "geo_positions_written_total"), undefined, "not asked for");
  assert.equal(total(found, "no_such_metric"), undefined);
  // The process's start, which tells one process from the next at the same address.
  const started = parseMetrics(text, new Set(["process_start_time_seconds"]));
  assert.ok((total(started, "process_start_time_seconds") ?? 0) > 1.6e9);
});

test("malformed lines are skipped, special values read, timestamps ignored", () => {
  const text = [
    "# HELP m a metric",
    "m 1",
    'm{a="x"} 2 1700000000000',
    'm{a="unclosed} 3',
    "m{} 4",
    "m not-a-number",
    "m +Inf",
    "mm 100",
    "",
  ].join("\n");
  const found = parseMetrics(text, new Set(["m"]));
  assert.deepEqual(
    found.get("m")?.map((s) => s.value),
    [1, 2, 4, Number.POSITIVE_INFINITY],
  );
});
