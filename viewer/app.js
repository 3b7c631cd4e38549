// app.js: the inspector's state, its controls and keyboard. files.js opens
// files (the embedded trace, the file pickers, drag and drop); trace.js reads
// and checks traces; attention.js, present.js and panels.js build the views
// with views.js, graph.js and qk.js; link.js keeps the URL fragment; export.js
// writes PNGs.
"use strict";

const state = {
  trace: null,
  name: "",
  step: 0,
  mode: "attn.softmax",
  colorMode: "shared", // one colour scale for every map, or each map its own
  scale: "viridis",
  tab: "attention",
  layerPick: null, // layers shown (null: all)
  headPick: null, // query heads shown (null: all)
  summaryMaps: false, // one mean-over-heads map per layer
  zoom: null, // {layer, head} of the enlarged map
  zoomFill: false,
  present: false, // presentation mode (present.js)
  pres: { layer: 0, group: 0, head: null }, // what presentation mode shows
  qkQuery: null, // the Q·K view's query row a link asked for
  cursor: { r: 0, c: 0 },
  hover: null, // {layer, head, r, c} of the cell last read out
  b: null,
  bName: "",
  cmp: null,
  cmpSel: 0,
  cmpHead: null,
  metrics: null,
  graphSel: null,
  playing: null, // the autoplay timer
  filesRead: 0,
};

const $ = (id) => document.getElementById(id);
// The message ids of the three kinds of map (i18n.js).
const MODE_IDS = {
  "attn.scores": "mode.raw",
  "attn.scores_masked": "mode.masked",
  "attn.softmax": "mode.softmax",
};
const modeName = (mode) => t(MODE_IDS[mode]);
const PLAY_MS = 1200;

// ---- messages -------------------------------------------------------------------

function showMessage(text) {
  const m = $("message");
  m.textContent = text;
  m.hidden = false;
}
function clearMessage() {
  $("message").hidden = true;
  $("message").textContent = "";
}

// ---- building per trace -----------------------------------------------------------

// Step labels on the timeline: prefill, d1, d2, ..., and r1, r2, ... for the
// window resets.
function stepLabels(doc) {
  let decode = 0,
    reset = 0;
  return doc.steps.map((s) =>
    s.kind === "prefill"
      ? t("step.prefill")
      : s.kind === "decode"
        ? t("step.decode_label", { n: ++decode })
        : t("step.reset_label", { n: ++reset }),
  );
}

function buildForTrace() {
  const tr = state.trace,
    d = tr.doc,
    c = d.config;
  $("summary").textContent = t("summary.trace", {
    name: state.name,
    layers: c.n_layers,
    heads: c.n_heads,
    kv: c.n_kv_heads,
    rep: c.n_rep,
    hd: c.head_dim,
    dtype: d.dtype,
    path: d.attention,
    steps: d.steps.length,
    tokens: d.sequence.length,
  });
  // Tokens
  const promptLen = d.steps[0].kind === "prefill" ? d.steps[0].tokens.length : 0;
  const chips = d.sequence.map((tok, i) =>
    el(
      "span",
      {
        class: "tok" + (i >= promptLen ? " gen" : "") + (specialName(tok.text) ? " special" : ""),
        "data-index": i,
        title: t(i >= promptLen ? "token.generated" : "token.prompt", {
          tok: tokenLabel(tok),
          i,
          id: tok.id,
        }),
      },
      el("span", { class: "t", text: showText(tok.text) }),
      el("span", { class: "i", text: String(tok.id) }),
    ),
  );
  $("tokens").replaceChildren(...chips);
  // Timeline
  const labels = stepLabels(d);
  const buttons = d.steps.map((s, i) =>
    el("button", {
      type: "button",
      role: "option",
      class: s.kind,
      "data-step": i,
      text: labels[i],
      "aria-label": t("step.aria", { i, kind: t("kind." + s.kind) }),
      onclick: () => setStep(i),
    }),
  );
  $("timeline").replaceChildren(...buttons);
  // Layer selects
  const layerOpts = (withAll) => [
    ...tr.layers.map((l) => el("option", { value: String(l), text: t("layer.n", { layer: l }) })),
    ...(withAll
      ? [
          el("option", { value: "outside", text: t("layer.outside") }),
          el("option", { value: "all", text: t("layer.all") }),
        ]
      : []),
  ];
  $("graph-layer").replaceChildren(...layerOpts(true));
  $("grads-layer").replaceChildren(
    el("option", { value: "all", text: t("layer.all_layers") }),
    ...layerOpts(false),
  );
  $("qk-layer").replaceChildren(...layerOpts(false));
  $("layer-select").value = t("pick.all");
  $("head-select").value = t("pick.all");
  $("summary-maps").checked = state.summaryMaps;
  buildQkHeads();
}

