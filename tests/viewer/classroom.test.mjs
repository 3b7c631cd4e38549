// classroom.test.mjs: the inspector in front of a class, in headless Debian
// Chromium at a projector's 1024x768 and at 1920x1080: deep links (the URL
// fragment sets the view, the back button walks it), ARIA tabs and the
// keyboard, and presentation mode (one K/V group or one head filling the
// screen, every token labelled at 20 px, no text under 16 px, nothing
// scrolling), on the README's prompt and on a 128-token prompt whose cache
// resets. Run by CTest as viewer_browser_tests, or by hand after a build:
//   node --test tests/viewer/classroom.test.mjs
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { launch, glassllm, fileUrl, root, readTrace, openPage } from "./browser.mjs";

const artifacts = process.env.GLASSLLM_ARTIFACTS || path.join(root, "build/viewer-artifacts");
const work = fs.mkdtempSync(path.join(os.tmpdir(), "glassllm-classroom-"));
const at = (name) => path.join(work, name);
const demo = path.join(root, "models/demo");
// The README's first command traces this prompt: 14 characters, 14 tokens.
const README_PROMPT = "C GlassLM2026=";
// 125 characters and 4 steps: the demo's 128 positions fill, the cache resets.
const LONG_PROMPT = "C " + "abcdefghijklmnopqrstuvwxyz".repeat(5).slice(0, 122) + "=";

let browser;
const json = {};

function trace(name, prompt, steps) {
  glassllm(
    "trace",
    demo,
    "--prompt",
    prompt,
    "--steps",
    String(steps),
    "--out",
    at(name + ".json"),
    "--html",
    at(name + ".html"),
  );
  json[name] = readTrace(at(name + ".json"));
}

before(async () => {
  fs.mkdirSync(artifacts, { recursive: true });
  trace("readme", README_PROMPT, 6);
  trace("long", LONG_PROMPT, 4);
  // "ø" is outside the demo's vocabulary; the demo copies, then ends the text.
  trace("eos", "C a\u00f8=", 8);
  glassllm(
    "trace",
    demo,
    "--prompt",
    README_PROMPT,
    "--steps",
    "6",
    "--attention",
    "grouped",
    "--precision",
    "0",
    "--out",
    at("grouped.json"),
  );
  browser = await launch();
});

after(async () => {
  if (browser) await browser.close();
  fs.rmSync(work, { recursive: true, force: true });
});

function open(name, hash, width, height) {
  return openPage(browser.context, fileUrl(at(name + ".html")) + hash, {
    viewport: { width, height },
    fonts: true,
  });
}

// What a class sees: the selected tab, whether anything scrolls (the page,
// or any box sideways), the smallest visible text, the presented maps.
function screenFacts(page) {
  return page.evaluate(() => {
    const de = document.documentElement;
    let smallest = Infinity,
      smallText = "";
    const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    while (walk.nextNode()) {
      const n = walk.currentNode;
      if (!n.textContent.trim()) continue;
      const e = n.parentElement;
      const r = e.getBoundingClientRect();
      if (!e.checkVisibility({ visibilityProperty: true }) || r.width === 0) continue;
      if (r.bottom < 0 || r.top > innerHeight) continue;
      const size = parseFloat(getComputedStyle(e).fontSize);
      if (size < smallest) [smallest, smallText] = [size, n.textContent.trim().slice(0, 30)];
    }
    const sideways = [...document.querySelectorAll("body *")]
      .filter((e) => e.checkVisibility() && e.scrollWidth > e.clientWidth + 1)
      .filter((e) => /auto|scroll/.test(getComputedStyle(e).overflowX))
      .map((e) => e.id || e.className);
    const maps = [...document.querySelectorAll("#stage .stage-map canvas")].map((c) => {
      const [left, top, w, h] = c.dataset.inset.split(",").map(Number);
      return {
        w,
        h,
        head: Number(c.dataset.head),
        font: Number(c.dataset.font),
        rowStride: Number(c.dataset.rowStride),
        colStride: Number(c.dataset.colStride),
        right: c.getBoundingClientRect().left + left + w,
        bottom: c.getBoundingClientRect().top + top + h,
      };
    });
    const tab = document.querySelector("[role=tab][aria-selected=true]");
    return {
      tab: tab.dataset.tab,
      panelShown: !document.getElementById(tab.getAttribute("aria-controls")).hidden,
      pageWider: de.scrollWidth > de.clientWidth,
      pageTaller: de.scrollHeight > innerHeight,
      sideways,
      smallest,
      smallText,
      maps,
      tokenRow: document.getElementById("tokens").checkVisibility(),
      hash: location.hash,
    };
  });
}

