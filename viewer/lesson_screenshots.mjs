// lesson_screenshots.mjs: the projector pictures of docs/teaching/, taken from
// the real inspector page in headless Debian Chromium at 1024x768, the
// resolution a classroom projector is most likely to show. Run by hand after
// a build (and after models/demo changes):
//   node viewer/lesson_screenshots.mjs docs/teaching/images
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { launch, glassllm, fileUrl, root } from "../tests/viewer/browser.mjs";

const out = path.resolve(process.argv[2] || "docs/teaching/images");
fs.mkdirSync(out, { recursive: true });
const work = fs.mkdtempSync(path.join(os.tmpdir(), "glassllm-lesson-"));
const at = (f) => path.join(work, f);
const model = path.join(root, "models/demo");
// The lessons' traces: copy (lesson 1, 2) and reverse with gradients (lesson 3).
glassllm("trace", model, "--prompt", "C abcXYZ=", "--steps", "6", "--html", at("copy.html"));
glassllm(
  "trace",
  model,
  "--prompt",
  "R stressed=",
  "--steps",
  "8",
  "--grads",
  "--html",
  at("rev.html"),
);

const { context, close } = await launch();
const page = await context.newPage();
await page.setViewportSize({ width: 1024, height: 768 });
const shot = (name) => page.screenshot({ path: path.join(out, name + ".png") });
const open = async (file) => {
  await page.goto(fileUrl(at(file)));
  await page.waitForSelector('body[data-ready="1"]');
};
// Scrolls so that `selector` starts at the top of the screen.
const top = async (selector) => {
  await page.locator(selector).evaluate((el) => el.scrollIntoView({ block: "start" }));
};

// Lesson 1: the copy head (layer 3, head 1) enlarged at decode step 2, while
// the model writes "c": its bright cell sits on the prompt's "c".
await open("copy.html");
await page.keyboard.press("ArrowRight");
await page.keyboard.press("ArrowRight");
await shot("lesson1-steps");
await page.click('canvas[data-layer="3"][data-head="1"]');
// The cell cursor from key 0 to key 4, the prompt's "c", so the line above
// the map reads out the winning weight.
for (let i = 0; i < 4; i++) await page.keyboard.press("ArrowRight");
await top("#panel-attention");
await shot("lesson1-copy-head");
await page.keyboard.press("Escape");
// The same head from the lesson plan's link, in presentation mode.
await page.goto(fileUrl(at("copy.html")) + "#view=attention&step=2&layer=3&head=1&present=1");
await page.waitForFunction(() => window.glassllmInspector.state.present);
await shot("lesson1-present-head");
await page.goto(fileUrl(at("copy.html")) + "#view=attention&step=2");

// Lesson 2: the K/V cache after the last decode step, and the op graph of a
// decode step with its cache nodes.
await page.click("[data-tab=cache]");
await page.keyboard.press("End");
await top("#panel-cache");
await shot("lesson2-cache");
await page.click("[data-tab=graph]");
await page.click('#timeline [data-step="1"]');
await top("#panel-graph");
await shot("lesson2-graph");

// Lesson 3: which positions each chosen token of "desserts" depended on.
await open("rev.html");
await page.click("[data-tab=grads]");
await page.click('#timeline [data-step="2"]');
await top("#panel-grads");
await shot("lesson3-grads");
await close();
fs.rmSync(work, { recursive: true, force: true });
console.log("wrote 6 pictures to " + out);