// ---- rendering ----------------------------------------------------------------

function renderAll() {
  if (!state.trace) return;
  renderStep();
  renderTab();
}

function renderTab() {
  if (!state.trace && state.tab !== "metrics") return writeLink();
  if (state.tab === "attention") renderAttention();
  else if (state.tab === "qk") renderQk();
  else if (state.tab === "cache") renderCache();
  else if (state.tab === "graph") renderGraph();
  else if (state.tab === "compare") renderCompare();
  else if (state.tab === "grads") renderGrads();
  else if (state.tab === "metrics") renderMetrics();
  writeLink();
}

function currentStep() {
  return state.trace.doc.steps[state.step];
}

// A token in a sentence: quoted text, or a special token's name.
function tokenLabel(tok) {
  return tok ? specialName(tok.text) || JSON.stringify(tok.text) : "?";
}

function renderStep() {
  const d = state.trace.doc,
    s = currentStep();
  for (const b of $("timeline").children)
    b.setAttribute("aria-selected", String(Number(b.dataset.step) === state.step));
  const first = s.window_offset + s.keys.start,
    last = first + s.keys.count - 1;
  const newFirst = s.window_offset + s.start,
    newLast = newFirst + s.tokens.length - 1;
  for (const chip of $("tokens").children) {
    const i = Number(chip.dataset.index);
    chip.classList.toggle("key", i >= first && i <= last);
    chip.classList.toggle("new", i >= newFirst && i <= newLast);
  }
  const newChip = $("tokens").children[newLast];
  if (newChip) newChip.scrollIntoView({ block: "nearest", inline: "nearest" });
  const words =
    s.kind === "prefill"
      ? t("step.words_prefill")
      : s.kind === "decode"
        ? t("step.words_decode")
        : t("step.words_reset", { label: stepLabels(d)[state.step], n: s.tokens.length }) +
          (s.rows.count < s.tokens.length ? t("step.words_reset_row", { pos: s.rows.start }) : "");
  const top = (s.top_k || [])
    .slice(0, 3)
    .map((c) => tokenLabel(c) + " " + fmt(c.prob))
    .join(", ");
  $("step-info").textContent =
    t("step.info", { step: state.step, last: d.steps.length - 1, words }) +
    (s.tokens.length === 1
      ? t("step.info_one", { pos: s.start })
      : t("step.info_many", {
          n: s.tokens.length,
          from: s.start,
          to: s.start + s.tokens.length - 1,
        })) +
    t("step.info_keys", { m: s.keys.count }) +
    (s.next
      ? t("step.info_chose", { tok: tokenLabel(s.next), id: s.next.id, p: fmt(s.next.prob) })
      : "") +
    (top ? t("step.info_top", { top }) : "");
  $("step-info").title = $("step-info").textContent;
}

function setStep(i) {
  if (!state.trace) return;
  const n = state.trace.doc.steps.length;
  const next = Math.max(0, Math.min(n - 1, i));
  if (next === state.step) return;
  state.step = next;
  state.graphSel = null;
  renderAll();
}

// ---- autoplay -------------------------------------------------------------------

function startPlaying() {
  if (!state.trace || state.playing) return;
  if (state.step >= state.trace.doc.steps.length - 1) setStep(0);
  state.playing = setInterval(() => {
    if (state.step >= state.trace.doc.steps.length - 1) stopPlaying();
    else setStep(state.step + 1);
  }, PLAY_MS);
  $("play").textContent = t("steps.pause");
  $("play").setAttribute("aria-pressed", "true");
}
function stopPlaying() {
  if (state.playing) clearInterval(state.playing);
  state.playing = null;
  $("play").textContent = t("steps.play");
  $("play").setAttribute("aria-pressed", "false");
}

// ---- presentation mode ------------------------------------------------------------

function setPresenting(on) {
  if (on && !state.present) startPresenting();
  state.present = on;
  document.body.classList.toggle("present", on);
  document.documentElement.classList.toggle("present", on);
  syncPresentButtons();
  renderTab();
}
function syncPresentButtons() {
  $("present").setAttribute("aria-pressed", String(state.present));
  $("present-exit").hidden = !state.present;
}

// ---- language -------------------------------------------------------------------------

