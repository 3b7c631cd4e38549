// projector.test.mjs: the inspector as a class sees it on a projector, in
// headless Debian Chromium: every layer of the bundled model (models/demo)
// on one 1024x768 screen, token labels, honest colour scales, the enlarged
// map, the readout, the cache as a tensor, the Q·K arithmetic, the
// explanations, autoplay, presentation mode, smaller fixes, malformed
// traces, and a 30-layer x 32-head model. Run by CTest as
// viewer_browser_tests, or by hand after a build:
//   node --test tests/viewer/projector.test.mjs
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  launch,
  glassllm,
  initWideModel,
  fileUrl,
  root,
  readTrace,
  fourDigits,
  openPage,
} from "./browser.mjs";

const artifacts = process.env.GLASSLLM_ARTIFACTS || path.join(root, "build/viewer-artifacts");
const work = fs.mkdtempSync(path.join(os.tmpdir(), "glassllm-projector-"));
const at = (name) => path.join(work, name);
const demo = path.join(root, "models/demo");
const PROMPT = "C abcXYZ=";

let browser;
const json = {};

function trace(name, dir, prompt, ...extra) {
  glassllm(
    "trace",
    dir,
    "--prompt",
    prompt,
    "--out",
    at(name + ".json"),
    "--html",
    at(name + ".html"),
    ...extra,
  );
  json[name] = readTrace(at(name + ".json"));
}

before(async () => {
  fs.mkdirSync(artifacts, { recursive: true });
  trace("demo", demo, PROMPT, "--steps", "6");
  trace("demo-b", demo, PROMPT, "--steps", "6", "--attention", "grouped", "--precision", "0");
  glassllm("init", "--out", at("m"));
  trace("untrained", at("m"), PROMPT, "--steps", "2");
  initWideModel(at("big"));
  trace("big", at("big"), "C abc=", "--steps", "1");
  browser = await launch();
});

after(async () => {
  if (browser) await browser.close();
  fs.rmSync(work, { recursive: true, force: true });
});

function open(name, width = 1600, height = 1000) {
  return openPage(browser.context, fileUrl(at(name + ".html")), {
    viewport: { width, height },
  });
}

async function setFile(page, selector, file) {
  const before = await page.evaluate(() => window.glassllmInspector.state.filesRead);
  await page.setInputFiles(selector, file);
  await page.waitForFunction((n) => window.glassllmInspector.state.filesRead > n, before);
}

const shot = (page, name) =>
  page.screenshot({ path: path.join(artifacts, name + ".png"), fullPage: false });

// A value of the JSON: snapshot `name` of `layer` at step `step`, head, row, column.
function value(doc, step, name, layer, head, r, c) {
  const snap = doc.steps[step].snapshots.find((s) => s.name === name && s.layer === layer);
  const [, , T, m] = snap.shape;
  return snap.data[(snap.heads.indexOf(head) * T + r) * m + c];
}

// The pixel at the middle of cell (r, c) of a map canvas, as [r, g, b].
async function pixel(page, selector, r, c) {
  return page.evaluate(
    ([sel, r, c]) => {
      const cv = document.querySelector(sel);
      const [left, top, w, h] = cv.dataset.inset.split(",").map(Number);
      const st = window.glassllmInspector.state;
      const snap = snapshot(st.trace, st.step, st.mode, Number(cv.dataset.layer));
      const [, , T, m] = snap.shape;
      const k = cv.width / parseFloat(cv.style.width);
      const x = Math.floor((left + ((c + 0.5) * w) / m) * k),
        y = Math.floor((top + ((r + 0.5) * h) / T) * k);
      return [...cv.getContext("2d").getImageData(x, y, 1, 1).data.slice(0, 3)];
    },
    [selector, r, c],
  );
}

const VIRIDIS_LO = [0x44, 0x01, 0x54],
  VIRIDIS_HI = [0xfd, 0xe7, 0x25];
