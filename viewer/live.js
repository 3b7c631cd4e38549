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
"use strict";

// The largest model.safetensors a page runs: the page carries the model as
// base64 (4/3 of its size) and the engine holds it twice while loading. The
// command line refuses a bigger model with the same limit (cli/cli.h,
// kPageModelLimit).
const PAGE_MODEL_LIMIT = 16 * 1024 * 1024;

const live = { module: null, ready: null, info: null, target: null };

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
function callEngine(name, types, args) {
  const M = live.module;
  const at = M.ccall(name, "number", types, args);
  if (!at) throw new Error(M.UTF8ToString(M._glassllm_error()));
  return M.UTF8ToString(at);
}

async function startEngine() {
  if (typeof GlassLMEngine !== "function")
    throw new Error(
      "this page has no engine; build it with scripts/build-wasm.sh, then scripts/build.sh",
    );
  // The engine prints nothing; a message would only be an error we report anyway.
  live.module = await GlassLMEngine({ print: () => {}, printErr: () => {} });
}

// files: {config: text, tokenizer: text, weights: Uint8Array or base64 text}.
async function loadModel(files) {
  if (!live.module) await startEngine();
  const weights = typeof files.weights === "string" ? bytesOfBase64(files.weights) : files.weights;
  if (!(weights instanceof Uint8Array)) throw new Error("weights must be bytes");
  if (weights.length > PAGE_MODEL_LIMIT)
    throw new Error(
      "the model's weights are " +
        mib(weights.length) +
        "; a page runs a model of at most " +
        mib(PAGE_MODEL_LIMIT),
    );
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
  return live.info;
}

async function modelReady() {
  await live.ready;
  if (!live.info) throw new Error("this page has no model; write one with glassllm inspector");
}

async function generateTrace(prompt, steps = 16, temperature = 0, seed = 0) {
  await modelReady();
  // The engine takes a C string: a NUL would silently end the prompt there.
  if (String(prompt).includes("\0"))
    throw new Error("the prompt holds a NUL character (U+0000), which the model cannot take");
  const text = callEngine(
    "glassllm_trace",
    ["string", "number", "number", "number"],
    [String(prompt), Number(steps), Number(temperature), Number(seed)],
  );
  return JSON.parse(text);
}

async function targetGradients(prompt, target) {
  await modelReady();
  for (const [what, text] of [
    ["prompt", prompt],
    ["target", target],
  ])
    if (String(text).includes("\0"))
      throw new Error(
        "the " + what + " holds a NUL character (U+0000), which the model cannot take",
      );
  return JSON.parse(
    callEngine("glassllm_gradients", ["string", "string"], [String(prompt), String(target)]),
  );
}

// ---- the live bar -----------------------------------------------------------------

function setStatus(text) {
  $("live-status").textContent = text;
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
  setStatus("Generating…");
  await nextFrame();
  try {
    const t0 = performance.now();
    const text = callEngine(
      "glassllm_trace",
      ["string", "number", "number", "number"],
      [prompt, steps, temperature, Date.now() % 1e9],
    );
    const ms = performance.now() - t0;
    if (loadTraceText(text, "the live trace")) {
      showAnswer();
      setStatus("Generated in " + Math.round(ms) + " ms.");
      if (live.target) clearTarget();
    } else setStatus("");
  } catch (e) {
    showMessage("Could not generate: " + e.message + ".");
    setStatus("");
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
  const per = g.target.map((t) => showText(t.text) + " " + fmt(t.loss)).join(", ");
  $("target-summary").textContent =
    "Target " +
    JSON.stringify(g.target.map((t) => t.text).join("")) +
    ": loss " +
    fmt(g.loss) +
    " nats, the mean of " +
    g.target.length +
    " tokens' \u2212log p (" +
    per +
    "). Bars: how much each input token moved that loss.";
  drawBars(
    $("target-chart"),
    g.tokens.map((t) => showText(t.text)),
    [
      {
        name: "\u2016\u2202 loss / \u2202 embedding\u2016 per input token",
        color: OKABE_ITO[5],
        values: g.tokens.map((t) => t.grad_norm),
      },
    ],
    null,
    fmt,
  );
  const order = g.tokens
    .map((t, i) => [t.grad_norm, i])
    .sort((a, b) => b[0] - a[0])
    .slice(0, 5);
  $("target-readout").textContent =
    "Most: " +
    order
      .map(([v, i]) => "pos " + i + " " + JSON.stringify(g.tokens[i].text) + " " + fmt(v))
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
    showMessage("Could not compute the gradients: " + e.message + ".");
  }
}

// ---- start ----------------------------------------------------------------------------

// The model element: the files' contents, or {"refused": why} when the model
// could not be put in the page; empty without a model.
function pageModel() {
  const text = $("model").textContent;
  return text.trim() ? parseJsonBounded(text, "the page's model") : null;
}

async function startLive() {
  const model = pageModel();
  if (!model) return;
  if (model.refused) {
    // Said in the bar, not as an error: the page's trace is all there is.
    setStatus("Off: " + model.refused);
    $("live-status").title = model.refused;
    throw new Error(model.refused);
  }
  setStatus("Starting the engine…");
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
  setStatus("Ready: " + (model.folder || "the model") + ".");
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
    setStatus("Live generation is off.");
    showMessage("The live engine did not start: " + e.message + ".");
    throw e;
  });
  live.ready.catch(() => {}); // reported above; callers of the API see it too
  window.glassllm = {
    ready: live.ready,
    generate: generateTrace,
    gradients: targetGradients,
    loadModel: (files) =>
      loadModel(files).catch((e) => {
        showMessage("Could not load the model: " + e.message + ".");
        throw e;
      }),
    startMs: null,
  };
}

setupLive();