// After a change of language (i18n.js has replaced index.html's text): the
// text the scripts wrote, again, keeping every choice the controls hold.
function relabelPage() {
  if (state.nameId) state.name = t(state.nameId);
  $("play").textContent = t(state.playing ? "steps.pause" : "steps.play");
  if (state.trace) {
    const ids = [
      "layer-select",
      "head-select",
      "graph-layer",
      "grads-layer",
      "qk-layer",
      "qk-head",
    ];
    const kept = ids.map((id) => [id, $(id).value]);
    buildForTrace();
    for (const [id, v] of kept) $(id).value = v;
    if (!state.layerPick) $("layer-select").value = t("pick.all");
    if (!state.headPick) $("head-select").value = t("pick.all");
    renderAll();
  } else renderTab();
  if (state.metrics) renderMetrics();
  if (typeof relabelLive === "function") relabelLive(); // live.js, when the page has a model
}

// ---- tabs and keyboard --------------------------------------------------------------

function selectTab(name) {
  state.tab = name;
  for (const b of document.querySelectorAll("[role=tab]")) {
    b.setAttribute("aria-selected", String(b.dataset.tab === name));
    b.tabIndex = b.dataset.tab === name ? 0 : -1;
  }
  for (const p of document.querySelectorAll(".panel")) p.hidden = p.id !== "panel-" + name;
  hideTip();
  renderTab();
}

function isTyping(target) {
  return (
    target &&
    (target.tagName === "INPUT" || target.tagName === "SELECT" || target.tagName === "TEXTAREA")
  );
}

// The tab list as ARIA asks: arrows, Home and End move between tabs.
function tabKey(ev) {
  const tabs = [...document.querySelectorAll("[role=tab]")];
  const i = tabs.indexOf(ev.target);
  const to =
    ev.key === "ArrowRight"
      ? (i + 1) % tabs.length
      : ev.key === "ArrowLeft"
        ? (i + tabs.length - 1) % tabs.length
        : ev.key === "Home"
          ? 0
          : ev.key === "End"
            ? tabs.length - 1
            : -1;
  if (to < 0) return false;
  ev.preventDefault();
  selectTab(tabs[to].dataset.tab);
  tabs[to].focus();
  return true;
}

function onKey(ev) {
  if (ev.target.getAttribute && ev.target.getAttribute("role") === "tab" && tabKey(ev)) return;
  if (ev.target === $("zoom-canvas") && state.zoom && ev.key.startsWith("Arrow")) {
    const mat = matrixFor(state.step, state.zoom.layer, state.zoom.head);
    if (!mat) return;
    ev.preventDefault();
    const c = state.cursor;
    if (ev.key === "ArrowLeft") c.c = Math.max(0, c.c - 1);
    if (ev.key === "ArrowRight") c.c = Math.min(mat.cols - 1, c.c + 1);
    if (ev.key === "ArrowUp") c.r = Math.max(0, c.r - 1);
    if (ev.key === "ArrowDown") c.r = Math.min(mat.rows - 1, c.r + 1);
    renderZoom();
    return;
  }
  if (ev.key === "Escape" && state.zoom) {
    closeZoom();
    return;
  }
  if (!isTyping(ev.target) && presentKey(ev)) return;
  if (ev.key === "Escape" && document.body.classList.contains("present")) {
    setPresenting(false);
    return;
  }
  if (isTyping(ev.target) || ev.altKey || ev.ctrlKey || ev.metaKey) return;
  if (ev.key === " " && ev.target.tagName !== "BUTTON") {
    ev.preventDefault();
    if (state.playing) stopPlaying();
    else startPlaying();
    return;
  }
  if (ev.key === "p" || ev.key === "P") {
    setPresenting(!document.body.classList.contains("present"));
    return;
  }
  if (ev.key === "ArrowRight") {
    ev.preventDefault();
    stopPlaying();
    setStep(state.step + 1);
  } else if (ev.key === "ArrowLeft") {
    ev.preventDefault();
    setStep(state.step - 1);
  } else if (ev.key === "Home") {
    ev.preventDefault();
    setStep(0);
  } else if (ev.key === "End") {
    ev.preventDefault();
    setStep(Infinity);
  }
}

