// inspector.test.mjs: the attention inspector (viewer/) in headless Debian
// Chromium, on pages written by `glassllm trace --html` from small random
// checkpoints. Run by CTest as viewer_browser_tests (which sets GLASSLLM_BIN
// and GLASSLLM_ARTIFACTS), or by hand after a build:
//   node --test tests/viewer/inspector.test.mjs
// Screenshots of the main views go to build/viewer-artifacts/.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { launch, glassllm, fileUrl, root, readTrace, fourDigits, openPage } from "./browser.mjs";

const artifacts = process.env.GLASSLLM_ARTIFACTS || path.join(root, "build/viewer-artifacts");
const work = fs.mkdtempSync(path.join(os.tmpdir(), "glassllm-viewer-"));
const at = (name) => path.join(work, name);
const XSS =
  '<img src=x onerror="window.__pwned=1"></script><script>window.__pwned=2</script><!--<script>';

let browser; // {context, close}
const json = {}; // parsed traces by name

function trace(name, dir, prompt, ...extra) {
  glassllm(
    "trace",
    at(dir),
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
  glassllm("init", "--out", at("m"));
  glassllm("init", "--out", at("m-seed1"), "--seed", "1");
  glassllm("init", "--out", at("m-g4"), "--n-heads", "8", "--n-kv-heads", "2");
  trace("a", "m", "C abc=", "--steps", "6");
  trace("a-grouped", "m", "C abc=", "--steps", "6", "--attention", "grouped");
  trace("b", "m-seed1", "C abc=", "--steps", "6");
  trace("g4", "m-g4", "C abc=", "--steps", "2");
  trace("grads", "m", "C abc=", "--steps", "3", "--grads");
  trace("xss", "m", XSS, "--steps", "1");
  browser = await launch();
});

after(async () => {
  if (browser) await browser.close();
  fs.rmSync(work, { recursive: true, force: true });
});

// Opens a page; returns it with the list of every request it made.
async function open(name) {
  const requests = [];
  const page = await openPage(browser.context, fileUrl(at(name + ".html")), {
    beforeGoto: (page) => page.on("request", (r) => requests.push(r.url())),
  });
  return { page, requests };
}

// Gives a file input a file and waits until the page has read it.
async function setFile(page, selector, file) {
  const before = await page.evaluate(() => window.glassllmInspector.state.filesRead);
  await page.setInputFiles(selector, file);
  await page.waitForFunction((n) => window.glassllmInspector.state.filesRead > n, before);
}

const shot = (page, name) =>
  page.screenshot({ path: path.join(artifacts, name + ".png"), fullPage: true });

// A value of the trace's JSON. Version 2 traces hold no masked scores: for a
// key not after its query they are the raw scores.
function softmaxAt(doc, step, name, layer, head, r, c) {
  const find = (n) => doc.steps[step].snapshots.find((s) => s.name === n && s.layer === layer);
  const snap = find(name) || (name === "attn.scores_masked" ? find("attn.scores") : undefined);
  const [, , T, m] = snap.shape;
  const hi = snap.heads.indexOf(head);
  return snap.data[(hi * T + r) * m + c];
}

// Moves the mouse to the middle of cell (r, c) of a grid heatmap.
async function hoverCell(page, layer, head, r, c) {
  const canvas = page.locator(`canvas[data-layer="${layer}"][data-head="${head}"]`);
  await canvas.scrollIntoViewIfNeeded();
  const box = await canvas.boundingBox();
  const { rows, cols } = await page.evaluate(
    ([l, h]) => {
      const st = window.glassllmInspector.state;
      const snap = snapshot(st.trace, st.step, st.mode, l);
      return { rows: snap.shape[2], cols: snap.shape[3] };
    },
    [layer, head],
  );
  // The cells sit inside the canvas, after the token labels.
  const [left, top, w, h] = (await canvas.getAttribute("data-inset")).split(",").map(Number);
  // The mouse moves to whole pixels: take one inside the cell, even when
  // the cell is barely a pixel high (a long prompt's map).
  const inside = (start, size) =>
    Math.round(start + size / 2) < start + size ? Math.round(start + size / 2) : Math.ceil(start);
  await page.mouse.move(
    inside(box.x + left + (c * w) / cols, w / cols),
    inside(box.y + top + (r * h) / rows, h / rows),
  );
  return page.textContent("#readout");
}

