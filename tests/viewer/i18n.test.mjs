// i18n.test.mjs: the inspector in Portuguese, in headless Debian Chromium.
// Opened with #lang=pt, every view is filled (a trace with gradients, a
// trace B to compare, a metrics file, the enlarged map, presentation mode,
// the live bar when the page has the engine) and every visible text node,
// title, aria-label, placeholder, option and input word is read: each word
// must come from the Portuguese table of viewer/i18n.js or be data -- see
// dataWords() -- and no text may be an English message of the table. The
// EN switch then gives the same page in English. Screenshots of every view
// at 1024x768 in Portuguese go to $GLASSLLM_ARTIFACTS (i18n-pt-*.png).
// Run by CTest as part of viewer_browser_tests, or by hand after a build:
//   node --test tests/viewer/i18n.test.mjs
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import vm from "node:vm";
import { launch, glassllm, fileUrl, root, readTrace, openPage } from "./browser.mjs";

const artifacts = process.env.GLASSLLM_ARTIFACTS || path.join(root, "build/viewer-artifacts");
const hasEngine = process.env.GLASSLLM_HAS_ENGINE !== "0";
const work = fs.mkdtempSync(path.join(os.tmpdir(), "glassllm-i18n-"));
const at = (name) => path.join(work, name);
const demo = path.join(root, "models/demo");
const PROMPT = "C abcXYZ=";
const TABS = ["attention", "qk", "cache", "graph", "compare", "grads", "metrics"];

// The tables, read from viewer/i18n.js as the page runs it.
const page0 = vm.createContext({
  location: { hash: "" },
  navigator: { languages: ["en"] },
  document: { documentElement: { dataset: {} }, querySelectorAll: () => [] },
  URLSearchParams,
});
vm.runInContext(fs.readFileSync(path.join(root, "viewer/i18n.js"), "utf8"), page0);
const MESSAGES = vm.runInContext("MESSAGES", page0);

// Words: runs of letters and underscores (head_dim, q_proj) of two or more
// letters; "d1" and "r2" (the steps' labels) are numbers after one letter.
// A word cut short with "…" (a long name in a box of the op graph) is the
// word it starts.
const WORD = /[\p{L}_]+…?/gu;
const words = (text) =>
  (text.match(WORD) || []).map((w) => w.replace(/^_+|_+$/g, "")).filter((w) => w.length > 1);
const known = (w, sets) =>
  w.endsWith("…")
    ? sets.some((set) => [...set].some((k) => k.startsWith(w.slice(0, -1).replace(/_+$/, ""))))
    : sets.some((set) => set.has(w));

// Every word of one language's messages, placeholders and markup left out.
function tableWords(lang) {
  const out = new Set();
  for (const text of Object.values(MESSAGES[lang]))
    for (const w of words(text.replace(/\{\w+\}|<\/?\w+>/g, " "))) out.add(w);
  return out;
}