function setup() {
  setupFilePicker("open-trace", "trace-file", "trace");
  setupFilePicker("open-compare", "compare-file", "compare");
  setupFilePicker("open-metrics", "metrics-file", "metrics");
  for (const b of document.querySelectorAll("[role=tab]"))
    b.addEventListener("click", (ev) => {
      selectTab(b.dataset.tab);
      // A mouse click leaves the arrow keys to the steps; from the keyboard
      // (detail 0) the tab keeps the focus and the arrows move between tabs.
      if (ev.detail > 0) b.blur();
    });
  for (const r of document.querySelectorAll("input[name=mode]"))
    r.addEventListener("change", () => {
      state.mode = r.value;
      renderTab();
    });
  $("color-mode").addEventListener("change", (ev) => {
    state.colorMode = ev.target.value;
    renderTab();
  });
  const pick = (id, key, what) =>
    $(id).addEventListener("change", (ev) => {
      if (!state.trace) return;
      const c = state.trace.doc.config;
      try {
        state[key] = parsePick(ev.target.value, key === "layerPick" ? c.n_layers : c.n_heads, what);
      } catch (e) {
        showMessage(e.message + t("pick.help"));
        return;
      }
      clearMessage();
      renderTab();
    });
  pick("layer-select", "layerPick", "attn.layers");
  pick("head-select", "headPick", "attn.heads");
  $("summary-maps").addEventListener("change", (ev) => {
    state.summaryMaps = ev.target.checked;
    state.zoom = null;
    renderTab();
  });
  $("zoom-fill").addEventListener("click", () => {
    state.zoomFill = !state.zoomFill;
    $("zoom-fill").setAttribute("aria-pressed", String(state.zoomFill));
    renderAttention();
    if (state.zoomFill) $("zoom").scrollIntoView({ block: "start" });
  });
  $("play").addEventListener("click", () => (state.playing ? stopPlaying() : startPlaying()));
  $("present").addEventListener("click", () =>
    setPresenting(!document.body.classList.contains("present")),
  );
  $("present-exit").addEventListener("click", () => setPresenting(false));
  for (const id of ["qk-layer", "qk-head", "qk-row"])
    $(id).addEventListener("change", () => {
      renderQk();
      writeLink();
    });
  $("loss-log").addEventListener("change", renderMetrics);
  $("scale").addEventListener("change", (ev) => {
    state.scale = ev.target.value;
    renderTab();
  });
  $("theme").addEventListener("change", (ev) => {
    document.documentElement.dataset.theme = ev.target.value;
    renderTab();
  });
  $("zoom-close").addEventListener("click", closeZoom);
  $("zoom-canvas").addEventListener("focus", drawCursor);
  $("graph-layer").addEventListener("change", renderTab);
  $("graph-params").addEventListener("change", renderGraph);
  $("grads-layer").addEventListener("change", renderTab);
  $("compare-head").addEventListener("change", (ev) => {
    state.cmpHead = Number(ev.target.value);
    renderCompare();
  });
  $("export-png").addEventListener("click", () => exportPng());
  for (const b of document.querySelectorAll("#lang-switch [data-lang]"))
    b.addEventListener("click", () => {
      setLang(b.dataset.lang, true);
      writeLink();
    });
  relabel = relabelPage;
  document.addEventListener("keydown", onKey);
  let depth = 0;
  document.addEventListener("dragenter", (ev) => {
    ev.preventDefault();
    depth++;
    $("dropmask").hidden = false;
  });
  document.addEventListener("dragleave", () => {
    if (--depth <= 0) {
      depth = 0;
      $("dropmask").hidden = true;
    }
  });
  document.addEventListener("dragover", (ev) => ev.preventDefault());
  document.addEventListener("drop", async (ev) => {
    ev.preventDefault();
    depth = 0;
    $("dropmask").hidden = true;
    const f = ev.dataTransfer && ev.dataTransfer.files[0];
    if (!f) return;
    await readFile(f, state.tab === "compare" && !/\.jsonl$/i.test(f.name) ? "compare" : "trace");
  });
  let resizeTimer = 0;
  window.addEventListener("resize", () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(renderTab, 150);
  });

  // The live bar (live.js) takes its room before the first render: the maps
  // are sized to the height left under it. A page that opens on a trace
  // keeps that room for the maps; its toolbar button opens the bar.
  const embedded = $("trace").textContent;
  const hasModel = Boolean($("model").textContent.trim());
  $("live").hidden = !hasModel || Boolean(embedded.trim());
  $("live-open").hidden = !hasModel;
  if (embedded.trim()) loadTraceText(embedded, "name.embedded");
  setupLinks();
  linksReady = true;
  if (location.hash.length > 1) applyLink(location.hash);
  else renderTab();
  // Sizes and labels are measured in the page's fonts: once they are all
  // loaded, measure and draw again.
  if (document.fonts && document.fonts.status !== "loaded")
    document.fonts.ready.then(() => {
      if (state.trace) renderAll();
      document.body.dataset.fonts = "1";
    });
  else document.body.dataset.fonts = "1";
  // For the tests and the benchmark: when the first render finished.
  window.glassllmInspector = {
    state,
    exportPng,
    loadTraceText,
    loadCompareText,
    loadMetricsText,
    setStep,
    selectTab,
    startPlaying,
    stopPlaying,
    exportTitle,
    applyLink,
    linkOf,
    firstRenderMs: performance.now(),
  };
  document.body.dataset.ready = "1";
}

setup();
