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

export async function checkPage(page: Page, label: string): Promise<void> {
  // Evaluated by the DevTools protocol: the page's CSP (own scripts only) stays as it is.
  await page.evaluate(axeSource);
  const result = (await page.evaluate("axe.run(document)")) as AxeResult;
  const serious = result.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  assert.deepEqual(
    serious.map((v) => `${v.id}: ${JSON.stringify(v.nodes.map((n) => n.target))}`),
    [],
    `axe on ${label}`,
  );

  const controls = (await page.evaluate(`[...document.querySelectorAll("a[href], button, input, select, textarea")]
    .filter((e) => !e.disabled && e.offsetParent !== null).length`)) as number;
  const reached = new Set<string>();
  await page.evaluate("document.activeElement && document.activeElement.blur()");
  // Until the focus comes back round to the first control: a date-time field takes several Tabs
  // (one per part), so the count of presses is not the count of controls.
  let first: string | undefined;
  for (let i = 0; i < 400; i++) {
    await page.keyboard.press("Tab");
    const focused = (await page.evaluate(`(() => {
      const e = document.activeElement;
      if (!e || e === document.body) return null;
      const label = e.labels && e.labels[0] ? e.labels[0].textContent : "";
      const name = (e.getAttribute("aria-label") || label || e.textContent || "").trim();
      return { key: e.outerHTML.slice(0, 120), name };
    })()`)) as { key: string; name: string } | null;
    if (!focused) continue;
    assert.ok(focused.name, `a control without a name on ${label}: ${focused.key}`);
    if (focused.key === first && reached.size > 1) break;
    first ??= focused.key;
    reached.add(focused.key);
  }
  assert.ok(reached.size >= controls, `${reached.size} of ${controls} controls reached by Tab on ${label}`);
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: `${SCREENSHOTS}${name}.png`, fullPage: true });
}
