// window_screenshots.mjs: the pictures of docs/14-real-models.md's EXAONE
// section: a hybrid model's sliding window in the inspector, taken from the
// real page in headless Debian Chromium at a projector's 1024x768 (as
// screenshots.mjs takes docs/12's). Run by hand after a build:
//   node viewer/window_screenshots.mjs docs/images
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { launch, glassllm, fileUrl, root } from "../tests/viewer/browser.mjs";

const out = path.resolve(process.argv[2] || "docs/images");
fs.mkdirSync(out, { recursive: true });
const work = fs.mkdtempSync(path.join(os.tmpdir(), "glassllm-window-shots-"));
const page_ = path.join(work, "hybrid.html");
// The test folder of docs/14: 4 layers, 3 sliding with a window of 4.
const hybrid = path.join(root, "tests/data/exaone-4.0-tiny-hybrid");
glassllm("trace", hybrid, "--prompt", "Hello world", "--steps", "3", "--html", page_);

const { context, close } = await launch();
const page = await context.newPage();
await page.setViewportSize({ width: 1024, height: 768 });
const shot = async (fragment, name) => {
  await page.goto(fileUrl(page_) + "#" + fragment);
  await page.waitForSelector('body[data-ready="1"]');
  await page.screenshot({ path: path.join(out, "inspector-" + name + ".png") });
};
await shot("view=attention&step=0&mode=masked", "window");
await shot("view=cache&step=3", "window-cache");
await close();
fs.rmSync(work, { recursive: true, force: true });
console.log("wrote inspector-window*.png to " + out);