test("the self-contained page opens from file:// and makes zero network requests", async () => {
  const html = fs.readFileSync(at("a.html"), "utf8");
  assert.doesNotMatch(html, /<script[^>]+src=|<link[^>]+href=/i, "the page loads no file");
  const { page, requests } = await open("a");
  for (const tab of ["cache", "graph", "compare", "grads", "metrics", "attention"])
    await page.click(`[data-tab=${tab}]`);
  await page.click('canvas[data-layer="0"][data-head="0"]');
  await page.keyboard.press("Escape");
  const network = requests.filter(
    (u) => !u.startsWith("file:") && !u.startsWith("data:") && !u.startsWith("blob:"),
  );
  assert.deepEqual(network, [], "network requests");
  assert.deepEqual(
    requests.filter((u) => u.startsWith("file:")),
    [fileUrl(at("a.html"))],
  );
  assert.deepEqual(page.errors, []);
  assert.match(await page.textContent("#summary"), /4 layers, 4 query heads sharing 2 K\/V heads/);
  await shot(page, "attention-grid");
  await page.close();
});

test("stepping with the arrow keys changes the step and the heatmap", async () => {
  const { page } = await open("a");
  const heat = () =>
    page.evaluate(() =>
      document.querySelector('canvas[data-layer="1"][data-head="2"]').toDataURL(),
    );
  const selected = () => page.getAttribute('#timeline [aria-selected="true"]', "data-step");
  assert.equal(await selected(), "0");
  const before = await heat();
  await page.keyboard.press("ArrowRight");
  assert.equal(await selected(), "1");
  assert.notEqual(await heat(), before);
  assert.match(await page.textContent("#step-info"), /^Step 1 of 6: decode step/);
  await page.keyboard.press("End");
  assert.equal(await selected(), "6");
  await page.keyboard.press("ArrowLeft");
  assert.equal(await selected(), "5");
  await page.click('#timeline [data-step="0"]');
  await page.keyboard.press("ArrowRight");
  await page.keyboard.press("ArrowLeft");
  assert.equal(await selected(), "0");
  assert.equal(await heat(), before);
  await page.close();
});

test("a hovered cell shows the value that is in the trace", async () => {
  const { page } = await open("a");
  const doc = json.a;
  const v = softmaxAt(doc, 0, "attn.softmax", 1, 2, 3, 1);
  const text = await hoverCell(page, 1, 2, 3, 1);
  const q = doc.steps[0].tokens[3].text,
    k = doc.sequence[1].text;
  assert.equal(
    text,
    `layer 1 head 2 (K/V head 1): query ${JSON.stringify(q)} (pos 3) \u2192 key ${JSON.stringify(k)} (pos 1): softmax = ${fourDigits(v)}`,
  );
  assert.ok(await page.isVisible("#tooltip"));
  // The enlarged map of the same head reads the same value.
  await page.click('canvas[data-layer="1"][data-head="2"]');
  assert.match(await page.textContent("#zoom-title"), /^Layer 1, head 2 \(K\/V head 1\)/);
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("ArrowRight");
  assert.ok((await page.textContent("#readout")).endsWith("softmax = " + fourDigits(v)));
  await shot(page, "attention-enlarged");
  await page.close();
});