// The words a page may show that no table holds: the data of the traces it
// opened (token text, snapshot names, the ops, names, dtypes and attention
// path of the graph, the cache's tensors and mode), the files' and the
// model's names, the metrics' field names, the live bar's example prompts
// (text the model reads, viewer/prompt.js), the two colour maps' names and
// the byte units. Nothing else.
function dataWords(docs, names) {
  const out = new Set(["viridis", "cividis", "KiB", "MiB", "GiB"]);
  const add = (text) => {
    for (const w of words(String(text))) out.add(w);
  };
  for (const d of docs) {
    add(d.dtype);
    add(d.attention);
    for (const tok of d.sequence) add(tok.text);
    for (const s of d.steps) {
      add(s.cache.mode);
      for (const c of s.top_k || []) add(c.text);
      for (const snap of s.snapshots) add(snap.name);
      for (const n of s.graph.nodes) {
        add(n.op);
        add(n.dtype);
        if (n.name) add(n.name);
      }
    }
    for (const l of d.cache_links) add(l.tensor);
  }
  for (const n of names) add(n);
  const prompts = fs.readFileSync(path.join(root, "viewer/prompt.js"), "utf8");
  for (const m of prompts.matchAll(/\["\w+", "([^"]+)"\]/g)) add(m[1]);
  return out;
}

// English messages that differ from their Portuguese (and hold no
// placeholder): none may be a whole text of the Portuguese page.
function onlyIn(lang, other) {
  const out = new Set();
  for (const [id, text] of Object.entries(MESSAGES[lang]))
    if (!/\{\w+\}/.test(text) && text !== MESSAGES[other][id] && words(text).length)
      out.add(text.replace(/<\/?\w+>/g, "").trim());
  return out;
}

let browser;
const docs = [];
before(async () => {
  fs.mkdirSync(artifacts, { recursive: true });
  glassllm("trace", demo, "--prompt", PROMPT, "--steps", "5", "--grads", "--out", at("a.json"));
  glassllm("trace", demo, "--prompt", PROMPT, "--steps", "5", "--grads", "--html", at("a.html"));
  glassllm(
    "trace",
    demo,
    "--prompt",
    PROMPT,
    "--steps",
    "5",
    "--attention",
    "grouped",
    "--out",
    at("b.json"),
  );
  fs.writeFileSync(
    at("metrics.jsonl"),
    [1, 2, 3]
      .map((s) => JSON.stringify({ step: s * 100, loss: 2 / s, accuracy: s / 4 }))
      .join("\n"),
  );
  docs.push(readTrace(at("a.json")), readTrace(at("b.json")));
  browser = await launch();
});

after(async () => {
  if (browser) await browser.close();
  fs.rmSync(work, { recursive: true, force: true });
});

async function open(hash, width = 1024, height = 768, languages = null) {
  const page = await openPage(browser.context, fileUrl(at("a.html")) + hash, {
    viewport: { width, height },
    beforeGoto: (page) =>
      languages &&
      page.addInitScript((langs) => {
        Object.defineProperty(navigator, "languages", { get: () => langs });
        Object.defineProperty(navigator, "language", { get: () => langs[0] });
      }, languages),
  });
  if (hasEngine)
    await page.evaluate(() => window.glassllm && window.glassllm.ready.catch(() => {}));
  return page;
}

// Every text the page shows now: visible text nodes, the title, aria-label
// and placeholder of visible elements, the options and words of visible
// controls (not the prompt boxes: what a user typed), and the tooltips of
// the op graph's boxes.
function shownTexts(page) {
  return page.evaluate(() => {
    const out = [];
    const seen = (e) => e.checkVisibility({ visibilityProperty: true });
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n; (n = walker.nextNode());) {
      const p = n.parentElement;
      const text = n.textContent.trim();
      if (!text || p.closest("script, style, title") || !seen(p)) continue;
      out.push({ text, where: p.id || p.getAttribute("class") || p.tagName });
    }
    for (const e of document.querySelectorAll("[title], [aria-label], [placeholder]")) {
      if (!seen(e)) continue;
      for (const a of ["title", "aria-label", "placeholder"])
        if (e.getAttribute(a))
          out.push({ text: e.getAttribute(a), where: a + " of " + (e.id || e.tagName) });
    }
    for (const s of document.querySelectorAll("select"))
      if (seen(s))
        for (const o of s.options) out.push({ text: o.text, where: "option of " + s.id });
    for (const i of document.querySelectorAll("input.pick"))
      if (seen(i)) out.push({ text: i.value, where: "value of " + i.id });
    for (const t of document.querySelectorAll("#graph svg title"))
      out.push({ text: t.textContent, where: "graph tooltip" });
    out.push({ text: document.title, where: "document title" });
    return out;
  });
}

// Fills every view in turn (the same actions in either language) and
// returns [view, texts] for each, taking a screenshot of each as `shot`.
async function everyView(page, shot) {
  const seen = [];
  const look = async (name) => {
    seen.push([name, await shownTexts(page)]);
    if (shot) await page.screenshot({ path: path.join(artifacts, shot + "-" + name + ".png") });
  };
  await page.evaluate(
    ([b, m]) => {
      window.glassllmInspector.loadCompareText(b, "b.json");
      window.glassllmInspector.loadMetricsText(m, "metrics.jsonl");
    },
    [fs.readFileSync(at("b.json"), "utf8"), fs.readFileSync(at("metrics.jsonl"), "utf8")],
  );
  await page.evaluate(() => {
    for (const d of document.querySelectorAll("details")) d.open = true;
  });
  for (const tab of TABS) {
    await page.click('[role=tab][data-tab="' + tab + '"]');
    await page.evaluate(() => window.glassllmInspector.setStep(2));
    if (tab === "attention") {
      const box = await page.locator("#grid canvas").first().boundingBox();
      await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
      await look(tab);
      await page.locator("#grid .head").first().click();
      await look("zoom");
      await page.click("#zoom-close");
      await page.click("#present");
      await look("present");
      await page.click("#present-exit");
    } else if (tab === "graph") {
      await page.locator("#graph [data-node]").nth(3).click();
      await look(tab);
    } else if (tab === "compare") {
      const box = await page.locator("#compare-canvas").boundingBox();
      await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
      await look(tab);
    } else await look(tab);
  }
  // A message in the red bar: a link to a view that does not exist.
  await page.evaluate(() => window.glassllmInspector.applyLink("#view=nowhere&step=99"));
  await look("message");
  if (hasEngine) {
    await page.click("#live-open");
    await page.fill("#live-prompt", "C abç");
    await page.dispatchEvent("#live-prompt", "input");
    await look("live");
  }
  return seen;
}

