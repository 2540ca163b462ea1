/**
 * Headless Chromium for browser tests (`@dos/service-kit/testing-browser`): Debian's `chromium`
 * driven by playwright-core, which downloads no browser of its own. This is the one place that
 * installs it: when /usr/bin/chromium is missing and the tests run as root, `apt-get install -y
 * chromium`; otherwise the test stops with the command to run. `npm test` calls it once before
 * any test starts, so that no browser test finds a half-installed Chromium.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

export const CHROMIUM_PATH = "/usr/bin/chromium";

export function ensureChromium(): string {
  if (existsSync(CHROMIUM_PATH)) return CHROMIUM_PATH;
  if (process.getuid?.() === 0) {
    const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
    execFileSync("apt-get", ["update", "-qq"], { stdio: "inherit", env });
    // Another test file may be installing something at the same time: wait for dpkg's lock.
    execFileSync("apt-get", ["install", "-y", "-qq", "-o", "DPkg::Lock::Timeout=600", "chromium"], {
      stdio: "inherit",
      env,
    });
  }
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`${CHROMIUM_PATH} is missing: install Debian's chromium (sudo apt-get install -y chromium)`);
  }
  return CHROMIUM_PATH;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: ensureChromium(),
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      // WebGL (the console's map) without a GPU: ANGLE on SwiftShader, Chromium's software renderer.
      "--use-angle=swiftshader",
      "--enable-unsafe-swiftshader",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}