test("the raw / masked / softmax switch", async () => {
  const { page } = await open("a");
  const doc = json.a;
  // Query 1 and key 4: after the query, so hidden by the mask.
  await page.check('input[value="attn.scores"]');
  assert.ok(
    (await hoverCell(page, 0, 1, 1, 4)).endsWith(
      "raw score = " + fourDigits(softmaxAt(doc, 0, "attn.scores", 0, 1, 1, 4)),
    ),
  );
  await page.check('input[value="attn.scores_masked"]');
  assert.ok((await hoverCell(page, 0, 1, 1, 4)).endsWith("masked score = masked (-inf)"));
  assert.ok(
    (await hoverCell(page, 0, 1, 4, 1)).endsWith(
      "masked score = " + fourDigits(softmaxAt(doc, 0, "attn.scores_masked", 0, 1, 4, 1)),
    ),
  );
  await page.check('input[value="attn.softmax"]');
  assert.ok((await hoverCell(page, 0, 1, 1, 4)).endsWith("softmax = 0"));
  // The radio buttons are reachable and switched by keyboard too.
  await page.focus('input[value="attn.softmax"]');
  await page.keyboard.press("ArrowLeft");
  assert.equal(
    await page.evaluate(() => window.glassllmInspector.state.mode),
    "attn.scores_masked",
  );
  await page.close();
});

test("the K/V head grouping matches the trace's config", async () => {
  for (const name of ["a", "g4"]) {
    const { page } = await open(name);
    const doc = json[name];
    const groups = await page.$$eval('.layer-row[data-layer="0"] .kv-group', (gs) =>
      gs.map((g) => ({
        kv: Number(g.dataset.kv),
        color: g.style.borderColor,
        heads: [...g.querySelectorAll(".head")].map((h) => Number(h.dataset.head)),
      })),
    );
    assert.equal(groups.length, doc.config.n_kv_heads);
    assert.deepEqual(
      groups.map((g) => g.heads),
      doc.head_groups,
    );
    assert.equal(
      new Set(groups.map((g) => g.color)).size,
      groups.length,
      "one colour per K/V head",
    );
    assert.equal(
      await page.$$eval(".kv-group", (g) => g.length),
      doc.config.n_kv_heads * doc.config.n_layers,
    );
    if (name === "g4") await shot(page, "attention-grid-8-heads-2-kv");
    await page.close();
  }
});

test("the cache bytes shown equal the trace's", async () => {
  const { page } = await open("a");
  const doc = json.a;
  await page.click("[data-tab=cache]");
  for (let s = 0; s < doc.steps.length; s++) {
    const c = doc.steps[s].cache;
    assert.equal(
      await page.getAttribute("#cache-bytes", "data-bytes"),
      String(c.bytes),
      "step " + s,
    );
    assert.equal(
      await page.textContent(`#cache-table tr[data-step="${s}"] td[data-col="4"]`),
      String(c.bytes),
    );
    assert.equal(
      await page.textContent(`#cache-table tr[data-step="${s}"] td[data-col="6"]`),
      String(c.bytes * doc.config.n_rep),
    );
    assert.equal(
      await page.textContent(`#cache-table tr[data-step="${s}"] td[data-col="8"]`),
      String(doc.steps[s].repeat_kv.bytes),
    );
    if (s === 3) await shot(page, "kv-cache");
    await page.keyboard.press("ArrowRight");
  }
  // The cache grows by one position per decode step.
  const bytes = doc.steps.map((s) => s.cache.bytes);
  for (let s = 1; s < bytes.length; s++) assert.ok(bytes[s] > bytes[s - 1]);
  await page.click("[data-tab=graph]");
  await page.click('#timeline [data-step="1"]');
  assert.ok((await page.$$eval('#graph [data-op="repeat_kv"]', (n) => n.length)) > 0);
  assert.ok((await page.$$eval('#graph [data-op="kv_cache"]', (n) => n.length)) > 0);
  await shot(page, "op-graph");
  await page.close();
});

// Largest |a - b| over every value of two traces of the same structure.
function maxDiff(x, y) {
  let max = 0;
  x.steps.forEach((s, i) =>
    s.snapshots.forEach((snap, k) => {
      const other = y.steps[i].snapshots[k];
      snap.data.forEach((v, j) => {
        const w = other.data[j];
        if (v === null && w === null) return;
        max = Math.max(max, v === null || w === null ? Infinity : Math.abs(v - w));
      });
    }),
  );
  return max;
}

