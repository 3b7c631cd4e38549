// window.test.mjs: the inspector on a model with sliding-window layers,
// tests/data/exaone-4.0-tiny-hybrid (EXAONE 4.0's format: layers 0-2 slide
// with a window of 4, layer 3 is global). Keys behind a query's window are
// drawn in a grey of their own, hatched, with a legend saying so; the K/V
// cache view shows what the sliding layers could drop. Run by CTest as part
// of viewer_browser_tests, or by hand after a build:
//   node --test tests/viewer/window.test.mjs
// Screenshots at 1024x768 go to build/viewer-artifacts/.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { launch, glassllm, fileUrl, root, openPage } from "./browser.mjs";

const artifacts = process.env.GLASSLLM_ARTIFACTS || path.join(root, "build/viewer-artifacts");
const work = fs.mkdtempSync(path.join(os.tmpdir(), "glassllm-window-"));
const hybrid = path.join(root, "tests/data/exaone-4.0-tiny-hybrid");
const PROMPT = "Hello world"; // 11 characters, 11 positions: past the window of 4
const WINDOW = 4;
let browser;

before(async () => {
  fs.mkdirSync(artifacts, { recursive: true });
  glassllm(
    "trace",
    hybrid,
    "--prompt",
    PROMPT,
    "--steps",
    "3",
    "--out",
    path.join(work, "h.json"),
    "--html",
    path.join(work, "h.html"),
  );
  browser = await launch();
});

after(async () => {
  if (browser) await browser.close();
  fs.rmSync(work, { recursive: true, force: true });
});

function open(fragment) {
  return openPage(browser.context, fileUrl(path.join(work, "h.html")) + "#" + fragment, {
    viewport: { width: 1024, height: 768 },
  });
}

// Counts, over the cells of a map canvas, the pixels of each colour named:
// {name: "#rrggbb"} -> {name: [count per cell]}, cells row-major.
async function cellColours(page, selector, rows, cols, colours) {
  return page.evaluate(
    ([selector, rows, cols, colours]) => {
      const canvas = document.querySelector(selector);
      const [left, top, w, h] = canvas.dataset.inset.split(",").map(Number);
      const dpr = canvas.width / parseFloat(canvas.style.width);
      const img = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height);
      const hex = (k) =>
        "#" + [0, 1, 2].map((i) => img.data[k + i].toString(16).padStart(2, "0")).join("");
      const out = Object.fromEntries(Object.keys(colours).map((n) => [n, []]));
      for (let r = 0; r < rows; r++)
        for (let c = 0; c < cols; c++) {
          const counts = Object.fromEntries(Object.keys(colours).map((n) => [n, 0]));
          // The cell's inside, a pixel in from its edges.
          const x0 = Math.ceil((left + (c * w) / cols) * dpr) + 1,
            x1 = Math.floor((left + ((c + 1) * w) / cols) * dpr) - 1;
          const y0 = Math.ceil((top + (r * h) / rows) * dpr) + 1,
            y1 = Math.floor((top + ((r + 1) * h) / rows) * dpr) - 1;
          for (let y = y0; y < y1; y++)
            for (let x = x0; x < x1; x++) {
              const got = hex((y * canvas.width + x) * 4);
              for (const [n, want] of Object.entries(colours)) if (got === want) counts[n]++;
            }
          for (const n of Object.keys(colours)) out[n].push(counts[n]);
        }
      return out;
    },
    [selector, rows, cols, colours],
  );
}

