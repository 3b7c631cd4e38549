// bench.mjs: the size of the pages `glassllm trace --html` writes, the time
// it takes to write them, and the time the inspector takes to load and first
// draw them in headless Debian Chromium. A default-config checkpoint
// (max_len 128) and prompts of 16, 64, 122 and 128 characters, each followed
// by 16 decode steps: 122 + 16 overflows the window after 6 steps and 128 + 16
// at once, so those pages hold 10 and 16 window resets (docs/09-tracer.md:
// a reset records only its new token's row).
// Goals: at most 15 MB, written in at most 2 s, loaded and drawn in at most
// 1 s. Then the live inspector (`glassllm inspector`, with the WebAssembly
// engine): the page with the demo model at most 10 MB, the engine started
// with the model loaded (and warmed up) in at most 1 s, a 16-step traced
// generation in at most 2 s and at most 2.5 times `glassllm trace`'s whole
// process for the same prompt and steps, and no network request (the tests
// fail on one; here it is counted). Each run prints its command-line time
// beside two fresh pages' first generation, one asked right after the page
// is ready and one a second later, with the time in the engine, in turning
// its answer into a string and in parsing the JSON. Prints medians of 5
// runs; on a shared machine the times vary with its load, so read them
// beside `uptime`. Run by hand after a build:
//   node viewer/bench.mjs [--attention-only] [--live-only]
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { launch, glassllm, bin, fileUrl } from "../tests/viewer/browser.mjs";

const extra = process.argv.includes("--attention-only") ? ["--attention-only"] : [];
const RUNS = 5;
const work = fs.mkdtempSync(path.join(os.tmpdir(), "glassllm-bench-"));
const text =
  "The quick brown fox jumps over the lazy dog; pack my box with five dozen liquor jugs. " +
  "Sphinx of black quartz, judge my vow. How vexingly quick daft zebras jump!";