const dist = (a, b) => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);

test("at 1024x768 the attention of every layer of the demo model fits without scrolling", async () => {
  for (const [w, h] of [
    [1024, 768],
    [1600, 1000],
  ]) {
    const page = await open("demo", w, h);
    const rows = await page.$$eval(".layer-row", (rs) =>
      rs.map((r) => {
        const b = r.getBoundingClientRect();
        return { layer: r.dataset.layer, top: b.top, bottom: b.bottom, right: b.right };
      }),
    );
    assert.deepEqual(
      rows.map((r) => r.layer),
      ["0", "1", "2", "3"],
    );
    assert.equal(await page.evaluate(() => window.scrollY), 0);
    for (const r of rows) {
      assert.ok(
        r.top >= 0 && r.bottom <= h,
        `${w}x${h}: layer ${r.layer} spans ${r.top}-${r.bottom}`,
      );
      assert.ok(r.right <= w, `${w}x${h}: layer ${r.layer} ends at x = ${r.right}`);
    }
    // Every map's cells stay taller than a hairline.
    const inner = await page.$$eval("#grid canvas", (cs) =>
      cs.map((c) => Number(c.dataset.inset.split(",")[3])),
    );
    assert.ok(Math.min(...inner) >= 36, `smallest map ${Math.min(...inner)} px high`);
    await shot(page, `projector-${w}x${h}`);
    await page.close();
  }
});

test("every map has token labels on both axes at 14 px or more, horizontal where they fit", async () => {
  const page = await open("demo");
  const maps = await page.$$eval("#grid canvas", (cs) => cs.map((c) => ({ ...c.dataset })));
  assert.equal(maps.length, 16);
  for (const m of maps) {
    assert.ok(Number(m.font) >= 14);
    // 9 tokens, a 1600-pixel screen: every key labelled, horizontally.
    assert.equal(m.colStride, "1");
    assert.equal(m.colLabels, "horizontal");
    assert.ok(Number(m.rowStride) <= 2, "row labels every " + m.rowStride);
  }
  // The maps fill the width: the last map ends near the right edge.
  const right = await page.$$eval("#grid canvas", (cs) =>
    Math.max(...cs.map((c) => c.getBoundingClientRect().right)),
  );
  assert.ok(right > 1600 * 0.85, "maps end at x = " + right);
  // The labels are the tokens, the space as \u2423.
  const labels = await page.evaluate(() => [0, 1, 2].map((c) => colLabelOf(c)));
  assert.deepEqual(labels, ["C", "\u2423", "a"]);
  assert.equal(await page.textContent('#tokens .tok[data-index="1"] .t'), "\u2423");
  await page.close();
});

test("softmax maps share one 0-1 scale with a numbered legend; per-map scaling is an option", async () => {
  const page = await open("untrained");
  assert.equal(await page.getAttribute("#legend", "data-lo"), "0");
  assert.equal(await page.getAttribute("#legend", "data-hi"), "1");
  assert.equal(await page.getAttribute("#legend", "data-ticks"), "0,0.5,1");
  // An untrained model's rows are near uniform: the last prefill row of
  // 9 keys is about 1/9 everywhere, which on the shared scale is dark.
  const doc = json.untrained;
  const v = value(doc, 0, "attn.softmax", 0, 0, 8, 4);
  assert.ok(v > 0.05 && v < 0.2, "softmax " + v);
  const shared = await pixel(page, 'canvas[data-layer="0"][data-head="0"]', 8, 4);
  assert.ok(dist(shared, VIRIDIS_LO) < dist(shared, VIRIDIS_HI), "shared: " + shared);
  await shot(page, "untrained-shared-scale");
  await page.selectOption("#color-mode", "each");
  // Per map, the largest value of the map is the top of the scale.
  let best = [0, 0, -1];
  const [, , T, m] = doc.steps[0].snapshots.find((s) => s.name === "attn.softmax").shape;
  for (let r = 0; r < T; r++)
    for (let c = 0; c < m; c++) {
      const x = value(doc, 0, "attn.softmax", 0, 0, r, c);
      if (x > best[2]) best = [r, c, x];
    }
  const top = await pixel(page, 'canvas[data-layer="0"][data-head="0"]', best[0], best[1]);
  assert.ok(dist(top, VIRIDIS_HI) < 40, "per map maximum: " + top);
  await page.close();
});