const DONE_LINKS = [
  ["#view=attention&step=0&layer=3&present=1", "attention"],
  ["#view=attention&step=2&layer=3&present=1", "attention"],
  ["#view=qk&step=2&layer=3&present=1", "qk"],
  ["#view=cache&step=2&present=1", "cache"],
];

for (const [width, height] of [
  [1024, 768],
  [1920, 1080],
]) {
  test(`at ${width}x${height} each lesson link selects its tab, fits one screen, text >= 16 px`, async () => {
    const T = README_PROMPT.length;
    for (const [hash, tab] of DONE_LINKS) {
      const page = await open("readme", hash, width, height);
      const f = await screenFacts(page);
      assert.equal(f.tab, tab, hash);
      assert.ok(f.panelShown, hash);
      assert.equal(f.pageWider, false, hash + ": the page scrolls sideways");
      assert.equal(f.pageTaller, false, hash + ": the page scrolls down");
      assert.deepEqual(f.sideways, [], hash + ": boxes scroll sideways");
      assert.ok(f.smallest >= 16, hash + ": text of " + f.smallest + ' px: "' + f.smallText + '"');
      assert.ok(f.tokenRow, hash + ": the token row is kept");
      const facts = await page.evaluate(() => {
        const s = window.glassllmInspector.state;
        return { step: s.step, present: s.present, layer: s.pres.layer };
      });
      assert.equal(facts.step, Number(/step=(\d+)/.exec(hash)[1]), hash);
      assert.equal(facts.present, true, hash);
      if (tab === "attention") {
        assert.equal(facts.layer, 3);
        // One K/V group: query heads 0 and 1 of the demo (2 per K/V head).
        assert.deepEqual(
          f.maps.map((m) => m.head),
          [0, 1],
          hash,
        );
        const cols = hash.includes("step=0") ? T : T + 2; // step 2 sees 16 keys
        const rows = hash.includes("step=0") ? T : 1;
        for (const m of f.maps) {
          assert.ok(m.w / cols >= 24 && m.h / rows >= 24, hash + ": cells " + m.w / cols);
          assert.equal(m.font, 20, hash);
          assert.equal(m.rowStride, 1, hash + ": every query labelled");
          assert.equal(m.colStride, 1, hash + ": every key labelled");
          assert.ok(m.right <= width && m.bottom <= height, hash + ": inside the window");
          if (rows === T) assert.ok(m.w >= 336 && m.h >= 336, hash + ": map " + m.w + "x" + m.h);
        }
      }
      if (width === 1024)
        await page.screenshot({
          path: path.join(artifacts, "link-" + hash.slice(6).replace(/[&=]/g, "-") + ".png"),
        });
      assert.deepEqual(page.errors, []);
      await page.close();
    }
  });
}