glassllm("init", "--out", path.join(work, "m"));
const { context, close } = await launch();
// The live inspector's budgets, on the bundled demo model.
// A 20-character prompt: the demo model copies its 17 letters, then ends.
const PROMPT = "C abcdefghijklmnopq=";
async function liveBudgets() {
  const page = path.join(work, "live.html");
  try {
    glassllm("inspector", "--out", page);
  } catch (e) {
    console.log("live inspector: not measured: " + String(e.stderr || e.message).trim());
    return;
  }
  const self = fileUrl(page),
    requests = [];
  await context.route("**/*", (route) => {
    if (route.request().url() === self) return route.continue();
    requests.push(route.request().url());
    return route.abort();
  });
  const starts = [],
    firsts = [],
    paused = [],
    commandLine = [];
  let steps = 0;
  // One page's first generation: right after the page says it is ready, or
  // after PAUSE_MS, the time a student takes to type a prompt (the page
  // warms its engine up while it loads; viewer/live.js, warmUp). Returns
  // [total ms, engine ms, text ms, parse ms].
  const PAUSE_MS = 1000;
  async function firstGeneration(pause) {
    const p = await context.newPage();
    await p.goto(self);
    await p.evaluate(() => window.glassllm.ready);
    starts.push(await p.evaluate(() => window.glassllm.startMs));
    const r = await p.evaluate(
      async ([prompt, pause]) => {
        await new Promise((done) => setTimeout(done, pause));
        const t0 = performance.now();
        const doc = await window.glassllm.generate(prompt, 16);
        const total = performance.now() - t0,
          t = window.glassllm.timings();
        return [total, t.engine_ms, t.text_ms, t.parse_ms, doc.steps.length - 1];
      },
      [PROMPT, pause],
    );
    steps = r[4];
    await p.close();
    return r.slice(0, 4);
  }
  const ms = (x) => x.toFixed(0).padStart(5);
  console.log(
    "run  glassllm trace ms | page, right after ready: ms (engine, text, parse) | " +
      `page, ${PAUSE_MS} ms after ready: ms (engine, text, parse)`,
  );
  for (let k = 0; k < RUNS; k++) {
    // The command line's whole process for the same prompt and steps, run
    // between the page's runs so that both see the machine's same load.
    const t0 = process.hrtime.bigint();
    execFileSync(
      bin,
      ["trace", "--prompt", PROMPT, "--steps", "16", "--out", path.join(work, "cli.json")],
      {
        stdio: "ignore",
      },
    );
    commandLine.push(Number(process.hrtime.bigint() - t0) / 1e6);
    const a = await firstGeneration(0),
      b = await firstGeneration(PAUSE_MS);
    firsts.push(a[0]);
    paused.push(b[0]);
    console.log(
      `${String(k + 1).padStart(3)}  ${ms(commandLine[k])}${" ".repeat(12)} | ` +
        `${ms(a[0])} (${a.slice(1).map(ms).join(",")})${" ".repeat(16)} | ` +
        `${ms(b[0])} (${b.slice(1).map(ms).join(",")})`,
    );
  }
  console.log(
    `live inspector (demo model): page ${(fs.statSync(page).size / 1e6).toFixed(2)} MB (goal 10), ` +
      `engine start + model load + warm-up ${median(starts).toFixed(0)} ms (goal 1000), ` +
      `${steps}-step traced generation ${median(firsts).toFixed(0)} ms (goal 2000), ` +
      `${requests.length} network requests (goal 0); medians of ${RUNS}`,
  );
  const cli = median(commandLine);
  console.log(
    `live generate vs glassllm trace (whole process, ${cli.toFixed(0)} ms), same prompt and ` +
      `steps, medians of ${RUNS}: right after ready ${median(firsts).toFixed(0)} ms, ` +
      `${(median(firsts) / cli).toFixed(2)}x; ${PAUSE_MS} ms after ready ` +
      `${median(paused).toFixed(0)} ms, ${(median(paused) / cli).toFixed(2)}x (goal 2.5)`,
  );
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(
  "prompt  steps  resets   page MB  write s (median of " +
    RUNS +
    ")  load + first draw ms (median of " +
    RUNS +
    ")",
);
for (const n of process.argv.includes("--live-only") ? [] : [16, 64, 122, 128]) {
  const page = path.join(work, `t${n}.html`);
  const writes = [];
  for (let k = 0; k < RUNS; k++) {
    const t0 = process.hrtime.bigint();
    execFileSync(
      bin,
      [
        "trace",
        path.join(work, "m"),
        "--prompt",
        text.slice(0, n),
        "--steps",
        "16",
        "--html",
        page,
        ...extra,
      ],
      { stdio: "ignore" },
    );
    writes.push(Number(process.hrtime.bigint() - t0) / 1e9);
  }
  const times = [];
  let steps = 0,
    resets = 0;
  for (let k = 0; k < RUNS; k++) {
    const p = await context.newPage();
    await p.goto(fileUrl(page));
    await p.waitForSelector('body[data-ready="1"]');
    times.push(await p.evaluate(() => window.glassllmInspector.firstRenderMs));
    [steps, resets] = await p.evaluate(() => {
      const s = window.glassllmInspector.state.trace.doc.steps;
      return [s.length, s.filter((x) => x.kind === "window_reset").length];
    });
    await p.close();
  }
  console.log(
    `${String(n).padStart(6)}  ${String(steps).padStart(5)}  ${String(resets).padStart(6)}  ${(fs.statSync(page).size / 1e6).toFixed(2).padStart(8)}  ${median(writes).toFixed(2).padStart(22)}  ${median(times).toFixed(0).padStart(31)}`,
  );
}
await liveBudgets();
await close();
fs.rmSync(work, { recursive: true, force: true });
console.log(
  "load average: " +
    os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(" ") +
    "; " +
    os.cpus()[0].model,
);