test("the compare view finds zero difference between identical traces and the right maximum between different ones", async () => {
  const { page } = await open("a");
  await page.click("[data-tab=compare]");
  await setFile(page, "#compare-file", at("a.json"));
  assert.equal(await page.textContent("#compare-max"), "0");
  await setFile(page, "#compare-file", at("b.json"));
  const want = maxDiff(json.a, json.b);
  assert.ok(want > 0);
  assert.equal(Number(await page.getAttribute("#compare-max", "data-max")), want);
  assert.equal(await page.textContent("#compare-max"), fourDigits(want));
  await shot(page, "compare");
  // repeat_kv against grouped: the two paths, same weights.
  await setFile(page, "#compare-file", at("a-grouped.json"));
  const paths = maxDiff(json.a, json["a-grouped"]);
  assert.equal(Number(await page.getAttribute("#compare-max", "data-max")), paths);
  console.log("# repeat_kv vs grouped, largest difference at 6 digits: " + paths);
  await page.close();
});

test("a malformed file and a wrong version show their messages and keep the trace shown", async () => {
  const { page } = await open("a");
  const summary = await page.textContent("#summary");
  const load = (name, text) =>
    setFile(page, "#trace-file", { name, mimeType: "application/json", buffer: Buffer.from(text) });
  await load("broken.json", '{"format": "glassllm-trace", "version": 1, "steps": [');
  assert.match(
    await page.textContent("#message"),
    /^Could not open broken\.json: the file is not valid JSON \(.+\)\. The trace shown before \(the embedded trace\) is still shown\.$/,
  );
  await load("v9.json", JSON.stringify({ ...json.a, version: 9 }));
  assert.match(
    await page.textContent("#message"),
    /^Could not open v9\.json: unsupported trace version 9: this inspector reads versions 1 and 2/,
  );
  await load("other.json", '{"format": "something-else", "version": 1}');
  assert.match(
    await page.textContent("#message"),
    /this is not a GlassLM trace: its "format" is "something-else"/,
  );
  await load(
    "short.json",
    JSON.stringify({
      ...json.a,
      steps: [
        { ...json.a.steps[0], snapshots: [{ ...json.a.steps[0].snapshots[0], data: [1, 2] }] },
      ],
    }),
  );
  assert.match(
    await page.textContent("#message"),
    /steps\[0\]\.snapshots\[0\] \(resid\.in, layer 0\) has 2 values for shape \[1,6,128\]/,
  );
  assert.ok(await page.isVisible("#message"));
  await shot(page, "error-message");
  assert.equal(await page.textContent("#summary"), summary);
  assert.equal(await page.$$eval(".kv-group", (g) => g.length), 8);
  // A good file replaces the trace and clears the message.
  await setFile(page, "#trace-file", at("b.json"));
  assert.ok(await page.isHidden("#message"));
  assert.match(await page.textContent("#summary"), /^b\.json: /);
  await page.close();
});

test("a prompt containing <img src=x onerror=...> and </script> is shown literally with no script run", async () => {
  const html = fs.readFileSync(at("xss.html"), "utf8");
  assert.ok(
    !html.includes("</script><script>window"),
    "the token text cannot close the script element",
  );
  for (const how of ["embedded", "file picker"]) {
    const { page } = await open(how === "embedded" ? "xss" : "a");
    let dialogs = 0;
    page.on("dialog", (d) => {
      dialogs++;
      d.dismiss();
    });
    if (how === "file picker") await setFile(page, "#trace-file", at("xss.json"));
    // Chips show the space as \u2423 and everything else as it is.
    const chips = await page.$$eval("#tokens .tok .t", (ts) =>
      ts.map((t) => t.textContent).join(""),
    );
    assert.ok(chips.startsWith(XSS.replaceAll(" ", "\u2423")), how);
    assert.equal(await page.evaluate(() => window.__pwned), undefined, how);
    assert.equal(await page.$$eval("img", (i) => i.length), 0, how);
    assert.equal(dialogs, 0);
    assert.deepEqual(page.errors, []);
    // The hover readout names the tokens as text too.
    assert.match(await hoverCell(page, 0, 0, 0, 0), /query "<" \(pos 0\)/);
    if (how === "embedded") await shot(page, "literal-prompt");
    await page.close();
  }
});