test("the fragment follows every change of view and the back button walks it", async () => {
  const page = await open("readme", "", 1024, 768);
  await page.click("[role=tab][data-tab=qk]");
  assert.match(await page.evaluate(() => location.hash), /^#view=qk&step=0&layer=0&head=0/);
  await page.click('#timeline [data-step="2"]');
  assert.match(await page.evaluate(() => location.hash), /^#view=qk&step=2/);
  await page.click("[role=tab][data-tab=attention]");
  await page.click('#grid canvas[data-layer="3"][data-head="2"]');
  assert.equal(await page.evaluate(() => location.hash), "#view=attention&step=2&layer=3&head=2");
  await page.keyboard.press("p");
  assert.equal(
    await page.evaluate(() => location.hash),
    "#view=attention&step=2&layer=3&head=2&present=1",
  );
  // Back, step by step: out of presentation, the grid, Q·K at d2, Q·K at the prefill.
  const state = () =>
    page.evaluate(() => {
      const s = window.glassllmInspector.state;
      return [s.tab, s.step, s.present, s.zoom ? s.zoom.layer + "/" + s.zoom.head : null];
    });
  await page.goBack();
  assert.deepEqual(await state(), ["attention", 2, false, "3/2"]);
  await page.goBack();
  assert.deepEqual(await state(), ["attention", 2, false, null]);
  await page.goBack();
  assert.deepEqual(await state(), ["qk", 2, false, null]);
  await page.goBack();
  assert.deepEqual(await state(), ["qk", 0, false, null]);
  await page.goForward();
  assert.deepEqual(await state(), ["qk", 2, false, null]);
  assert.equal(await page.isVisible("#panel-qk"), true);
  // A link that names a step the trace does not have says so in one line.
  await page.evaluate(() => (location.hash = "#view=attention&step=99"));
  await page.waitForFunction(() => !document.getElementById("message").hidden);
  assert.match(await page.textContent("#message"), /step=99 is not one of 0-6/);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("tabs are ARIA tabs and the views work from the keyboard alone", async () => {
  const page = await open("readme", "", 1024, 768);
  const tabs = await page.$$eval("[role=tablist] [role=tab]", (ts) =>
    ts.map((t) => [t.dataset.tab, t.getAttribute("aria-selected"), t.tabIndex]),
  );
  assert.equal(tabs.length, 7);
  assert.deepEqual(tabs[0], ["attention", "true", 0]);
  for (const t of tabs.slice(1)) assert.deepEqual(t.slice(1), ["false", -1]);
  await page.focus("[role=tab][data-tab=attention]");
  await page.keyboard.press("ArrowRight");
  assert.equal(
    await page.evaluate(() => document.activeElement.dataset.tab + " " + location.hash),
    "qk #view=qk&step=0&layer=0&head=0&query=13",
  );
  await page.keyboard.press("End");
  assert.equal(await page.evaluate(() => document.activeElement.dataset.tab), "metrics");
  await page.keyboard.press("Home");
  await page.keyboard.press("Tab"); // into the panel
  // A map from the keyboard: focus its button, Enter enlarges it.
  await page.focus('#grid .head[data-layer="1"][data-head="3"]');
  await page.keyboard.press("Enter");
  assert.match(await page.evaluate(() => location.hash), /layer=1&head=3/);
  await page.keyboard.press("Escape");
  assert.equal(await page.evaluate(() => window.glassllmInspector.state.zoom), null);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("presentation keys move through layers, K/V groups, heads and steps", async () => {
  const page = await open("readme", "#view=attention&step=0&layer=3&present=1", 1024, 768);
  const shown = () =>
    page.evaluate(() => [
      location.hash,
      [...document.querySelectorAll("#stage .stage-map canvas")]
        .map((c) => c.dataset.head)
        .join(","),
      document.getElementById("stage-title").textContent,
    ]);
  await page.keyboard.press("ArrowUp");
  let [hash, heads, title] = await shown();
  assert.equal(hash, "#view=attention&step=0&layer=2&group=0&present=1");
  assert.equal(heads, "0,1");
  assert.match(title, /^Layer 2, K\/V head 0 \u2190 query heads 0, 1 \u2014 step 0 \(prefill\)/);
  await page.keyboard.press("g");
  [hash, heads] = await shown();
  assert.equal(hash, "#view=attention&step=0&layer=2&group=1&present=1");
  assert.equal(heads, "2,3");
  await page.keyboard.press("h");
  [hash, heads, title] = await shown();
  assert.equal(hash, "#view=attention&step=0&layer=2&head=2&present=1");
  assert.equal(heads, "2");
  assert.match(title, /head 2 \(K\/V head 1\)/);
  // One head fills the screen: its 14 x 14 cells are larger than in the group.
  const one = await screenFacts(page);
  assert.ok(one.maps[0].h / README_PROMPT.length >= 30, "one head's cells: " + one.maps[0].h);
  assert.equal(one.pageTaller, false);
  await page.keyboard.press("ArrowRight");
  [hash] = await shown();
  assert.equal(hash, "#view=attention&step=1&layer=2&head=2&present=1");
  await page.keyboard.press("Escape");
  [hash, heads] = await shown();
  assert.equal(hash, "#view=attention&step=1&layer=2&group=1&present=1");
  await page.keyboard.press("Escape");
  assert.equal(await page.evaluate(() => window.glassllmInspector.state.present), false);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("a 128-token prompt stays readable: every n-th token labelled, bands not lines", async () => {
  const doc = json.long;
  const reset = doc.steps.findIndex((s) => s.kind === "window_reset");
  assert.ok(reset > 0, "the long prompt's trace has a window reset");
  for (const [width, height] of [
    [1024, 768],
    [1920, 1080],
  ])
    for (const step of [0, reset]) {
      const page = await open(
        "long",
        `#view=attention&step=${step}&layer=3&present=1`,
        width,
        height,
      );
      const f = await screenFacts(page);
      assert.equal(f.pageTaller, false);
      assert.deepEqual(f.sideways, []);
      assert.ok(f.smallest >= 16, "text of " + f.smallest + " px");
      const keys = doc.steps[step].keys.count;
      for (const m of f.maps) {
        assert.equal(m.font, 20);
        assert.ok(m.h >= 40, "step " + step + ": a map " + m.h + " px high");
        // The labels 20 px apart at least: every n-th, none overlapping.
        assert.ok((m.w / keys) * m.colStride >= 20, "key labels " + m.colStride);
        assert.ok(m.colStride < keys / 4, "at least every " + m.colStride + "-th key labelled");
      }
      // The keys between labels are named on hover.
      const box = await page.locator("#stage .stage-map canvas").first().boundingBox();
      const inset = (
        await page.locator("#stage .stage-map canvas").first().getAttribute("data-inset")
      )
        .split(",")
        .map(Number);
      const c = 1; // an unlabelled key when the stride is > 1
      await page.mouse.move(
        box.x + inset[0] + ((c + 0.5) * inset[2]) / keys,
        box.y + inset[1] + inset[3] / 2,
      );
      const tip = await page.textContent("#tooltip");
      const s = doc.steps[step];
      const pos = s.keys.start + c;
      const text = doc.sequence[s.window_offset + pos].text;
      assert.ok(tip.includes("key " + JSON.stringify(text) + " (pos " + pos + ")"), tip);
      if (width === 1024 && step === reset)
        await page.screenshot({ path: path.join(artifacts, "present-window-reset.png") });
      await page.close();
    }
});

// The op graph's edges, sampled every 4 px, against its boxes: a point
// strictly inside a box (2 px in from its border) is an edge crossing it.
function edgesThroughBoxes(page) {
  return page.evaluate(() => {
    const boxes = [...document.querySelectorAll("#graph .gnode")].map((g) => {
      const m = /translate\(([-\d.]+),([-\d.]+)\)/.exec(g.getAttribute("transform"));
      const r = g.querySelector("rect");
      return [
        Number(m[1]),
        Number(m[2]),
        Number(r.getAttribute("width")),
        Number(r.getAttribute("height")),
      ];
    });
    const hits = [];
    for (const path of document.querySelectorAll("#graph path[marker-end]")) {
      const n = path.getTotalLength();
      for (let l = 0; l <= n; l += 4) {
        const p = path.getPointAtLength(l);
        for (const [x, y, w, h] of boxes)
          if (p.x > x + 2 && p.x < x + w - 2 && p.y > y + 2 && p.y < y + h - 2)
            hits.push(path.getAttribute("d").slice(0, 40));
      }
    }
    return {
      edges: document.querySelectorAll("#graph path[marker-end]").length,
      hits: [...new Set(hits)],
    };
  });
}

for (const [width, height] of [
  [1024, 768],
  [1920, 1080],
])
  test(`at ${width}x${height} no view scrolls sideways; the cache fits; edges miss boxes`, async () => {
    const page = await open("readme", "#view=attention&step=2", width, height);
    const before = await page.evaluate(() => window.glassllmInspector.state.filesRead);
    await page.click("[role=tab][data-tab=compare]");
    await page.setInputFiles("#compare-file", at("long.json"));
    await page.waitForFunction((n) => window.glassllmInspector.state.filesRead > n, before);
    for (const view of ["attention", "qk", "cache", "graph", "compare", "gradients", "training"]) {
      await page.evaluate((v) => (location.hash = "#view=" + v + "&step=2"), view);
      await page.waitForFunction((v) => location.hash.startsWith("#view=" + v), view);
      const f = await screenFacts(page);
      assert.equal(f.pageWider, false, view + " scrolls sideways");
      assert.deepEqual(f.sideways, [], view + ": boxes scroll sideways");
      if (view === "cache" || view === "attention")
        assert.equal(f.pageTaller, false, view + " is taller than the screen");
      if (width === 1024)
        await page.screenshot({ path: path.join(artifacts, "fit-" + view + ".png") });
    }
    for (const layer of ["0", "all"]) {
      await page.evaluate(() => (location.hash = "#view=graph&step=2"));
      await page.selectOption("#graph-layer", layer);
      const g = await edgesThroughBoxes(page);
      assert.ok(g.edges > 10, "layer " + layer + ": " + g.edges + " edges");
      assert.deepEqual(g.hits, [], "layer " + layer + ": edges through boxes");
    }
    assert.deepEqual(page.errors, []);
    await page.close();
  });

// The export against a screenshot of the same view: the PNG must be the
// panel's part of the screen at 2x under its title band; scaled back to 1x,
// its pixels must match the screenshot's.
async function exportAgainstScreen(page) {
  const view = await page.evaluate(() => {
    const tab = window.glassllmInspector.state.tab;
    const b = document.getElementById("panel-" + tab).getBoundingClientRect();
    const top = Math.max(0, b.top);
    return {
      x: Math.max(0, b.left),
      y: top,
      width: Math.min(document.documentElement.clientWidth, b.right) - Math.max(0, b.left),
      height: Math.min(innerHeight, b.bottom) - top,
    };
  });
  const shotPng = await page.screenshot({ clip: view });
  return page.evaluate(
    async ([png, view]) => {
      const r = await window.glassllmInspector.exportPng();
      const exported = await createImageBitmap(r.blob);
      const screen = await createImageBitmap(
        await (await fetch("data:image/png;base64," + png)).blob(),
      );
      const w = Math.round(view.width),
        h = Math.round(view.height);
      const facts = {
        exportW: exported.width,
        exportH: exported.height,
        expectW: 2 * w,
        expectH: 2 * (h + r.titleH),
        title: r.title,
      };
      if (!r.titleH || exported.width !== 2 * w || exported.height !== 2 * (h + r.titleH))
        return facts;
      // Compared at the export's 2x: the screenshot's pixels doubled.
      const W = 2 * w,
        H = 2 * h;
      const pixels = (img, sy) => {
        const c = new OffscreenCanvas(W, H);
        const ctx = c.getContext("2d");
        ctx.imageSmoothingEnabled = false;
        if (img === screen) ctx.drawImage(img, 0, 0, w, h, 0, 0, W, H);
        else ctx.drawImage(img, 0, sy, W, H, 0, 0, W, H);
        return ctx.getImageData(0, 0, W, H).data;
      };
      const a = pixels(exported, 2 * r.titleH),
        b = pixels(screen, 0);
      // Each exported pixel against the closest of the screenshot's within
      // one screen pixel: text placed half a pixel apart is no difference.
      let sum = 0,
        far = 0;
      for (let y = 0; y < H; y++)
        for (let x = 0; x < W; x++) {
          const i = (y * W + x) * 4;
          let d = 255;
          for (let dy = -2; dy <= 2 && d > 0; dy++)
            for (let dx = -2; dx <= 2; dx++) {
              const yy = Math.min(H - 1, Math.max(0, y + dy)),
                xx = Math.min(W - 1, Math.max(0, x + dx));
              const j = (yy * W + xx) * 4;
              d = Math.min(
                d,
                Math.max(
                  Math.abs(a[i] - b[j]),
                  Math.abs(a[i + 1] - b[j + 1]),
                  Math.abs(a[i + 2] - b[j + 2]),
                ),
              );
            }
          sum += d;
          if (d > 96) far++;
        }
      return { ...facts, mean: sum / (W * H), far: far / (W * H) };
    },
    [shotPng.toString("base64"), view],
  );
}

test("Export PNG draws the view on screen, at 2x, under its title", async () => {
  for (const [hash, titled, width, height] of [
    ["#view=attention&step=0&layer=3&present=1", /layer 3, K\/V head 0/, 1920, 1080],
    ["#view=attention&step=2", /step 2 \(d2\), all heads/, 1920, 1080],
    ["#view=attention&step=0&layer=3&present=1", /step 0 \(prefill\), layer 3, K\/V head 0/],
    ["#view=attention&step=2&layer=3&head=2", /step 2 \(d2\), layer 3, head 2/],
    ["#view=attention&step=2", /step 2 \(d2\), all heads/],
    ["#view=qk&step=2&layer=3&head=1", /step 2 \(d2\), layer 3, head 1/],
    ["#view=cache&step=2", /K\/V cache \u2014 prompt "C GlassLM2026=" \u2014 step 2/],
  ]) {
    const page = await open("readme", hash, width || 1024, height || 768);
    const f = await exportAgainstScreen(page);
    assert.match(f.title, titled, hash);
    assert.match(f.title, /prompt "C GlassLM2026="/, hash);
    assert.deepEqual([f.exportW, f.exportH], [f.expectW, f.expectH], hash + ": the export's size");
    console.log(
      "# export " +
        (width || 1024) +
        " " +
        hash +
        ": mean " +
        f.mean.toFixed(2) +
        ", far " +
        f.far.toFixed(4),
    );
    // Text drawn by the canvas and by the page differ in antialiasing only.
    assert.ok(f.mean < 3.5, hash + ": mean difference " + f.mean);
    assert.ok(f.far < 0.02, hash + ": " + (100 * f.far).toFixed(2) + "% of pixels differ");
    assert.deepEqual(page.errors, []);
    await page.close();
  }
});

test("one number format everywhere, Compare included; special tokens are named chips", async () => {
  const page = await open("readme", "#view=compare&step=2", 1024, 768);
  const before = await page.evaluate(() => window.glassllmInspector.state.filesRead);
  await page.setInputFiles("#compare-file", at("grouped.json"));
  await page.waitForFunction((n) => window.glassllmInspector.state.filesRead > n, before);
  // Every number on the page: at most 4 significant digits, scientific under 1e-3.
  const numbers = await page.evaluate(() =>
    [
      ...document.querySelectorAll("#compare-table td, #compare-summary strong, #step-info"),
    ].flatMap((e) => e.textContent.match(/-?\d[\d.]*(e-?\d+)?/g) || []),
  );
  assert.ok(numbers.length > 20, numbers.length + " numbers");
  for (const n of numbers) {
    const digits = n.replace(/^-/, "").replace(/e.*$/, "").replace(".", "").replace(/^0+/, "");
    assert.ok(digits.length <= 4, n + " has more than 4 significant digits");
    if (Number(n) !== 0 && Math.abs(Number(n)) < 1e-3) assert.match(n, /e-/, n);
  }
  await page.close();
  const eos = await open("eos", "", 1024, 768);
  const doc = json.eos;
  assert.equal(doc.steps.at(-1).next.text, "\u0003", "the demo ends with its end-of-text token");
  // A character outside the vocabulary is the unknown token: a named chip.
  const chips = await eos.$$eval("#tokens .tok", (cs) =>
    cs.map((c) => [c.querySelector(".t").textContent, c.classList.contains("special")]),
  );
  assert.deepEqual(chips[3], ["\u27e8unk\u27e9", true]);
  assert.equal(chips.filter(([, special]) => special).length, 1);
  // ... and the page says so above the trace.
  assert.equal(await eos.isVisible("#message"), true);
  assert.match(
    await eos.textContent("#message"),
    /^1 token is \u27e8unk\u27e9: characters outside the model's vocabulary/,
  );
  await eos.keyboard.press("End");
  assert.match(await eos.textContent("#step-info"), /chose \u27e8eos\u27e9 \(id 97, p = /);
  assert.deepEqual(eos.errors, []);
  await eos.close();
});

// The live page (`glassllm inspector`): it runs the demo in WebAssembly,
// so these need the engine (scripts/build-wasm.sh).
const noEngine =
  process.env.GLASSLLM_HAS_ENGINE === "0" &&
  "this glassllm has no WebAssembly engine (scripts/build-wasm.sh)";

test(
  "the live page: task examples, warnings, and Generate goes to the answer",
  { skip: noEngine },
  async () => {
    glassllm("inspector", "--out", at("live.html"));
    const page = await open("live", "", 1024, 768);
    await page.evaluate(() => window.glassllm.ready);
    const examples = await page.$$eval("#live-examples .example", (bs) =>
      bs.map((b) => [b.dataset.task, b.textContent]),
    );
    assert.deepEqual(
      examples.map(([task]) => task),
      ["copy", "reverse", "sort", "add"],
    );
    assert.match(await page.textContent("#live-format"), /C \(copy\), R \(reverse\) or S \(sort\)/);
    const check = async (prompt) => {
      await page.fill("#live-prompt", prompt);
      return (await page.isVisible("#live-check")) ? await page.textContent("#live-check") : "";
    };
    assert.match(await check("The cat sat on the"), /^Not a task the model was trained on/);
    // "ø" and "€" are outside every default vocabulary.
    const oov = await check("C s\u00f8l\u20ac=");
    assert.match(
      oov,
      /^Not in the model's vocabulary: "\u00f8", "\u20ac" \(each reads as \u27e8unk\u27e9\)/,
    );
    assert.equal(await page.getAttribute("#live-prompt", "aria-invalid"), "true");
    for (const ok of ["R stressed=", "A 12+345=", "S Zz09="]) assert.equal(await check(ok), "", ok);
    // Accented letters fit the task format (the default vocabulary has them);
    // a model trained before they were added still reads them as unknown.
    const accented = await check("R a\u00e7\u00e3o=");
    assert.doesNotMatch(accented, /Not a task/);
    if (accented) assert.match(accented, /^Not in the model's vocabulary: "\u00e7", "\u00e3"/);
    // An example button fills the prompt; Generate then shows the answer's head.
    await page.click('#live-examples [data-task="copy"]');
    assert.equal(await page.inputValue("#live-prompt"), README_PROMPT);
    assert.equal(await page.isVisible("#live-check"), false);
    await page.fill("#live-steps", "16");
    await page.click("#live-generate");
    await page.waitForFunction(() => /^Generated in/.test($("live-status").textContent));
    // The head the page should go to, found in the command line's trace: at
    // step 1, the largest weight of the last query on a key of the question.
    const doc = json.readme;
    const promptLen = README_PROMPT.length;
    let want = { w: -1 };
    for (const snap of doc.steps[1].snapshots.filter((x) => x.name === "attn.softmax")) {
      const [, , T, m] = snap.shape;
      snap.heads.forEach((head, hi) => {
        for (let c = 0; c < m; c++) {
          const pos = doc.steps[1].keys.start + c;
          const w = snap.data[(hi * T + T - 1) * m + c];
          if (pos >= 2 && pos < promptLen - 1 && w > want.w) want = { w, layer: snap.layer, head };
        }
      });
    }
    const hash = await page.evaluate(() => location.hash);
    assert.equal(hash, `#view=attention&step=1&layer=${want.layer}&head=${want.head}`);
    assert.match(
      await page.textContent("#zoom-title"),
      new RegExp(`^Layer ${want.layer}, head ${want.head} `),
    );
    await page.screenshot({ path: path.join(artifacts, "live-answer.png") });
    // Esc: every layer on the screen, under the live bar.
    await page.keyboard.press("Escape");
    const rows = await page.$$eval(".layer-row", (rs) =>
      rs.map((r) => [r.dataset.layer, r.getBoundingClientRect().bottom <= innerHeight]),
    );
    assert.deepEqual(rows, [
      ["0", true],
      ["1", true],
      ["2", true],
      ["3", true],
    ]);
    assert.deepEqual(page.errors, []);
    await page.close();
  },
);

test("every link of the lesson plans opens its view on one projector screen", async () => {
  glassllm("trace", demo, "--prompt", "C abcXYZ=", "--steps", "6", "--html", at("lesson1.html"));
  const dir = path.join(root, "docs/teaching");
  const links = new Set();
  for (const f of fs.readdirSync(dir).filter((f) => f.endsWith(".md")))
    for (const m of fs
      .readFileSync(path.join(dir, f), "utf8")
      .matchAll(/lesson1\.html(#view=[^`\s)]+)/g))
      links.add(m[1]);
  assert.ok(links.size >= 8, links.size + " links");
  for (const hash of links) {
    const page = await open("lesson1", hash, 1024, 768);
    const f = await screenFacts(page);
    const view = new URLSearchParams(hash.slice(1)).get("view");
    assert.equal(f.tab, { gradients: "grads", training: "metrics" }[view] || view, hash);
    assert.equal(f.hash, hash, "the page keeps the link's address");
    assert.equal(f.pageWider, false, hash);
    assert.deepEqual(f.sideways, [], hash);
    if (hash.includes("present=1")) {
      assert.equal(f.pageTaller, false, hash);
      assert.ok(f.smallest >= 16, hash + ": text of " + f.smallest + " px");
    }
    assert.deepEqual(page.errors, [], hash);
    await page.close();
  }
});
