// screenshots.mjs: the pictures of docs/12-inspector.md, taken from the real
// page in headless Debian Chromium at a projector's 1024x768 and at
// 1600x1000. Run by hand after a build:
//   node viewer/screenshots.mjs docs/images
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { launch, glassllm, initWideModel, fileUrl, root } from "../tests/viewer/browser.mjs";

const out = path.resolve(process.argv[2] || "docs/images");
fs.mkdirSync(out, { recursive: true });
const work = fs.mkdtempSync(path.join(os.tmpdir(), "glassllm-shots-"));
const at = (f) => path.join(work, f);
// The bundled model (models/demo), trained on copy among other tasks, so the
// pictures show attention that has learned something.
const model = path.join(root, "models/demo");
const prompt = "C abcXYZ=";
const trace = (...args) => glassllm("trace", model, "--prompt", prompt, "--steps", "6", ...args);
trace("--html", at("r.html"), "--out", at("r.json"));
trace("--attention", "grouped", "--out", at("g.json"));
trace("--grads", "--html", at("d.html"));
glassllm("trace", model, "--prompt", "C GlassLM2026=", "--steps", "6", "--html", at("readme.html"));
initWideModel(at("big"));
glassllm("trace", at("big"), "--prompt", "C abcXYZ=", "--steps", "1", "--html", at("big.html"));
// The page that runs the model itself (needs the WebAssembly engine built).
glassllm("inspector", "--out", at("live.html"));

const { context, close } = await launch();
const page = await context.newPage();
const shot = (name) => page.screenshot({ path: path.join(out, "inspector-" + name + ".png") });
const open = async (file, width, height) => {
  await page.setViewportSize({ width, height });
  await page.goto(fileUrl(at(file)));
  await page.waitForSelector('body[data-ready="1"]');
};

await open("r.html", 1024, 768);
await shot("projector"); // every layer on a 1024x768 screen
await open("r.html", 1600, 1000);
await shot("tour");
await page.click('canvas[data-layer="3"][data-head="1"]');
await page.click("#zoom-fill");
await page.keyboard.press("ArrowRight");
await page.keyboard.press("ArrowRight");
const box = await page.locator("#zoom-canvas").boundingBox();
await page.mouse.move(box.x + box.width * 0.55, box.y + box.height * 0.8);
await shot("zoom");
await page.keyboard.press("Escape");
await page.check('input[value="attn.scores"]');
await shot("scores");
await page.check('input[value="attn.softmax"]');
// Presentation mode at a projector's size, from a link: the README's prompt.
await page.setViewportSize({ width: 1024, height: 768 });
await page.goto(fileUrl(at("readme.html")) + "#view=attention&step=0&layer=3&present=1");
await page.waitForSelector('body[data-ready="1"][data-fonts="1"]');
await shot("present");
await open("r.html", 1600, 1000);
await page.click('#timeline [data-step="3"]');
await page.click("[data-tab=qk]");
await page.selectOption("#qk-layer", "3");
await page.selectOption("#qk-head", "1");
await page.click("#panel-qk details.explain summary");
await shot("qk");
await page.click("[data-tab=cache]");
await shot("cache");
await page.click("[data-tab=graph]");
await shot("graph");
await page.click("[data-tab=compare]");
await page.setInputFiles("#compare-file", at("g.json"));
await page.waitForSelector("#compare-max");
await shot("compare");
await open("d.html", 1600, 1000);
await page.click("[data-tab=grads]");
await page.click('#timeline [data-step="3"]');
await shot("grads");
await open("big.html", 1600, 1000);
await shot("big");
// The live page on a projector: a prompt typed and generated, then a target
// continuation's loss and gradients.
await page.setViewportSize({ width: 1024, height: 768 });
await page.goto(fileUrl(at("live.html")));
await page.evaluate(() => window.glassllm.ready);
await page.fill("#live-prompt", "R stressed=");
await page.click("#live-generate");
await page.waitForSelector('#timeline [data-step="1"]');
await shot("live");
await page.click("[data-tab=grads]");
await page.fill("#live-target", "desserts");
await page.click("#live-grads");
await page.waitForSelector("#target-chart:not([hidden])");
await page.evaluate(() => document.getElementById("target-form").scrollIntoView());
await shot("live-grads");
await close();
fs.rmSync(work, { recursive: true, force: true });
console.log("wrote inspector-*.png to " + out);
