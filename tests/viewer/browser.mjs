// browser.mjs: Debian's Chromium driven by playwright-core, for the
// inspector's tests (inspector.test.mjs) and benchmark (viewer/bench.mjs).
// Never downloads a browser: it runs /usr/bin/chromium (or $CHROMIUM) with a
// fresh profile and no background networking, and fails with a message
// saying how to install what is missing.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const chromiumPath = process.env.CHROMIUM || "/usr/bin/chromium";
const HINT =
  "run `bash scripts/install-deps.sh` as root (it installs chromium with apt and " +
  "playwright-core with `npm ci --prefix viewer`)";

export function requirements() {
  if (!fs.existsSync(chromiumPath)) throw new Error("no Chromium at " + chromiumPath + "; " + HINT);
  const pw = path.join(root, "viewer/node_modules/playwright-core");
  if (!fs.existsSync(pw))
    throw new Error("viewer/node_modules/playwright-core is missing; " + HINT);
  const require = createRequire(path.join(root, "viewer/package.json"));
  return require("playwright-core");
}

export async function launch() {
  const { chromium } = requirements();
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "glassllm-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    acceptDownloads: true,
    viewport: { width: 1400, height: 1000 },
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  });
  const close = async () => {
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  };
  return { context, close };
}

// The glassllm binary: $GLASSLLM_BIN (set by CTest), else build/glassllm.
export const bin = process.env.GLASSLLM_BIN || path.join(root, "build/glassllm");

export function glassllm(...args) {
  if (!fs.existsSync(bin))
    throw new Error("no glassllm binary at " + bin + "; build first (bash scripts/build.sh)");
  return execFileSync(bin, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

export function fileUrl(p) {
  return "file://" + path.resolve(p);
}