test("raw and masked scores use a scale symmetric around 0, with numbers", async () => {
  const page = await open("demo");
  const doc = json.demo;
  await page.check('input[value="attn.scores"]');
  let lim = 0;
  for (const snap of doc.steps[0].snapshots)
    if (snap.name === "attn.scores") for (const v of snap.data) lim = Math.max(lim, Math.abs(v));
  const lo = Number(await page.getAttribute("#legend", "data-lo"));
  const hi = Number(await page.getAttribute("#legend", "data-hi"));
  assert.equal(hi, lim);
  assert.equal(lo, -lim);
  const ticks = (await page.getAttribute("#legend", "data-ticks")).split(",").map(Number);
  assert.ok(ticks.includes(0) && ticks.length >= 3);
  for (const t of ticks) assert.equal(Number(t.toPrecision(1)), t, "round tick " + t);
  await page.check('input[value="attn.scores_masked"]');
  assert.equal(Number(await page.getAttribute("#legend", "data-hi")), lim);
  await page.close();
});

test("the enlarged map hides the grid, fills the screen on request, and the readout never goes stale", async () => {
  const page = await open("demo");
  const doc = json.demo;
  await page.click('canvas[data-layer="1"][data-head="2"]');
  assert.ok(await page.isHidden("#grid"), "the grid is hidden under the enlarged map");
  assert.ok(await page.isVisible("#zoom-canvas"));
  await page.click("#zoom-fill");
  const box = await page.locator("#zoom-canvas").boundingBox();
  assert.ok(box.width > 1600 * 0.5 || box.height > 1000 * 0.8, `${box.width} x ${box.height}`);
  await shot(page, "zoom-fill");
  await page.keyboard.press("Escape");
  assert.ok(await page.isVisible("#grid"));
  // Hover a cell, then change what is shown: the readout follows.
  const canvas = page.locator('canvas[data-layer="0"][data-head="1"]');
  const b = await canvas.boundingBox();
  const [left, top, w, h] = (await canvas.getAttribute("data-inset")).split(",").map(Number);
  await page.mouse.move(b.x + left + (2.5 * w) / 9, b.y + top + (6.5 * h) / 9);
  assert.match(
    await page.textContent("#readout"),
    new RegExp("softmax = " + fourDigits(value(doc, 0, "attn.softmax", 0, 1, 6, 2)) + "$"),
  );
  await page.mouse.move(0, 0);
  await page.check('input[value="attn.scores"]');
  assert.ok(
    (await page.textContent("#readout")).endsWith(
      "raw score = " + fourDigits(value(doc, 0, "attn.scores", 0, 1, 6, 2)),
    ),
  );
  // A decode step has one row: row 6 is gone, so the readout says so.
  await page.click('#timeline [data-step="1"]');
  assert.equal(await page.textContent("#readout"), "Hover a cell to read its value.");
  await page.close();
});

