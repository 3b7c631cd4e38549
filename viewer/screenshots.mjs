// screenshots.mjs: the pictures of docs/12-inspector.md, taken from the real
// page in headless Debian Chromium. Run by hand after a build:
//   node viewer/screenshots.mjs docs/images
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { launch, glassllm, fileUrl, root } from "../tests/viewer/browser.mjs";

const out = path.resolve(process.argv[2] || "docs/images");
fs.mkdirSync(out, { recursive: true });
const work = fs.mkdtempSync(path.join(os.tmpdir(), "glassllm-shots-"));
const at = (f) => path.join(work, f);
// The bundled model (models/demo), trained on copy among other tasks, so the
// pictures show attention that has learned something.
const model = path.join(root, "models/demo");
const prompt = "C abcXYZ=";
glassllm(
  "trace",
  model,
  "--prompt",
  prompt,
  "--steps",
  "6",
  "--html",
  at("r.html"),
  "--out",
  at("r.json"),
);
glassllm(
  "trace",
  model,
  "--prompt",
  prompt,
  "--steps",
  "6",
  "--attention",
  "grouped",
  "--out",
  at("g.json"),
);
glassllm("trace", model, "--prompt", prompt, "--steps", "6", "--grads", "--html", at("d.html"));

const { context, close } = await launch();
const page = await context.newPage();
await page.setViewportSize({ width: 1280, height: 900 });
const shot = async (name, clip) =>
  page.screenshot({ path: path.join(out, "inspector-" + name + ".png"), fullPage: !clip, clip });
await page.goto(fileUrl(at("r.html")));
await page.waitForSelector('body[data-ready="1"]');
await page.keyboard.press("ArrowRight");
await page.keyboard.press("ArrowRight");
await shot("tour", { x: 0, y: 0, width: 1280, height: 900 });
await page.keyboard.press("Home");
await page.click('canvas[data-layer="1"][data-head="2"]');
const box = await page.locator("#zoom-canvas").boundingBox();
await page.mouse.move(box.x + box.width * 0.45, box.y + box.height * 0.75);
const zoom = await page.locator("#panel-attention").boundingBox();
await shot("zoom", { x: 0, y: zoom.y - 10, width: 1280, height: Math.min(760, zoom.height) });
await page.keyboard.press("Escape");
await page.click("[data-tab=cache]");
await page.keyboard.press("End");
const cache = await page.locator("#panel-cache").boundingBox();
await shot("cache", { x: 0, y: cache.y - 10, width: 1280, height: 640 });
await page.click("[data-tab=graph]");
await page.click('#timeline [data-step="1"]');
const graph = await page.locator("#panel-graph").boundingBox();
await shot("graph", { x: 0, y: graph.y - 10, width: 1280, height: 760 });
await page.click("[data-tab=compare]");
await page.setInputFiles("#compare-file", at("g.json"));
await page.waitForSelector("#compare-max");
const cmp = await page.locator("#panel-compare").boundingBox();
await shot("compare", { x: 0, y: cmp.y - 10, width: 1280, height: Math.min(900, cmp.height + 20) });
await page.goto(fileUrl(at("d.html")));
await page.waitForSelector('body[data-ready="1"]');
await page.click("[data-tab=grads]");
await page.click('#timeline [data-step="3"]');
const gr = await page.locator("#panel-grads").boundingBox();
await shot("grads", { x: 0, y: gr.y - 10, width: 1280, height: gr.height + 20 });
await close();
fs.rmSync(work, { recursive: true, force: true });
console.log("wrote inspector-*.png to " + out);
