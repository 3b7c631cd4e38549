// i18n_tables.test.mjs: the page's two message tables (viewer/i18n.js) hold
// the same ids with the same {placeholders}; every id the scripts and
// index.html name is in them; t() fills placeholders and the language comes
// from the fragment, then the browser. Plain Node: i18n.js runs in a VM
// context with the little of a page it touches.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import vm from "node:vm";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const viewer = path.join(root, "viewer");
const source = fs.readFileSync(path.join(viewer, "i18n.js"), "utf8");

// i18n.js in a context whose page has `hash` as its fragment and `languages`
// as the browser's languages.
function load(hash = "", languages = ["en-US"]) {
  const root = { dataset: {}, lang: "" };
  const page = vm.createContext({
    location: { hash },
    navigator: { languages, language: languages[0] },
    document: { documentElement: root, title: "", querySelectorAll: () => [] },
    URLSearchParams,
  });
  vm.runInContext(source, page);
  return { page, root, run: (code) => vm.runInContext(code, page) };
}

const { run } = load();
const MESSAGES = run("MESSAGES");
const placeholders = (text) => [...new Set(text.match(/\{\w+\}/g) || [])].sort();

test("English and Portuguese have the same ids, placeholders, and no empty message", () => {
  const en = Object.keys(MESSAGES.en).sort(),
    pt = Object.keys(MESSAGES.pt).sort();
  assert.deepEqual(
    en.filter((k) => !(k in MESSAGES.pt)),
    [],
    "ids only in English",
  );
  assert.deepEqual(
    pt.filter((k) => !(k in MESSAGES.en)),
    [],
    "ids only in Portuguese",
  );
  assert.ok(en.length > 200, "the tables hold the page's " + en.length + " messages");
  for (const id of en) {
    assert.ok(MESSAGES.en[id].trim() && MESSAGES.pt[id].trim(), id + " is empty");
    assert.deepEqual(placeholders(MESSAGES.pt[id]), placeholders(MESSAGES.en[id]), id);
  }
});

test("the Portuguese table is Portuguese: the glossary's terms, few English sentences", () => {
  const pt = MESSAGES.pt;
  assert.equal(pt["tabs.attention"], "Atenção");
  assert.equal(pt["tabs.cache"], "Cache K/V");
  assert.match(pt["step.words_decode"], /passo de decodificação/);
  assert.match(pt["attn.group"], /cabeça K\/V/);
  assert.match(pt["explain.attention.see"], /máscara causal/);
  assert.match(pt["explain.graph.look"], /agrupado/);
  // Words that are English only (never Portuguese nor a name the page shows).
  const english = /\b(the|of|and|with|this|step|layer|head|heads|query|keys|open|shown)\b/i;
  const leaks = Object.entries(pt).filter(([, text]) =>
    english.test(text.replace(/<code>.*?<\/code>|\{\w+\}/g, "")),
  );
  assert.deepEqual(leaks, [], "English words in the Portuguese table");
});

test("every message id the scripts and index.html name is in the tables", () => {
  const ids = new Set();
  for (const f of fs.readdirSync(viewer).filter((f) => /\.js$/.test(f))) {
    const text = fs.readFileSync(path.join(viewer, f), "utf8");
    for (const m of text.matchAll(/\bt\("([a-z_]+\.[a-z_.]+)"/g)) ids.add(m[1]);
    for (const m of text.matchAll(/\btn\("([a-z_]+\.[a-z_.]+)"/g)) {
      ids.add(m[1] + ".one");
      ids.add(m[1] + ".other");
    }
  }
  const html = fs.readFileSync(path.join(viewer, "index.html"), "utf8");
  for (const m of html.matchAll(/data-i18n(?:-[a-z-]+)?="([^"]+)"/g)) ids.add(m[1]);
  assert.ok(ids.size > 150, ids.size + " ids found");
  assert.deepEqual(
    [...ids].filter((id) => !(id in MESSAGES.en)),
    [],
    "ids missing from the tables",
  );
});

test("t() fills placeholders; tn() picks one or other", () => {
  const { run } = load("#lang=pt");
  assert.equal(run('t("layer.n", { layer: 3 })'), "camada 3");
  assert.equal(run('tn("graph.repeat", 1, { bytes: "8 B" })'), "1 nó repeat_kv (8 B).");
  assert.equal(run('tn("graph.repeat", 2, { bytes: "8 B" })'), "2 nós repeat_kv (8 B).");
  assert.throws(() => run('t("no.such.id")'), /no message no\.such\.id/);
});

test("the language: the fragment's lang=, else the browser's, else English", () => {
  const cases = [
    ["#lang=pt", ["en-US"], "pt", true],
    ["#view=qk&lang=en&step=2", ["pt-BR"], "en", true],
    ["#view=qk", ["pt-BR", "en"], "pt", false],
    ["", ["pt"], "pt", false],
    ["", ["en-GB", "pt-BR"], "en", false],
    ["#lang=fr", ["de"], "en", false],
  ];
  for (const [hash, languages, want, chosen] of cases) {
    const { run, root } = load(hash, languages);
    assert.equal(run("lang"), want, hash + " " + languages);
    assert.equal(run("langChosen"), chosen, hash + " " + languages);
    assert.equal(root.lang, want === "pt" ? "pt-BR" : "en");
  }
});