test("the K/V cache is drawn as a growing tensor with named axes, round ticks and resets", async () => {
  // 12 + 8 tokens overflow max_len 16: window resets.
  glassllm("init", "--out", at("m16"), "--max-len", "16");
  trace("resets", at("m16"), "The quick br", "--steps", "8");
  const doc = json.resets;
  const page = await open("resets");
  await page.click("[data-tab=cache]");
  const labels = await page.$$eval("#timeline button", (bs) => bs.map((b) => b.textContent));
  const resets = doc.steps.filter((s) => s.kind === "window_reset").length;
  assert.ok(resets >= 2, "resets: " + resets);
  assert.deepEqual(
    labels.filter((l) => l.startsWith("r")),
    Array.from({ length: resets }, (_, i) => "r" + (i + 1)),
  );
  for (let s = 0; s < doc.steps.length; s++) {
    const st = doc.steps[s];
    const held = Number(await page.getAttribute("#cache-tensor", "data-held"));
    const written = Number(await page.getAttribute("#cache-tensor", "data-written"));
    assert.equal(held, st.cache.length, "step " + s);
    assert.equal(written, st.kind === "decode" ? 1 : st.cache.length, "step " + s);
    if (st.kind === "window_reset") {
      assert.match(await page.textContent("#step-info"), /window reset r\d+: the cache was full/);
      if (s === doc.steps.length - 1) await shot(page, "cache-after-resets");
    }
    await page.keyboard.press("ArrowRight");
  }
  await page.close();
});

test("the Q\u00b7K view shows q, every k, q\u00b7k/\u221ad and the softmax with the trace's numbers", async () => {
  const page = await open("demo");
  const doc = json.demo;
  await page.click('#timeline [data-step="2"]');
  await page.click("[data-tab=qk]");
  await page.selectOption("#qk-layer", "3");
  await page.selectOption("#qk-head", "2");
  const s = doc.steps[2];
  const hd = doc.config.head_dim;
  const q = s.snapshots.find((x) => x.name === "attn.q" && x.layer === 3);
  const qv = q.data.slice(2 * hd, 3 * hd); // head 2, the one row
  // Key j's vector: from the step that computed position j (K/V head 1).
  const kOf = (pos) => {
    for (let i = 2; i >= 0; i--) {
      const st = doc.steps[i];
      const r = pos - st.start;
      if (r < 0 || r >= st.tokens.length) continue;
      const k = st.snapshots.find((x) => x.name === "attn.k" && x.layer === 3);
      const T = k.shape[2];
      return k.data.slice((1 * T + r) * hd, (1 * T + r + 1) * hd);
    }
  };
  const rows = await page.$$eval("#qk-table tbody tr[data-key]", (trs) =>
    trs.map((tr) =>
      Object.fromEntries(
        [...tr.querySelectorAll("td[data-col]")].map((td) => [td.dataset.col, td.textContent]),
      ),
    ),
  );
  assert.equal(rows.length, s.keys.count);
  rows.forEach((row, j) => {
    const k = kOf(j);
    const dot = qv.reduce((a, v, i) => a + v * k[i], 0);
    // Shown to 4 significant digits (3 under 1e-3): within half a unit of
    // the last, beside what recomputing from 6-digit vectors adds.
    const near = (shown, want, abs) =>
      Math.abs(Number(shown) - want) <=
      (Math.abs(want) < 1e-3 ? 5e-3 : 5e-4) * Math.abs(want) + abs;
    assert.ok(near(row.dot, dot, 2e-3 * Math.max(1, Math.abs(dot))), `dot ${j}`);
    const recorded = value(doc, 2, "attn.scores", 3, 2, 0, j);
    assert.ok(near(row.score, dot / Math.sqrt(hd), 2e-3), `score ${j}`);
    assert.ok(near(row.recorded, recorded, 1e-6), `recorded ${j}`);
    const p = value(doc, 2, "attn.softmax", 3, 2, 0, j);
    assert.ok(near(row.prob, p, 1e-9), `softmax ${j}`);
    assert.ok(near(row.softmax, p, 2e-3), `recomputed softmax ${j}`);
  });
  await shot(page, "qk");
  await page.close();
});

