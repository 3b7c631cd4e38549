// bench.mjs: load-and-first-render time of the inspector in headless Debian
// Chromium, for pages written by `glassllm trace --html` from a default-config
// checkpoint with prompts of 16, 64, 112 and 128 tokens and 16 decode steps.
// The default max_len is 128: after a 128-token prompt the cache is full, so
// every decode step is a window reset that runs all 128 tokens again (and
// records them), which makes that page about 40 times larger; 112 + 16 fills
// the window exactly.
// Prints the median of 5 loads: the time from navigation start to the end of
// the first render (the page records it), and the page's size. Run by hand
// after a build:   node viewer/bench.mjs [--screenshots DIR]
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { launch, glassllm, fileUrl } from "../tests/viewer/browser.mjs";

const shots = process.argv.includes("--screenshots")
  ? process.argv[process.argv.indexOf("--screenshots") + 1]
  : null;
const work = fs.mkdtempSync(path.join(os.tmpdir(), "glassllm-bench-"));
const text =
  "The quick brown fox jumps over the lazy dog; pack my box with five dozen liquor jugs. " +
  "Sphinx of black quartz, judge my vow. How vexingly quick daft zebras jump!";
glassllm("init", "--out", path.join(work, "m"));
const { context, close } = await launch();
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log("prompt tokens  steps  page bytes  load + first render (median of 5)");
for (const n of [16, 64, 112, 128]) {
  const page = path.join(work, `t${n}.html`);
  glassllm(
    "trace",
    path.join(work, "m"),
    "--prompt",
    text.slice(0, n),
    "--steps",
    "16",
    "--html",
    page,
  );
  const times = [];
  let steps = 0;
  for (let k = 0; k < 5; k++) {
    const p = await context.newPage();
    await p.goto(fileUrl(page));
    await p.waitForSelector('body[data-ready="1"]');
    times.push(await p.evaluate(() => window.glassllmInspector.firstRenderMs));
    steps = await p.evaluate(() => window.glassllmInspector.state.trace.doc.steps.length);
    if (shots && k === 0 && n === 16)
      await p.screenshot({ path: path.join(shots, "bench-16.png") });
    await p.close();
  }
  console.log(
    `${String(n).padStart(13)}  ${String(steps).padStart(5)}  ${String(fs.statSync(page).size).padStart(10)}  ${median(times).toFixed(0)} ms`,
  );
}
await close();
fs.rmSync(work, { recursive: true, force: true });