test("masked scores: keys behind the window are hatched dark grey, later keys light grey", async () => {
  const page = await open("view=attention&step=0&mode=masked");
  const T = PROMPT.length;
  // Query i of a sliding layer sees keys i - 4 < j <= i: keys j <= i - 4 are
  // behind its window (1 + 2 + ... + 7 = 28 of them for 11 queries), keys
  // j > i after it (the causal mask).
  const behind = (i, j) => j <= i - WINDOW;
  let expected = 0;
  for (let i = 0; i < T; i++) for (let j = 0; j < T; j++) expected += behind(i, j) ? 1 : 0;
  assert.equal(expected, 28);
  for (const layer of [0, 1, 2, 3]) {
    const n = await page.getAttribute(
      `#grid canvas[data-layer="${layer}"][data-head="0"]`,
      "data-outside",
    );
    assert.equal(Number(n), layer < 3 ? expected : 0, "layer " + layer);
  }
  // The enlarged map of layer 0, head 0, cell by cell: every cell behind the
  // window holds the window's grey (#6e6e6e) and no causal grey; every later
  // key the causal grey (#bdbdbd) and no window grey; the keys in the window
  // neither.
  await page.click('#grid button.head[data-layer="0"][data-head="0"]');
  await page.waitForSelector("#zoom:not([hidden])");
  const px = await cellColours(page, "#zoom-canvas", T, T, {
    window: "#6e6e6e",
    causal: "#bdbdbd",
  });
  for (let i = 0; i < T; i++)
    for (let j = 0; j < T; j++) {
      const k = i * T + j,
        where = `query ${i}, key ${j}`;
      if (behind(i, j)) {
        assert.ok(px.window[k] > 0, where + ": no window grey");
        assert.equal(px.causal[k], 0, where);
      } else if (j > i) {
        assert.ok(px.causal[k] > 0, where + ": no causal grey");
        assert.equal(px.window[k], 0, where);
      } else {
        assert.equal(px.window[k] + px.causal[k], 0, where);
      }
    }
  // The readout of query 10, key 0 says why the cell is masked.
  const canvas = await page.$("#zoom-canvas");
  const [left, top, w, h] = (await canvas.getAttribute("data-inset")).split(",").map(Number);
  const box = await canvas.boundingBox();
  await page.mouse.move(box.x + left + (0.5 / T) * w, box.y + top + ((T - 0.5) / T) * h);
  assert.match(
    await page.textContent("#readout"),
    /pos 10\).*pos 0\).*behind the window of 4 keys/,
  );
  await page.keyboard.press("Escape");
  const legend = await page.textContent("#legend");
  assert.match(legend, /light grey: a later key \(causal mask\)/);
  assert.match(
    legend,
    /hatched: behind the sliding window, masked \(layers 0, 1, 2: each query sees only its last 4 keys\)/,
  );
  assert.equal(await page.getAttribute("#legend", "data-window"), "4:0,1,2");
  await page.screenshot({ path: path.join(artifacts, "window-masked-1024.png") });
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("softmax: the window's keys are hatched too; raw scores are drawn before any mask", async () => {
  const page = await open("view=attention&step=3");
  const layer0 = `#grid canvas[data-layer="0"][data-head="1"]`;
  // Decode step 3: one query at position 13, 14 keys; keys 0..9 are behind.
  assert.equal(Number(await page.getAttribute(layer0, "data-outside")), 13 - WINDOW + 1);
  const legend = await page.textContent("#legend");
  assert.match(legend, /a later key: probability 0 \(causal mask\)/);
  assert.match(legend, /hatched: behind the sliding window/);
  await page.screenshot({ path: path.join(artifacts, "window-softmax-1024.png") });
  await page.check('input[value="attn.scores"]');
  assert.equal(Number(await page.getAttribute(layer0, "data-outside")), 0);
  assert.doesNotMatch(await page.textContent("#legend"), /hatched/);
  // In Portuguese, from the table.
  await page.check('input[value="attn.softmax"]');
  await page.click('#lang-switch [data-lang="pt"]');
  assert.match(
    await page.textContent("#legend"),
    /hachurado: atrás da janela deslizante, mascarado \(camadas 0, 1, 2/,
  );
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("the K/V cache view shows what the sliding layers could drop", async () => {
  const page = await open("view=cache&step=3");
  // After step 3 the cache holds 11 + 3 = 14 positions; a window of 4 needs
  // only the last 4, so 10 could go.
  const canvas = "#cache-tensor";
  assert.equal(await page.getAttribute(canvas, "data-held"), "14");
  assert.equal(await page.getAttribute(canvas, "data-droppable"), "4:10");
  await page.screenshot({ path: path.join(artifacts, "window-cache-1024.png") });
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("a trace without the window fields (older, or a Llama model) draws no window", async () => {
  const page = await open("view=attention&step=0&mode=masked");
  const doc = JSON.parse(fs.readFileSync(path.join(work, "h.json"), "utf8"));
  delete doc.config.layer_window;
  delete doc.config.layer_rope;
  delete doc.config.qk_norm;
  for (const s of doc.steps) s.snapshots = s.snapshots.filter((x) => !x.name.endsWith("_norm"));
  await page.evaluate((text) => window.glassllmInspector.loadTraceText(text), JSON.stringify(doc));
  await page.waitForSelector('#grid canvas[data-layer="0"]');
  const n = await page.getAttribute('#grid canvas[data-layer="0"][data-head="0"]', "data-outside");
  assert.equal(Number(n), 0);
  assert.doesNotMatch(await page.textContent("#legend"), /hatched/);
  assert.deepEqual(page.errors, []);
  await page.close();
});
