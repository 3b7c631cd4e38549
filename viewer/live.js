// live.js: the live inspector. When the page holds the WebAssembly engine
// (element id="engine", built by scripts/build-wasm.sh) and a model (element
// id="model", written by `glassllm inspector` or `trace --html`), the live bar
// generates from a typed prompt with the engine's tracer and shows the trace
// in every view, through the same loadTraceText as a trace opened from disk;
// the Gradients view gets the loss of a typed target continuation and its
// gradient by token. Everything runs in the page: no file, no request.
//
// For tests and teachers' own scripts, window.glassllm:
//   generate(prompt, steps = 16, temperature = 0, seed = 0) -> Promise of the trace object
//   gradients(prompt, target) -> Promise of {loss, tokens: [{text, grad_norm}], ...}
//   loadModel({config, tokenizer, weights}) -> Promise of the model's sizes
//   ready: a Promise that settles once the engine and the page's model are loaded
//   timings() -> {engine_ms, text_ms, parse_ms} of the last generate (viewer/bench.mjs)
"use strict";

// The largest model.safetensors a page runs: the page carries the model as
// base64 (4/3 of its size) and the engine holds it twice while loading. The
// command line refuses a bigger model with the same limit (cli/cli.h,
// kPageModelLimit).
const PAGE_MODEL_LIMIT = 16 * 1024 * 1024;

const live = { module: null, ready: null, info: null, target: null, warm: false, timings: null };

function mib(bytes) {
  return (bytes / (1024 * 1024)).toFixed(1) + " MiB";
}

function bytesOfBase64(text) {
  const raw = atob(text);
  const out = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
  return out;
}

// Calls one of web/engine.cpp's functions; each returns a string, or 0 and
// leaves its message in glassllm_error().
// live.timings: how long the last call took in the engine and in turning its
// answer into a JavaScript string (generate adds the JSON parse).
function callEngine(name, types, args) {
  const M = live.module;
  const t0 = performance.now();
  const at = M.ccall(name, "number", types, args);
  const t1 = performance.now();
  if (!at) throw new Error(M.UTF8ToString(M._glassllm_error()));
  const text = M.UTF8ToString(at);
  live.timings = { engine_ms: t1 - t0, text_ms: performance.now() - t1 };
  return text;
}

async function startEngine() {
  if (typeof GlassLMEngine !== "function") throw new Error(t("live.no_engine"));
  // The engine prints nothing; a message would only be an error we report anyway.
  live.module = await GlassLMEngine({ print: () => {}, printErr: () => {} });
}

// files: {config: text, tokenizer: text, weights: Uint8Array or base64 text}.
async function loadModel(files) {
  if (!live.module) await startEngine();
  const weights = typeof files.weights === "string" ? bytesOfBase64(files.weights) : files.weights;
  if (!(weights instanceof Uint8Array)) throw new Error(t("live.weights_bytes"));
  if (weights.length > PAGE_MODEL_LIMIT)
    throw new Error(t("live.too_big", { size: mib(weights.length), limit: mib(PAGE_MODEL_LIMIT) }));
  const M = live.module;
  const at = M._malloc(weights.length);
  try {
    M.HEAPU8.set(weights, at);
    const sizes = callEngine(
      "glassllm_load",
      ["string", "string", "number", "number"],
      [files.config, files.tokenizer || "", at, weights.length],
    );
    live.info = JSON.parse(sizes);
  } finally {
    M._free(at);
  }
  warmUp();
  return live.info;
}

// The browser compiles WebAssembly in two tiers: each function first with a
// quick baseline compiler, then, in the background, with the optimising one
// once it has run hot; a call that is already running keeps the code it
// started with. So the page's first generation would run all of its steps
// in baseline code, several times slower than the same generation later
// (docs/10-gqa-without-copies.md has the figures). One short traced
// generation once the first model is loaded marks the engine's hot code for
// the optimising compiler, which then works while the student types a
// prompt. Its trace is thrown away; a model that cannot take this prompt
// only loses the head start.
const WARM_UP_PROMPT = "C abcd=",
  WARM_UP_STEPS = 4;
function warmUp() {
  if (live.warm) return;
  live.warm = true;
  try {
    live.module.ccall(
      "glassllm_trace",
      "number",
      ["string", "number", "number", "number"],
      [WARM_UP_PROMPT, WARM_UP_STEPS, 0, 0],
    );
  } catch (e) {
    // nothing to report: the page works as before, only its first run is slower
  }
}

async function modelReady() {
  await live.ready;
  if (!live.info) throw new Error(t("live.no_model"));
}

async function generateTrace(prompt, steps = 16, temperature = 0, seed = 0) {
  await modelReady();
  // The engine takes a C string: a NUL would silently end the prompt there.
  if (String(prompt).includes("\0")) throw new Error(t("live.nul_prompt"));
  const text = callEngine(
    "glassllm_trace",
    ["string", "number", "number", "number"],
    [String(prompt), Number(steps), Number(temperature), Number(seed)],
  );
  const t0 = performance.now();
  const doc = JSON.parse(text);
  live.timings.parse_ms = performance.now() - t0;
  return doc;
}

async function targetGradients(prompt, target) {
  await modelReady();
  for (const [what, text] of [
    ["live.nul_prompt", prompt],
    ["live.nul_target", target],
  ])
    if (String(text).includes("\0")) throw new Error(t(what));
  return JSON.parse(
    callEngine("glassllm_gradients", ["string", "string"], [String(prompt), String(target)]),
  );
}

// ---- the live bar -----------------------------------------------------------------