test("every view explains itself; steps play automatically; presentation mode", async () => {
  const page = await open("demo");
  const panels = await page.$$eval(".panel", (ps) =>
    ps.map((p) => ({
      id: p.id,
      text: p.querySelector("details.explain")
        ? p.querySelector("details.explain").textContent
        : "",
    })),
  );
  assert.equal(panels.length, 7);
  for (const p of panels) {
    assert.match(p.text, /What you see:/, p.id);
    assert.match(p.text, /What to look for:/, p.id);
  }
  await page.click("#panel-attention details.explain summary");
  assert.ok(await page.isVisible("#panel-attention details.explain p"));
  await page.click("#panel-attention details.explain summary");
  // Autoplay: Play moves through the steps by itself and stops at the end.
  await page.click("#play");
  await page.waitForFunction(() => window.glassllmInspector.state.step >= 2, null, {
    timeout: 10000,
  });
  await page.click("#play");
  const stopped = await page.evaluate(() => window.glassllmInspector.state.step);
  await page.waitForTimeout(1500);
  assert.equal(await page.evaluate(() => window.glassllmInspector.state.step), stopped);
  // Presentation mode: bigger text, no controls, and back.
  const size = () => page.evaluate(() => parseFloat(getComputedStyle(document.body).fontSize));
  const normal = await size();
  await page.keyboard.press("p");
  assert.ok((await size()) >= normal * 1.2);
  assert.ok(await page.isHidden(".toolbar"));
  assert.ok(await page.isHidden("#panel-attention .controls"));
  await shot(page, "presentation");
  await page.keyboard.press("Escape");
  assert.ok(await page.isVisible(".toolbar"));
  await page.close();
});

