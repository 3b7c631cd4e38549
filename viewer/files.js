// files.js: opening files -- the trace embedded in the page, a file picked or
// dropped -- into app.js's state. A trace that cannot be read or drawn leaves
// a one-line message and the trace shown before.
"use strict";

// A page written by `glassllm trace --html` holds its trace in a script
// element; opening such a page as a file reads that element.
function traceTextOf(text) {
  const start = text.trimStart();
  if (!start.startsWith("<")) return text;
  const doc = new DOMParser().parseFromString(text, "text/html");
  const e = doc.getElementById("trace");
  if (!e || !e.textContent.trim()) throw new Error(t("open.no_trace_in_html"));
  return e.textContent;
}

// The per-trace part of the state, saved so a trace that fails to draw can
// be taken back.
function traceState() {
  return {
    trace: state.trace,
    name: state.name,
    nameId: state.nameId,
    step: state.step,
    zoom: state.zoom,
    graphSel: state.graphSel,
    cmp: state.cmp,
    hover: state.hover,
    layerPick: state.layerPick,
    headPick: state.headPick,
    summaryMaps: state.summaryMaps,
    pres: state.pres,
  };
}

// name: the file's name, or the message id of a trace with no file
// ("name.embedded", "name.live"), named again in the page's language.
function loadTraceText(text, name) {
  const nameId = /^name\./.test(name) ? name : null;
  if (nameId) name = t(nameId);
  const kept = () => (state.trace ? t("open.kept", { name: state.name }) : "");
  let trace;
  try {
    trace = parseTrace(traceTextOf(text));
  } catch (e) {
    showMessage(t("open.failed", { name, why: e.message }) + kept());
    return false;
  }
  const before = traceState();
  stopPlaying();
  Object.assign(state, {
    trace,
    name,
    nameId,
    step: 0,
    zoom: null,
    graphSel: null,
    hover: null,
    layerPick: null,
    headPick: null,
    summaryMaps: trace.layers.length * trace.doc.config.n_heads > 64,
    pres: { layer: trace.layers[0], group: 0, head: null },
  });
  try {
    if (state.b) state.cmp = compareTraces(state.trace, state.b);
    buildForTrace();
    renderAll();
  } catch (e) {
    // Checked but still not drawable: put the previous trace back.
    Object.assign(state, before);
    if (state.trace) {
      buildForTrace();
      renderAll();
    } else clearPage();
    showMessage(t("open.failed", { name, why: e.message }) + kept());
    return false;
  }
  clearMessage();
  const unknown = trace.doc.sequence.filter((tok) => tok.text === "\ufffd").length;
  // The text shown is then not the text typed: say so above the trace.
  if (unknown) showMessage(tn("open.unknown", unknown));
  return true;
}

// The page as it is before any trace is opened.
function clearPage() {
  $("summary").textContent = t("summary.none");
  for (const id of ["tokens", "timeline", "grid", "legend"]) $(id).replaceChildren();
  $("step-info").textContent = "";
}

function loadCompareText(text, name) {
  if (!state.trace) {
    showMessage(t("compare.first"));
    return;
  }
  let b, cmp;
  try {
    b = parseTrace(traceTextOf(text));
    cmp = compareTraces(state.trace, b);
  } catch (e) {
    showMessage(t("compare.failed", { name, why: e.message }));
    return;
  }
  clearMessage();
  state.b = b;
  state.bName = name;
  state.cmp = cmp;
  state.cmpSel = state.cmp.groups.findIndex((g) => g.max === state.cmp.max);
  state.cmpHead = null;
  renderCompare();
}

function loadMetricsText(text, name) {
  try {
    state.metrics = parseMetrics(text);
    state.metrics.name = name;
  } catch (e) {
    showMessage(t("open.failed", { name, why: e.message }));
    return;
  }
  clearMessage();
  renderMetrics();
}

async function readFile(file, kind) {
  const text = await file.text();
  if (kind === "compare") loadCompareText(text, file.name);
  else if (kind === "metrics" || /\.jsonl$/i.test(file.name)) {
    loadMetricsText(text, file.name);
    selectTab("metrics");
  } else loadTraceText(text, file.name);
  state.filesRead++; // the tests wait on this
}

function setupFilePicker(buttonId, inputId, kind) {
  $(buttonId).addEventListener("click", () => $(inputId).click());
  $(inputId).addEventListener("change", async (ev) => {
    const f = ev.target.files[0];
    if (f) await readFile(f, kind);
    ev.target.value = "";
  });
}
