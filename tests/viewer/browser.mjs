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

// Opens `url` in a new page of `context` and waits until the inspector has
// drawn it (body[data-ready="1"]; with fonts, its fonts loaded too).
// page.errors collects every uncaught error of the page's scripts, which
// the tests expect to stay empty. viewport: {width, height}; beforeGoto:
// called with the page before it loads (listeners, init scripts).
export async function openPage(context, url, { viewport, fonts = false, beforeGoto } = {}) {
  const page = await context.newPage();
  if (viewport) await page.setViewportSize(viewport);
  page.errors = [];
  page.on("pageerror", (e) => page.errors.push(e.message));
  if (beforeGoto) await beforeGoto(page);
  await page.goto(url);
  await page.waitForSelector(
    fonts ? 'body[data-ready="1"][data-fonts="1"]' : 'body[data-ready="1"]',
  );
  return page;
}

// The glassllm binary: $GLASSLLM_BIN (set by CTest), else build/glassllm.
export const bin = process.env.GLASSLLM_BIN || path.join(root, "build/glassllm");

export function glassllm(...args) {
  if (!fs.existsSync(bin))
    throw new Error("no glassllm binary at " + bin + "; build first (bash scripts/build.sh)");
  return execFileSync(bin, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

// A model as wide as a real 1B one in layers and heads (30 layers, 32 query
// heads sharing 8 K/V heads; the widths small, the weights random), written
// to `dir`: the inspector's layer and head selection and its summary maps
// are shown and tested on it.
export function initWideModel(dir) {
  glassllm(
    "init",
    "--out",
    dir,
    "--n-layers",
    "30",
    "--n-heads",
    "32",
    "--n-kv-heads",
    "8",
    "--d-model",
    "256",
    "--d-ff",
    "256",
  );
}

export function fileUrl(p) {
  return "file://" + path.resolve(p);
}

// A trace file as the tests read it: version 2 packs each tensor's values
// in base64 of little-endian float32 (or float64); they come back here as
// lists of numbers rounded to the digits the tracer kept, the numbers a
// version 1 trace wrote as text. Decoded with Node's Buffer, not the page's
// code.
export function readTrace(file) {
  const doc = JSON.parse(fs.readFileSync(file, "utf8"));
  const p = doc.options.precision;
  const digits = p > 0 ? p : doc.dtype === "float32" ? 9 : 17;
  const width = doc.dtype === "float64" ? 8 : 4;
  const unpack = (text) => {
    const bytes = Buffer.from(text, "base64");
    return Array.from({ length: bytes.length / width }, (_, i) => {
      const v = width === 8 ? bytes.readDoubleLE(i * 8) : bytes.readFloatLE(i * 4);
      return Number.isFinite(v) ? Number(v.toPrecision(digits)) : v;
    });
  };
  for (const step of doc.steps)
    for (const snap of step.snapshots)
      for (const field of ["data", "grad"])
        if (typeof snap[field] === "string") snap[field] = unpack(snap[field]);
  return doc;
}

// The inspector's number format, written with Intl rather than the page's
// code: 4 significant digits; 3, in scientific notation, under 1e-3 and
// from 1e5 up; trailing zeros dropped.
export function fourDigits(v) {
  if (v === 0) return "0";
  const a = Math.abs(v);
  if (a < 1e-3 || a >= 1e5)
    return new Intl.NumberFormat("en-US", { notation: "scientific", maximumSignificantDigits: 3 })
      .format(v)
      .replace("E", "e");
  return new Intl.NumberFormat("en-US", { maximumSignificantDigits: 4, useGrouping: false }).format(
    v,
  );
}