test("op graph names q/k/v_proj; compare opens on the head of the largest difference; log loss axis; PNG title", async () => {
  const page = await open("demo");
  await page.click("[data-tab=graph]");
  const titles = await page.$$eval("#graph .gnode text:first-of-type", (ts) =>
    ts.map((t) => t.textContent),
  );
  for (const p of ["q_proj", "k_proj", "v_proj", "o_proj"])
    assert.ok(
      titles.some((t) => t.includes(p)),
      p + " in " + titles.join(" | "),
    );
  // Compare: pick attn.k of layer 3; the head shown is the one holding the
  // largest |A - B|, and its columns are features, not keys.
  await page.click("[data-tab=compare]");
  await setFile(page, "#compare-file", at("demo-b.json"));
  await page.click('#compare-table tr[data-name="attn.softmax"][data-layer="3"]');
  const a = json.demo,
    b = json["demo-b"];
  let worst = [-1, -1];
  a.steps.forEach((s, i) => {
    const x = s.snapshots.find((z) => z.name === "attn.softmax" && z.layer === 3);
    const y = b.steps[i].snapshots.find((z) => z.name === "attn.softmax" && z.layer === 3);
    const per = x.data.length / x.heads.length;
    x.data.forEach((v, j) => {
      const d = Math.abs(v - y.data[j]);
      if (d > worst[0]) worst = [d, x.heads[Math.floor(j / per)]];
    });
  });
  assert.equal(await page.inputValue("#compare-head"), String(worst[1]));
  await page.click('#compare-table tr[data-name="attn.k"][data-layer="3"]');
  assert.equal(await page.getAttribute("#compare-canvas", "data-columns"), "features (head_dim)");
  assert.match(await page.textContent("#compare-title"), /columns: features \(head_dim\)/);
  // Training: a loss falling over three decades on a logarithmic axis.
  const lines = Array.from({ length: 30 }, (_, i) =>
    JSON.stringify({ step: i * 100, loss: 5 * Math.pow(10, -i / 7), accuracy: i / 30 }),
  );
  await page.click("[data-tab=metrics]");
  await setFile(page, "#metrics-file", {
    name: "metrics.jsonl",
    mimeType: "text/plain",
    buffer: Buffer.from(lines.join("\n")),
  });
  const ticks = (await page.getAttribute("#loss-chart", "data-ticks")).split(",").map(Number);
  for (const t of ticks)
    assert.match(String(t), /^[125](e-?\d+)?$|^0\.0*[125]$|^[125]0*$/, "tick " + t);
  assert.ok(ticks.length >= 4);
  await shot(page, "training-log");
  // Export of an enlarged map: the prompt, step, layer and head in the title.
  await page.click("[data-tab=attention]");
  await page.click('#timeline [data-step="3"]');
  await page.click('canvas[data-layer="2"][data-head="1"]');
  const [download] = await Promise.all([page.waitForEvent("download"), page.click("#export-png")]);
  assert.equal(download.suggestedFilename(), "glassllm-attention-step3-layer2-head1.png");
  const title = await page.evaluate(() => window.glassllmInspector.exportTitle());
  assert.equal(
    title,
    'GlassLM \u2014 Attention \u2014 prompt "C abcXYZ=" \u2014 step 3 (d3), layer 2, head 1, softmax',
  );
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("a malformed trace shows one red message and leaves the previous trace on screen", async () => {
  const page = await open("demo");
  const good = json.demo;
  const summary = await page.textContent("#summary");
  const maps = () => page.$$eval("#grid canvas", (c) => c.length);
  const before = await maps();
  const clone = () => JSON.parse(JSON.stringify(good));
  const cases = [
    [
      "token text not a string",
      (d) => (d.sequence[2].text = 7),
      /sequence\[2\]\.text must be a string, not 7/,
    ],
    [
      "step token text",
      (d) => (d.steps[1].tokens[0].text = null),
      /steps\[1\]\.tokens\[0\]\.text must be a string/,
    ],
    ["a missing field", (d) => delete d.steps[0].keys, /steps\[0\] has no "keys" field/],
    [
      "a layer id with a quote",
      (d) => (d.steps[0].snapshots[0].layer = '0"]'),
      /steps\[0\]\.snapshots\[0\]\.layer must be a non-negative integer, not "0\\"\]"/,
    ],
    [
      "a layer out of range",
      (d) => (d.steps[0].snapshots[0].layer = 99),
      /layer is 99, out of range \[0, 4\)/,
    ],
    [
      "a head out of range",
      (d) => (d.head_groups[1][0] = 40),
      /head_groups\[1\]\[0\] is 40, out of range/,
    ],
    [
      "a string among the numbers",
      (d) => (d.steps[0].snapshots[5].data[3] = "x"),
      /snapshots\[5\]\.data\[3\] must be a number or null, not "x"/,
    ],
    ["config as a list", (d) => (d.config = [1, 2]), /config must be an object/],
    ["steps as an object", (d) => (d.steps = { 0: 1 }), /steps must be a list/],
    [
      "a graph input after the node",
      (d) => (d.steps[0].graph.nodes[3].inputs = [50]),
      /inputs\[0\] is 50, out of range \[0, 3\)/,
    ],
    [
      "a kind unknown",
      (d) => (d.steps[1].kind = "<b>x</b>"),
      /kind must be "prefill", "decode" or "window_reset", not "<b>x<\/b>"/,
    ],
    ["JSON null", () => "null", /not an object/],
  ];
  for (const [what, spoil, message] of cases) {
    let doc = clone();
    if (spoil(doc) === "null") doc = null;
    await setFile(page, "#trace-file", {
      name: "bad.json",
      mimeType: "application/json",
      buffer: Buffer.from(JSON.stringify(doc)),
    });
    const text = await page.textContent("#message");
    assert.match(text, message, what);
    assert.match(
      text,
      /^Could not open bad\.json: .*\. The trace shown before \(the embedded trace\) is still shown\.$/,
      what,
    );
    assert.equal(text.split("\n").length, 1, what);
    assert.equal(await page.$$eval(".message:not([hidden])", (m) => m.length), 1, what);
    assert.equal(await page.textContent("#summary"), summary, what);
    assert.equal(await maps(), before, what);
  }
  const red = await page.$eval("#message", (m) => getComputedStyle(m).color);
  assert.equal(red, "rgb(122, 12, 12)");
  assert.deepEqual(page.errors, []);
  // A bad selection of layers is refused the same way.
  await page.fill("#layer-select", "0,x");
  await page.press("#layer-select", "Enter");
  assert.match(
    await page.textContent("#message"),
    /^Layers: "x" is not a number or a range like 2-5/,
  );
  await page.close();
});

test("a version 1 trace (lists of numbers, masked scores as null, every reset row) still opens", async () => {
  const page = await open("demo");
  const v1 = JSON.parse(JSON.stringify(json.demo));
  v1.version = 1;
  for (const s of v1.steps) {
    delete s.rows;
    const masked = [];
    for (const snap of s.snapshots)
      if (snap.name === "attn.scores") {
        const [, H, T, m] = snap.shape;
        const data = snap.data.map((v, i) =>
          i % m > s.start + (Math.floor(i / m) % T) ? null : v,
        );
        masked.push({ ...snap, name: "attn.scores_masked", data });
      }
    s.snapshots.push(...masked);
  }
  await setFile(page, "#trace-file", {
    name: "v1.json",
    mimeType: "application/json",
    buffer: Buffer.from(JSON.stringify(v1)),
  });
  assert.ok(await page.isHidden("#message"), await page.textContent("#message"));
  assert.match(await page.textContent("#summary"), /^v1\.json: 4 layers/);
  await page.check('input[value="attn.scores_masked"]');
  const v = await page.evaluate(
    () => snapshot(window.glassllmInspector.state.trace, 0, "attn.scores_masked", 0).data[1],
  );
  assert.equal(v, null);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("30 layers x 32 heads: summary maps per layer, and a choice of layers and heads", async () => {
  const page = await open("big", 1600, 1000);
  const doc = json.big;
  assert.equal(doc.config.n_layers, 30);
  assert.equal(doc.config.n_heads, 32);
  // It opens on one summary map per layer: the mean over the heads.
  assert.ok(await page.isChecked("#summary-maps"));
  const tiles = await page.$$eval("#grid canvas", (cs) => cs.map((c) => c.dataset.layer));
  assert.deepEqual(
    tiles,
    Array.from({ length: 30 }, (_, i) => String(i)),
  );
  const mean = await page.evaluate(() => meanMatrix(0, 7).at(3, 1));
  let sum = 0;
  for (let h = 0; h < 32; h++) sum += value(doc, 0, "attn.softmax", 7, h, 3, 1);
  // The page keeps its maps in float32, so the two agree to float32 rounding.
  assert.ok(Math.abs(mean - sum / 32) < 1e-6, `mean ${mean} vs ${sum / 32}`);
  await shot(page, "big-summary");
  // Clicking a summary map opens that layer's heads.
  await page.click('canvas[data-layer="7"]');
  assert.equal(await page.$$eval("#grid canvas", (c) => c.length), 32);
  assert.equal(await page.inputValue("#layer-select"), "7");
  // Layers 0 and 5, heads 0-8.
  await page.fill("#layer-select", "0,5");
  await page.press("#layer-select", "Enter");
  await page.fill("#head-select", "0-8");
  await page.press("#head-select", "Enter");
  const shown = await page.$$eval("#grid canvas", (cs) =>
    cs.map((c) => c.dataset.layer + "/" + c.dataset.head),
  );
  assert.deepEqual(
    shown,
    ["0", "5"].flatMap((l) => Array.from({ length: 9 }, (_, h) => l + "/" + h)),
  );
  // Heads 0-8 share K/V heads 0, 1 and 2 (G = 4): three coloured boxes a layer.
  assert.equal(await page.$$eval('.layer-row[data-layer="5"] .kv-group', (g) => g.length), 3);
  await shot(page, "big-two-layers");
  assert.deepEqual(page.errors, []);
  await page.close();
});