// The bar's status as a message id and its data, said again in a new language.
let liveStatus = null;
function setStatus(id, params) {
  liveStatus = id ? { id, params } : null;
  $("live-status").textContent = id ? t(id, params) : "";
}
function relabelLive() {
  if (liveStatus) setStatus(liveStatus.id, liveStatus.params);
  if (pageModel()) setupPromptText();
  renderTarget();
}

// A moment for the browser to paint "Generating…" before the engine, which
// runs on this thread, holds it.
const nextFrame = () => new Promise((done) => setTimeout(done, 0));

async function onGenerate(ev) {
  ev.preventDefault();
  const prompt = $("live-prompt").value;
  const steps = Number($("live-steps").value),
    temperature = Number($("live-temperature").value);
  $("live-generate").disabled = true;
  setStatus("live.generating");
  await nextFrame();
  try {
    const t0 = performance.now();
    const text = callEngine(
      "glassllm_trace",
      ["string", "number", "number", "number"],
      [prompt, steps, temperature, Date.now() % 1e9],
    );
    const ms = performance.now() - t0;
    if (loadTraceText(text, "name.live")) {
      showAnswer();
      setStatus("live.generated", { ms: Math.round(ms) });
      if (live.target) clearTarget();
    } else setStatus(null);
  } catch (e) {
    showMessage(t("live.gen_failed", { why: e.message }));
    setStatus(null);
  } finally {
    $("live-generate").disabled = false;
  }
}

// ---- live gradients, in the Gradients view ------------------------------------------

function clearTarget() {
  live.target = null;
  for (const id of ["target-summary", "target-chart", "target-readout"]) $(id).hidden = true;
}

function renderTarget() {
  const g = live.target;
  if (!g) return;
  for (const id of ["target-summary", "target-chart", "target-readout"]) $(id).hidden = false;
  const per = g.target.map((tok) => showText(tok.text) + " " + fmt(tok.loss)).join(", ");
  $("target-summary").textContent = t("target.summary", {
    target: JSON.stringify(g.target.map((tok) => tok.text).join("")),
    loss: fmt(g.loss),
    n: g.target.length,
    per,
  });
  drawBars(
    $("target-chart"),
    g.tokens.map((tok) => showText(tok.text)),
    [
      {
        name: t("target.bars"),
        color: OKABE_ITO[5],
        values: g.tokens.map((tok) => tok.grad_norm),
      },
    ],
    null,
    fmt,
  );
  const order = g.tokens
    .map((tok, i) => [tok.grad_norm, i])
    .sort((a, b) => b[0] - a[0])
    .slice(0, 5);
  $("target-readout").textContent =
    t("grads.most") +
    order
      .map(
        ([v, i]) =>
          t("grads.pos", { pos: i }) + " " + JSON.stringify(g.tokens[i].text) + " " + fmt(v),
      )
      .join("; ");
}

async function onGradients(ev) {
  ev.preventDefault();
  try {
    live.target = await targetGradients($("live-prompt").value, $("live-target").value);
    clearMessage();
    selectTab("grads");
    renderTarget();
  } catch (e) {
    showMessage(t("target.failed", { why: e.message }));
  }
}

// ---- start ----------------------------------------------------------------------------

// The model element: the files' contents, or {"refused": why} when the model
// could not be put in the page; empty without a model.
function pageModel() {
  const text = $("model").textContent;
  return text.trim() ? parseJsonBounded(text, t("live.page_model")) : null;
}

async function startLive() {
  const model = pageModel();
  if (!model) return;
  if (model.refused) {
    // Said in the bar, not as an error: the page's trace is all there is.
    setStatus("live.off_refused", { why: model.refused });
    $("live-status").title = model.refused;
    throw new Error(model.refused);
  }
  setStatus("live.starting");
  const t0 = performance.now();
  await loadModel(model);
  window.glassllm.startMs = performance.now() - t0;
  $("target-form").hidden = false;
  $("live-generate").disabled = false;
  const first = state.trace && state.trace.doc.sequence;
  if (first && !$("live-prompt").value)
    $("live-prompt").value = first
      .slice(0, state.trace.doc.steps[0].tokens.length)
      .map((t) => t.text)
      .join("");
  checkPrompt();
  if (model.folder) setStatus("live.ready", { folder: model.folder });
  else setStatus("live.ready_unnamed");
}

function toggleLiveBar() {
  const open = $("live").hidden;
  $("live").hidden = !open;
  $("live-open").setAttribute("aria-pressed", String(open));
  renderTab(); // the maps fit the height left
  if (open) $("live-prompt").focus();
}

function setupLive() {
  $("live-open").addEventListener("click", toggleLiveBar);
  if (pageModel()) setupPromptHelp();
  $("live").addEventListener("submit", onGenerate);
  $("target-form").addEventListener("submit", onGradients);
  // The chart is drawn to its canvas's size, which is 0 while its view is hidden.
  const redraw = () => state.tab === "grads" && renderTarget();
  window.addEventListener("resize", () => setTimeout(redraw, 200));
  document.querySelector('[data-tab="grads"]').addEventListener("click", redraw);
  live.ready = startLive().catch((e) => {
    if (pageModel().refused) throw e;
    setStatus("live.off");
    showMessage(t("live.start_failed", { why: e.message }));
    throw e;
  });
  live.ready.catch(() => {}); // reported above; callers of the API see it too
  window.glassllm = {
    ready: live.ready,
    generate: generateTrace,
    gradients: targetGradients,
    loadModel: (files) =>
      loadModel(files).catch((e) => {
        showMessage(t("live.load_failed", { why: e.message }));
        throw e;
      }),
    startMs: null,
    timings: () => live.timings,
  };
}

setupLive();