test("PNG export produces an image", async () => {
  const { page } = await open("a");
  for (const tab of ["attention", "cache", "graph"]) {
    await page.click(`[data-tab=${tab}]`);
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.click("#export-png"),
    ]);
    const file = path.join(artifacts, "export-" + tab + ".png");
    await download.saveAs(file);
    const png = fs.readFileSync(file);
    assert.deepEqual([...png.subarray(0, 8)], [137, 80, 78, 71, 13, 10, 26, 10], "PNG signature");
    const width = png.readUInt32BE(16),
      height = png.readUInt32BE(20);
    assert.ok(width >= 600 && height >= 300, `${tab}: ${width} x ${height}`);
    assert.equal(download.suggestedFilename(), `glassllm-${tab}-step0.png`);
  }
  await page.close();
});

test("gradients show the positions the chosen token depended on; training metrics are plotted", async () => {
  const { page } = await open("grads");
  await page.click("[data-tab=grads]");
  assert.match(
    await page.textContent("#grads-summary"),
    /^Step 0 chose ".*" \(id \d+\), log p = -?\d/,
  );
  assert.match(await page.textContent("#grads-readout"), /^Most: pos \d+ /);
  await shot(page, "gradients");
  const lines = Array.from({ length: 40 }, (_, i) =>
    JSON.stringify({
      step: i * 10,
      loss: 4 * Math.exp(-i / 12) + 0.5,
      accuracy: 1 - Math.exp(-i / 10) * 0.9,
    }),
  );
  await page.click("[data-tab=metrics]");
  await setFile(page, "#metrics-file", {
    name: "metrics.jsonl",
    mimeType: "text/plain",
    buffer: Buffer.from(lines.join("\n") + "\n"),
  });
  assert.equal(
    await page.textContent("#metrics-summary"),
    "metrics.jsonl: 40 records, x axis: step",
  );
  await shot(page, "training");
  await setFile(page, "#metrics-file", {
    name: "bad.jsonl",
    mimeType: "text/plain",
    buffer: Buffer.from('{"step": 1, "loss": 2}\nnot json\n'),
  });
  assert.match(await page.textContent("#message"), /line 2 of the metrics file is not valid JSON/);
  await page.close();
});

test("a default-config trace of a 64-token prompt and 16 decode steps loads and redraws quickly", async () => {
  const prompt = "The quick brown fox jumps over the lazy dog; pack my box with fi";
  assert.equal(prompt.length, 64);
  trace("long", "m", prompt, "--steps", "16");
  const t0 = Date.now();
  const { page } = await open("long");
  const loaded = Date.now() - t0;
  const t1 = Date.now();
  for (let s = 0; s < 16; s++) await page.keyboard.press("ArrowRight");
  await page.check('input[value="attn.scores"]');
  await page.click("[data-tab=cache]");
  await page.click("[data-tab=attention]");
  const redraw = Date.now() - t1;
  assert.equal(await page.getAttribute('#timeline [aria-selected="true"]', "data-step"), "16");
  console.log(
    `# 64+16 trace (${fs.statSync(at("long.html")).size} bytes): loaded in ${loaded} ms, 16 steps + redraws in ${redraw} ms`,
  );
  assert.ok(loaded < 20000 && redraw < 20000, `loaded ${loaded} ms, redraw ${redraw} ms`);
  await shot(page, "attention-64-tokens");
  await page.close();
});
