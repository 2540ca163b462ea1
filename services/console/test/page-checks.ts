/**
 * What every console page is checked for in Chromium: axe-core finds no serious or critical
 * violation, and every control (link, button, field) is reached by the Tab key and has an
 * accessible name. Screenshots of the main pages are taken as well.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/**
 * The README's folder only when asked (`UPDATE_SCREENSHOTS=1`; not a `CONSOLE_` variable, which the console itself would refuse at boot), so that a test run leaves the
 * tree clean; otherwise `var/console-screenshots/` at the repository's root (ignored by git).
 */
export const SCREENSHOTS = fileURLToPath(
  new URL(
    process.env.UPDATE_SCREENSHOTS === "1" ? "../docs/screenshots/" : "../../../var/console-screenshots/",
    import.meta.url,
  ),
);

interface AxeResult {
  violations: Array<{ id: string; impact: string | null; nodes: Array<{ target: unknown }> }>;
}

/**
 * Records, once per document, where each focus change lands: an entry per control focused (its
 * markup's start and its accessible name) and null when the focus leaves the page. The Tab walk
 * then costs one DevTools round trip per key press, and one read per batch.
 */
const FOCUS_RECORDER = `(() => {
  if (window.__focusLog) return;
  window.__focusLog = [];
  document.addEventListener("focusin", (event) => {
    const e = event.target;
    const label = e.labels && e.labels[0] ? e.labels[0].textContent : "";
    const name = (e.getAttribute("aria-label") || label || e.textContent || "").trim();
    window.__focusLog.push({ key: e.outerHTML.slice(0, 120), name });
  }, true);
  document.addEventListener("focusout", (event) => {
    if (event.relatedTarget === null) window.__focusLog.push(null);
  }, true);
})()`;

type Focused = { key: string; name: string } | null;

/** The controls reached before the focus came back to the first one; undefined: not back yet. */
function walkedRound(log: Focused[]): Focused[] | undefined {
  const first = log.find((entry) => entry !== null);
  if (!first) return undefined;
  const start = log.indexOf(first);
  let left = false;
  for (let i = start + 1; i < log.length; i++) {
    const entry = log[i] as Focused;
    if (entry?.key === first.key && left) return log.slice(start, i);
    if (entry?.key !== first.key) left = true;
  }
  return undefined;
}

export async function checkPage(page: Page, label: string): Promise<void> {
  // Evaluated by the DevTools protocol: the page's CSP (own scripts only) stays as it is. Once
  // per document: the console is one page, and compiling axe again cost a tenth of a second.
  if ((await page.evaluate("typeof axe")) === "undefined") await page.evaluate(axeSource);
  const result = (await page.evaluate("axe.run(document)")) as AxeResult;
  const serious = result.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  assert.deepEqual(
    serious.map((v) => `${v.id}: ${JSON.stringify(v.nodes.map((n) => n.target))}`),
    [],
    `axe on ${label}`,
  );

  const controls = (await page.evaluate(`[...document.querySelectorAll("a[href], button, input, select, textarea")]
    .filter((e) => !e.disabled && e.offsetParent !== null).length`)) as number;
  await page.evaluate(
    `${FOCUS_RECORDER}; document.activeElement && document.activeElement.blur(); window.__focusLog = [];`,
  );
  // Until the focus comes back round to the first control, having left it: a date-time field
  // takes several Tabs (one per part), so the count of presses is not the count of controls.
  let round: Focused[] | undefined;
  for (let pressed = 0; pressed < 400 && !round; ) {
    const batch = controls + 4;
    for (let i = 0; i < batch; i++) await page.keyboard.press("Tab");
    pressed += batch;
    round = walkedRound((await page.evaluate("window.__focusLog")) as Focused[]);
  }
  assert.ok(round, `the focus never came back round to the first control on ${label}`);
  const reached = new Set<string>();
  for (const focused of round) {
    if (!focused) continue;
    assert.ok(focused.name, `a control without a name on ${label}: ${focused.key}`);
    reached.add(focused.key);
  }
  assert.ok(reached.size >= controls, `${reached.size} of ${controls} controls reached by Tab on ${label}`);
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: `${SCREENSHOTS}${name}.png`, fullPage: true });
}