// The texts of `seen` whose words are not all in the language's table or the data,
// or that are a whole message of the other language.
function foreign(seen, lang, other) {
  const allowed = tableWords(lang);
  const data = dataWords(docs, ["a.html", "b.json", "metrics.jsonl", "demo", "accuracy", "step"]);
  const wrong = onlyIn(other, lang);
  const bad = [];
  for (const [view, texts] of seen)
    for (const { text, where } of texts) {
      const stray = words(text).filter((w) => !known(w, [allowed, data]));
      const isData = words(text).every((w) => data.has(w));
      if (stray.length || (wrong.has(text.trim()) && !isData))
        bad.push(view + " / " + where + ": " + JSON.stringify(text) + " " + stray.join(","));
    }
  return bad;
}

test("#lang=pt: every text of every view comes from the Portuguese table", async () => {
  const page = await open("#lang=pt");
  assert.equal(await page.textContent("[role=tab]:first-child"), "Atenção");
  assert.equal(await page.getAttribute("html", "lang"), "pt-BR");
  const seen = await everyView(page, "i18n-pt");
  const texts = seen.reduce((n, [, t]) => n + t.length, 0);
  assert.ok(texts > 300, texts + " texts read");
  assert.deepEqual(foreign(seen, "pt", "en"), []);
  // Portuguese is longer than English: no view is wider than the screen.
  for (const tab of TABS) {
    await page.click('[role=tab][data-tab="' + tab + '"]');
    const wide = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(wide <= 1024, tab + " is " + wide + " px wide at 1024");
  }
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("the EN | PT switch changes the page live, keeps the view and writes the fragment", async () => {
  const page = await open("#view=qk&step=3&lang=pt");
  assert.equal(await page.textContent("#tab-qk"), "Q·K");
  assert.match(await page.textContent("#qk-summary"), /^Camada \d+, cabeça \d+ \(lê a cabeça K\/V/);
  await page.click('#lang-switch [data-lang="en"]');
  assert.equal(await page.textContent("[role=tab]:first-child"), "Attention");
  assert.match(await page.textContent("#qk-summary"), /^Layer \d+, head \d+ \(reads K\/V head/);
  assert.equal(await page.evaluate(() => window.glassllmInspector.state.step), 3);
  const hash = new URLSearchParams((await page.evaluate(() => location.hash)).slice(1));
  assert.equal(hash.get("lang"), "en");
  assert.equal(hash.get("view"), "qk");
  assert.equal(await page.getAttribute('#lang-switch [data-lang="en"]', "aria-pressed"), "true");
  // Every view again, now in English.
  const seen = await everyView(page, null);
  assert.deepEqual(foreign(seen, "en", "pt"), []);
  // And back: the fragment follows the switch.
  await page.click('#lang-switch [data-lang="pt"]');
  assert.equal(await page.textContent("#tab-attention"), "Atenção");
  assert.match(await page.evaluate(() => location.hash), /lang=pt/);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("a browser asking for Portuguese gets it with no fragment; English otherwise", async () => {
  const pt = await open("", 1024, 768, ["pt-BR", "en"]);
  assert.equal(await pt.textContent("#tab-attention"), "Atenção");
  assert.match(await pt.textContent("#step-info"), /^Passo 0 de \d+: prefill do prompt/);
  // The browser's language is not written into the fragment; a choice is.
  assert.doesNotMatch(await pt.evaluate(() => location.hash), /lang=/);
  await pt.close();
  const en = await open("", 1024, 768, ["en-GB", "pt-BR"]);
  assert.equal(await en.textContent("#tab-attention"), "Attention");
  await en.close();
  const forced = await open("#lang=en", 1024, 768, ["pt-BR"]);
  assert.equal(await forced.textContent("#tab-attention"), "Attention");
  await forced.close();
});
