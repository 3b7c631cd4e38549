// app.js: the inspector's state, its controls and keyboard, loading files
// (the embedded trace, the file pickers, drag and drop) and PNG export.
// trace.js reads and checks traces; views.js, graph.js and qk.js draw.
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
const MODE_NAMES = {
  "attn.scores": "raw score",
  "attn.scores_masked": "masked score",
  "attn.softmax": "softmax",
};
const READOUT_HINT = "Hover a cell to read its value.";
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

// ---- loading --------------------------------------------------------------------

// A page written by `glassllm trace --html` holds its trace in a script
// element; opening such a page as a file reads that element.
function traceTextOf(text) {
  const start = text.trimStart();
  if (!start.startsWith("<")) return text;
  const doc = new DOMParser().parseFromString(text, "text/html");
  const e = doc.getElementById("trace");
  if (!e || !e.textContent.trim()) throw new Error("this HTML file holds no GlassLM trace");
  return e.textContent;
}

// The per-trace part of the state, saved so a trace that fails to draw can
// be taken back.
function traceState() {
  return {
    trace: state.trace,
    name: state.name,
    step: state.step,
    zoom: state.zoom,
    graphSel: state.graphSel,
    cmp: state.cmp,
    hover: state.hover,
    layerPick: state.layerPick,
    headPick: state.headPick,
    summaryMaps: state.summaryMaps,
  };
}

function loadTraceText(text, name) {
  const kept = () =>
    state.trace ? " The trace shown before (" + state.name + ") is still shown." : "";
  let trace;
  try {
    trace = parseTrace(traceTextOf(text));
  } catch (e) {
    showMessage("Could not open " + name + ": " + e.message + "." + kept());
    return false;
  }
  const before = traceState();
  stopPlaying();
  Object.assign(state, {
    trace,
    name,
    step: 0,
    zoom: null,
    graphSel: null,
    hover: null,
    layerPick: null,
    headPick: null,
    summaryMaps: trace.layers.length * trace.doc.config.n_heads > 64,
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
    showMessage("Could not open " + name + ": " + e.message + "." + kept());
    return false;
  }
  clearMessage();
  return true;
}

// The page as it is before any trace is opened.
function clearPage() {
  $("summary").textContent =
    "No trace loaded: open one with the button or drop a file on the page.";
  for (const id of ["tokens", "timeline", "grid", "legend"]) $(id).replaceChildren();
  $("step-info").textContent = "";
}

function loadCompareText(text, name) {
  if (!state.trace) {
    showMessage("Open trace A first, then trace B to compare.");
    return;
  }
  let b, cmp;
  try {
    b = parseTrace(traceTextOf(text));
    cmp = compareTraces(state.trace, b);
  } catch (e) {
    showMessage("Could not open trace B (" + name + "): " + e.message + ".");
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
    showMessage("Could not open " + name + ": " + e.message + ".");
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

// ---- building per trace -----------------------------------------------------------

// Step labels on the timeline: prefill, d1, d2, ..., and r1, r2, ... for the
// window resets.
function stepLabels(doc) {
  let decode = 0,
    reset = 0;
  return doc.steps.map((s) =>
    s.kind === "prefill" ? "prefill" : s.kind === "decode" ? "d" + ++decode : "r" + ++reset,
  );
}

function buildForTrace() {
  const t = state.trace,
    d = t.doc,
    c = d.config;
  $("summary").textContent =
    state.name +
    ": " +
    c.n_layers +
    " layers, " +
    c.n_heads +
    " query heads sharing " +
    c.n_kv_heads +
    " K/V heads (G = " +
    c.n_rep +
    "), head_dim " +
    c.head_dim +
    ", " +
    d.dtype +
    ", " +
    d.attention +
    " path, " +
    d.steps.length +
    " steps, " +
    d.sequence.length +
    " tokens";
  // Tokens
  const promptLen = d.steps[0].kind === "prefill" ? d.steps[0].tokens.length : 0;
  const chips = d.sequence.map((tok, i) =>
    el(
      "span",
      {
        class: "tok" + (i >= promptLen ? " gen" : ""),
        "data-index": i,
        title:
          JSON.stringify(tok.text) +
          ": index " +
          i +
          ", id " +
          tok.id +
          (i >= promptLen ? " (generated)" : " (prompt)"),
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
      "aria-label": "step " + i + ": " + s.kind.replace("_", " "),
      onclick: () => setStep(i),
    }),
  );
  $("timeline").replaceChildren(...buttons);
  // Layer selects
  const layerOpts = (withAll) => [
    ...t.layers.map((l) => el("option", { value: String(l), text: "layer " + l })),
    ...(withAll
      ? [
          el("option", { value: "outside", text: "outside the blocks" }),
          el("option", { value: "all", text: "all" }),
        ]
      : []),
  ];
  $("graph-layer").replaceChildren(...layerOpts(true));
  $("grads-layer").replaceChildren(
    el("option", { value: "all", text: "all layers" }),
    ...layerOpts(false),
  );
  $("qk-layer").replaceChildren(...layerOpts(false));
  $("layer-select").value = "all";
  $("head-select").value = "all";
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
  if (!state.trace && state.tab !== "metrics") return;
  if (state.tab === "attention") renderAttention();
  else if (state.tab === "qk") renderQk();
  else if (state.tab === "cache") renderCache();
  else if (state.tab === "graph") renderGraph();
  else if (state.tab === "compare") renderCompare();
  else if (state.tab === "grads") renderGrads();
  else if (state.tab === "metrics") renderMetrics();
}

function currentStep() {
  return state.trace.doc.steps[state.step];
}

function tokenLabel(tok) {
  return tok ? JSON.stringify(tok.text) : "?";
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
      ? "prefill of the prompt"
      : s.kind === "decode"
        ? "decode step"
        : "window reset " +
          stepLabels(d)[state.step] +
          ": the cache was full, so the last " +
          s.tokens.length +
          " tokens ran again from position 0" +
          (s.rows.count < s.tokens.length
            ? " (the trace keeps the new token's row, position " + s.rows.start + ")"
            : "");
  const top = (s.top_k || [])
    .slice(0, 3)
    .map((c) => tokenLabel(c) + " " + fmt(c.prob))
    .join(", ");
  $("step-info").textContent =
    "Step " +
    state.step +
    " of " +
    (d.steps.length - 1) +
    ": " +
    words +
    "; " +
    s.tokens.length +
    " token" +
    (s.tokens.length === 1 ? "" : "s") +
    " at position" +
    (s.tokens.length === 1
      ? " " + s.start
      : "s " + s.start + "-" + (s.start + s.tokens.length - 1)) +
    "; m = " +
    s.keys.count +
    " keys" +
    (s.next
      ? "; chose " + tokenLabel(s.next) + " (id " + s.next.id + ", p = " + fmt(s.next.prob) + ")"
      : "") +
    (top ? "; top: " + top : "");
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
  $("play").textContent = "\u23f8 Pause";
  $("play").setAttribute("aria-pressed", "true");
}
function stopPlaying() {
  if (state.playing) clearInterval(state.playing);
  state.playing = null;
  $("play").textContent = "\u25b6 Play";
  $("play").setAttribute("aria-pressed", "false");
}

// ---- presentation mode ------------------------------------------------------------

function setPresenting(on) {
  document.body.classList.toggle("present", on);
  $("present").setAttribute("aria-pressed", String(on));
  $("present-exit").hidden = !on;
  renderTab();
}

// ---- attention ------------------------------------------------------------------

// "all", "" -> null (everything); "0,2,5-7" -> [0, 2, 5, 6, 7]. Throws a
// message naming the field and the allowed range.
function parsePick(text, limit, what) {
  const t = text.trim().toLowerCase();
  if (t === "" || t === "all") return null;
  const out = new Set();
  for (const part of t.split(",")) {
    const m = /^\s*(\d+)\s*(?:-\s*(\d+))?\s*$/.exec(part);
    if (!m) throw new Error(what + ': "' + part.trim() + '" is not a number or a range like 2-5');
    const a = Number(m[1]),
      b = m[2] === undefined ? a : Number(m[2]);
    if (a > b || b >= limit)
      throw new Error(what + ": " + part.trim() + " is outside 0-" + (limit - 1));
    for (let i = a; i <= b; i++) out.add(i);
  }
  return [...out].sort((x, y) => x - y);
}

function shownLayers() {
  const t = state.trace;
  return t.layers.filter((l) => !state.layerPick || state.layerPick.includes(l));
}
function headShown(h) {
  return !state.headPick || state.headPick.includes(h);
}

function matrixFor(step, layer, head) {
  const snap = snapshot(state.trace, step, state.mode, layer);
  if (!snap) return null;
  const hi = snapshotHeads(snap).indexOf(head);
  if (hi < 0) return null;
  return headMatrix(snap, hi);
}

// The mean over the shown heads of one layer, as a matrix (null if any head
// is null there: masked in every head alike).
function meanMatrix(step, layer) {
  const snap = snapshot(state.trace, step, state.mode, layer);
  if (!snap) return null;
  const heads = snapshotHeads(snap)
    .map((h, i) => [h, i])
    .filter(([h]) => headShown(h));
  if (heads.length === 0) return null;
  const mats = heads.map(([, i]) => headMatrix(snap, i));
  const { rows, cols } = mats[0];
  const data = new Array(rows * cols);
  for (let r = 0; r < rows; r++)
    for (let c = 0; c < cols; c++) {
      let sum = 0,
        masked = false;
      for (const m of mats) {
        const v = m.at(r, c);
        if (v === null) masked = true;
        else sum += v;
      }
      data[r * cols + c] = masked ? null : sum / mats.length;
    }
  return { rows, cols, heads: heads.map(([h]) => h), at: (r, c) => data[r * cols + c] };
}

const isScores = () => state.mode !== "attn.softmax";

// The colour range of one map: softmax on 0..1 shared by every map (or
// 0..its maximum); scores symmetric around 0, over every shown map (or this
// one).
function rangeFor(mat, sharedLim) {
  if (!isScores()) {
    if (state.colorMode === "shared") return [0, 1];
    return [0, Math.max(matrixRange(mat)[1], 1e-12)];
  }
  let lim = sharedLim;
  if (state.colorMode === "each" || lim === undefined) {
    const [lo, hi] = matrixRange(mat);
    lim = Math.max(Math.abs(lo), Math.abs(hi));
  }
  lim = lim || 1;
  return [-lim, lim];
}
function scaleName() {
  return isScores() ? "diverging" : state.scale;
}

function describeCell(layer, head, r, c, v) {
  const t = state.trace;
  const q = queryToken(t, state.step, r),
    k = keyToken(t, state.step, c);
  const who =
    head === "mean"
      ? "layer " + layer + " mean of heads " + meanMatrix(state.step, layer).heads.join(",")
      : "layer " + layer + " head " + head + " (K/V head " + t.groupOf.get(head) + ")";
  return (
    who +
    ": query " +
    tokenLabel(q.tok) +
    " (pos " +
    q.pos +
    ") \u2192 key " +
    tokenLabel(k.tok) +
    " (pos " +
    k.pos +
    "): " +
    MODE_NAMES[state.mode] +
    " = " +
    (head === "mean" && typeof v === "number" ? fmt(v) : showValue(rounded(v, traceDigits(t.doc))))
  );
}

// The readout follows the cell last hovered (or the cursor): after a change
// of step, mode or selection it reads that cell's new value, or goes back
// to the hint when the cell is gone.
function refreshReadout() {
  const h = state.hover;
  let text = READOUT_HINT;
  if (h) {
    const mat =
      h.head === "mean" ? meanMatrix(state.step, h.layer) : matrixFor(state.step, h.layer, h.head);
    if (mat && h.r < mat.rows && h.c < mat.cols)
      text = describeCell(h.layer, h.head, h.r, h.c, mat.at(h.r, h.c));
    else state.hover = null;
  }
  $("readout").textContent = text;
}

function showCell(ev, layer, head, r, c) {
  state.hover = { layer, head, r, c };
  refreshReadout();
  const text = $("readout").textContent;
  const tip = $("tooltip");
  tip.textContent = text
    .replace(": query", ":\nquery")
    .replace(" \u2192 key", "\n\u2192 key")
    .replace("): ", "):\n");
  tip.hidden = false;
  tip.style.left = Math.max(0, Math.min(window.innerWidth - 440, ev.clientX + 14)) + "px";
  tip.style.top = ev.clientY + 16 + "px";
}
function hideTip() {
  $("tooltip").hidden = true;
}

function rowLabelOf(r) {
  return showText((queryToken(state.trace, state.step, r).tok || { text: "?" }).text);
}
function colLabelOf(c) {
  return showText((keyToken(state.trace, state.step, c).tok || { text: "?" }).text);
}

// One map of the grid: a focusable button holding a labelled heatmap.
function mapTile(layer, head, mat, range, width, height, caption, onOpen, corner) {
  const canvas = el("canvas", { "data-layer": layer, "data-head": head });
  const inset = drawMap(canvas, mat, {
    corner,
    scale: scaleName(),
    range,
    rowLabel: rowLabelOf,
    colLabel: colLabelOf,
    width,
    height,
    font: 14,
    minRow: 22,
  });
  canvas.addEventListener("mousemove", (ev) => {
    const cell = cellAt(canvas, ev, mat.rows, mat.cols, inset);
    if (cell) showCell(ev, layer, head, cell.r, cell.c);
  });
  canvas.addEventListener("mouseleave", hideTip);
  return el(
    "button",
    {
      type: "button",
      class: "head",
      "data-layer": layer,
      "data-head": head,
      "aria-label": caption + "; enlarge",
      onclick: onOpen,
    },
    canvas,
  );
}

// Draws the grid so that every layer fits in the window: a second pass
// takes off what the first overflowed by (borders and labels the sizes
// below only estimate).
function renderAttention() {
  drawAttention(0);
  const grid = $("grid");
  if (state.zoom || state.summaryMaps || grid.children.length === 0) return;
  const bottom = grid.getBoundingClientRect().bottom + window.scrollY;
  const over = bottom - window.innerHeight;
  const top = grid.getBoundingClientRect().top + window.scrollY;
  if (over > 0 && window.innerHeight - top >= window.innerHeight * 0.45)
    drawAttention(Math.ceil(over / grid.children.length) + 2);
}

function drawAttention(shrink) {
  const t = state.trace,
    d = t.doc;
  const grid = $("grid");
  const layers = shownLayers();
  // The maps and the shared range first, then the sizes.
  const maps = new Map();
  let lim = 0;
  for (const layer of layers) {
    if (state.summaryMaps) {
      const mat = meanMatrix(state.step, layer);
      if (mat) maps.set(layer + "|mean", mat);
    } else
      for (const heads of d.head_groups)
        for (const head of heads) {
          if (!headShown(head)) continue;
          const mat = matrixFor(state.step, layer, head);
          if (mat) maps.set(layer + "|" + head, mat);
        }
  }
  if (isScores())
    for (const mat of maps.values()) {
      const [lo, hi] = matrixRange(mat);
      lim = Math.max(lim, Math.abs(lo), Math.abs(hi));
    }
  lim = rounded(lim, traceDigits(d)); // as the trace wrote it
  // The legend first: it sits above the grid, so it moves the grid's top.
  const what = isScores() ? MODE_NAMES[state.mode] : "softmax";
  if (isScores())
    drawLegend(
      $("legend"),
      "diverging",
      state.colorMode === "shared" ? -(lim || 1) : -1,
      state.colorMode === "shared" ? lim || 1 : 1,
      state.colorMode === "shared" ? what + ", all maps:" : what + " / each map's largest |value|:",
    );
  else
    drawLegend(
      $("legend"),
      state.scale,
      0,
      1,
      state.colorMode === "shared" ? what + ", all maps:" : what + " / each map's maximum:",
    );
  const width = grid.clientWidth || document.documentElement.clientWidth - 40;
  // Height for the maps: from the grid's top to the bottom of the window
  // (when that leaves too little, a window's height: scroll the grid up),
  // shared by the layer rows; width: the page's, shared by a row's heads.
  const gridTop = grid.getBoundingClientRect().top + window.scrollY;
  let avail = window.innerHeight - gridTop - 12;
  if (avail < window.innerHeight * 0.45) avail = window.innerHeight - 40;
  const rowsShown = state.summaryMaps ? 1 : Math.max(1, layers.length);
  const perRow = Math.max(
    48,
    Math.floor((avail - (state.summaryMaps ? 0 : 20)) / rowsShown) -
      (state.summaryMaps ? 0 : 20) -
      shrink,
  );
  const rows = [];
  if (state.summaryMaps) {
    // As many maps across as make them largest while all fit on the screen.
    const n = Math.max(1, layers.length);
    let across = 1,
      best = 0;
    for (let k = 1; k <= n; k++) {
      const side = Math.min(width / k - 14, avail / Math.ceil(n / k) - 12);
      if (side > best) [across, best] = [k, side];
    }
    const tileW = Math.floor(width / across) - 14;
    const tileH = Math.max(90, Math.floor(best));
    const tiles = layers
      .filter((l) => maps.has(l + "|mean"))
      .map((layer) => {
        const mat = maps.get(layer + "|mean");
        return mapTile(
          layer,
          "mean",
          mat,
          rangeFor(mat, lim),
          tileW,
          tileH,
          "layer " + layer + " (mean of " + mat.heads.length + " heads)",
          () => {
            state.layerPick = [layer];
            state.summaryMaps = false;
            $("layer-select").value = String(layer);
            $("summary-maps").checked = false;
            renderAttention();
          },
          "layer " + layer,
        );
      });
    rows.push(el("div", { class: "summary-grid" }, ...tiles));
  } else {
    const headsPerLayer = d.head_groups.reduce(
      (a, heads) => a + heads.filter((h) => headShown(h)).length,
      0,
    );
    const groupsShown = d.head_groups.filter((heads) => heads.some((h) => headShown(h))).length;
    // The layer label, then per K/V group its border, padding and gap, then
    // per head the gap between maps.
    const tileW = Math.max(
      130,
      Math.floor((width - 72 - groupsShown * 30) / Math.max(1, headsPerLayer)) - 8,
    );
    for (const layer of layers) {
      const groups = d.head_groups
        .map((heads, g) => {
          const tiles = heads
            .filter((head) => maps.has(layer + "|" + head))
            .map((head) => {
              const mat = maps.get(layer + "|" + head);
              return mapTile(
                layer,
                head,
                mat,
                rangeFor(mat, lim),
                tileW,
                perRow,
                "layer " + layer + " head " + head + ", shares K/V head " + g,
                () => openZoom(layer, head),
                "h" + head,
              );
            });
          if (tiles.length === 0) return null;
          tiles.forEach((tile) => tile.setAttribute("data-kv", g));
          return el(
            "div",
            { class: "kv-group", "data-kv": g, style: "border-color:" + groupColor(g) },
            layer === layers[0]
              ? el("div", {
                  class: "kv-label",
                  text: "K/V head " + g + " \u2190 query heads " + heads.join(", "),
                })
              : null,
            el("div", { class: "kv-heads" }, ...tiles),
          );
        })
        .filter(Boolean);
      rows.push(
        el(
          "div",
          { class: "layer-row", "data-layer": layer },
          el("div", { class: "layer-label", text: "layer " + layer }),
          ...groups,
        ),
      );
    }
  }
  if (rows.length === 0 || maps.size === 0)
    rows.push(
      el("p", {
        class: "big-summary",
        text:
          "No map to show: the trace holds no " + state.mode + " for the layers and heads chosen.",
      }),
    );
  grid.replaceChildren(...rows);
  grid.hidden = state.zoom !== null;
  renderZoom(lim);
  refreshReadout();
}

function openZoom(layer, head) {
  state.zoom = { layer, head };
  state.cursor = { r: 0, c: 0 };
  renderAttention();
  $("zoom-canvas").focus();
}
function closeZoom() {
  const z = state.zoom;
  state.zoom = null;
  state.zoomFill = false;
  $("zoom-fill").setAttribute("aria-pressed", "false");
  renderAttention();
  if (z)
    for (const b of document.querySelectorAll("#grid .head"))
      if (b.dataset.layer === String(z.layer) && b.dataset.head === String(z.head)) b.focus();
}

let zoomInset = null;
function renderZoom(sharedLim) {
  const box = $("zoom");
  if (!state.zoom) {
    box.hidden = true;
    return;
  }
  const { layer, head } = state.zoom;
  const mat = matrixFor(state.step, layer, head);
  box.hidden = false;
  if (!mat) {
    $("zoom-title").textContent = "layer " + layer + " head " + head + ": not in this trace";
    $("zoom-canvas").width = 0;
    return;
  }
  const t = state.trace,
    s = currentStep(),
    g = t.groupOf.get(head);
  $("zoom-title").textContent =
    "Layer " +
    layer +
    ", head " +
    head +
    " (K/V head " +
    g +
    "), step " +
    state.step +
    " (" +
    s.kind.replace("_", " ") +
    "), " +
    MODE_NAMES[state.mode] +
    ", " +
    mat.rows +
    " \u00d7 " +
    mat.cols;
  box.style.borderColor = groupColor(g);
  box.style.borderWidth = "4px";
  const range = rangeFor(mat, sharedLim);
  const canvas = $("zoom-canvas");
  const top = box.getBoundingClientRect().top + window.scrollY;
  const fill = state.zoomFill || document.body.classList.contains("present");
  const height = fill
    ? window.innerHeight - 90
    : Math.max(320, Math.min(window.innerHeight - 120, window.innerHeight * 0.8));
  void top;
  const font = fill ? 20 : 16;
  zoomInset = drawMap(canvas, mat, {
    scale: scaleName(),
    range,
    rowLabel: (r) => rowLabelOf(r) + " " + queryToken(t, state.step, r).pos,
    colLabel: colLabelOf,
    width: (box.clientWidth || 1000) - 24,
    height,
    font,
    maxCell: 400,
    minRow: 40,
    titles: { rows: "queries", cols: "keys" },
  });
  state.cursor.r = Math.min(state.cursor.r, mat.rows - 1);
  state.cursor.c = Math.min(state.cursor.c, mat.cols - 1);
  drawCursor();
  canvas.onmousemove = (ev) => {
    const cell = cellAt(canvas, ev, mat.rows, mat.cols, zoomInset);
    if (cell) showCell(ev, layer, head, cell.r, cell.c);
  };
  canvas.onmouseleave = hideTip;
}

function drawCursor() {
  if (!state.zoom || !zoomInset || document.activeElement !== $("zoom-canvas")) return;
  const { layer, head } = state.zoom;
  const mat = matrixFor(state.step, layer, head);
  if (!mat) return;
  const ctx = $("zoom-canvas").getContext("2d");
  const cw = zoomInset.width / mat.cols,
    ch = zoomInset.height / mat.rows;
  ctx.strokeStyle = cssVar("--focus");
  ctx.lineWidth = 3;
  ctx.strokeRect(zoomInset.left + state.cursor.c * cw, zoomInset.top + state.cursor.r * ch, cw, ch);
  state.hover = { layer, head, r: state.cursor.r, c: state.cursor.c };
  refreshReadout();
}

// ---- the K/V cache ----------------------------------------------------------------

function renderCache() {
  const t = state.trace,
    d = t.doc,
    c = d.config,
    rows = cacheRows(t),
    cur = rows[state.step];
  const labels = stepLabels(d).map((l) => (l === "prefill" ? "P" : l));
  const marks = rows.filter((r) => r.kind === "window_reset").map((r) => ({ at: r.step }));
  drawCacheTensor($("cache-tensor"), t, state.step);
  drawBars(
    $("cache-chart"),
    labels,
    [
      {
        name: "this model (" + c.n_kv_heads + " K/V heads)",
        color: OKABE_ITO[4],
        values: rows.map((r) => r.bytes),
      },
      {
        name: "multi-head attention (" + c.n_heads + " K/V heads)",
        color: OKABE_ITO[5],
        outline: true,
        values: rows.map((r) => r.mhaBytes),
      },
    ],
    state.step,
    formatBytes,
    {
      bytes: true,
      yTitle: "K+V held",
      xTitle: "step (P prefill, d decode, r window reset: dashed line)",
      marks,
    },
  );
  const grouped = d.attention === "grouped";
  drawBars(
    $("repeat-chart"),
    labels,
    [
      {
        name: "repeat_kv path" + (grouped ? " (computed: this trace ran grouped)" : ""),
        color: OKABE_ITO[5],
        values: rows.map((r) => (grouped ? r.repeatKvWould : r.repeatKvBytes)),
      },
      {
        name: "grouped path",
        color: OKABE_ITO[2],
        values: rows.map((r) => (grouped ? r.repeatKvBytes : 0)),
      },
    ],
    state.step,
    formatBytes,
    { bytes: true, yTitle: "repeat_kv writes", xTitle: "step", marks },
  );
  const shape = "[" + cur.shape.join(", ") + "]";
  const mode =
    cur.mode === "none"
      ? "This step ran without a cache. "
      : "After step " +
        state.step +
        " (" +
        cur.kind +
        ") the " +
        cur.mode +
        " cache holds " +
        cur.length +
        " positions: K and V of " +
        shape +
        " in each of " +
        c.n_layers +
        " layers = ";
  $("cache-summary").replaceChildren(
    mode,
    el("strong", { id: "cache-bytes", "data-bytes": cur.bytes, text: cur.bytes + " bytes" }),
    " (" +
      formatBytes(cur.bytes) +
      "; " +
      formatBytes(cur.perLayer) +
      " per layer). Multi-head attention would hold ",
    el("strong", { id: "cache-mha", text: cur.mhaBytes + " bytes" }),
    " (" + c.n_rep + "\u00d7). ",
    grouped
      ? "This trace ran the grouped path: repeat_kv wrote nothing; the repeat_kv path would have written " +
          cur.repeatKvWould +
          " bytes in this step (computed from the config)."
      : "repeat_kv ran " +
          cur.repeatKvOps +
          " times in this step and wrote " +
          cur.repeatKvBytes +
          " bytes (read again: " +
          cur.repeatKvRead +
          " bytes); the grouped path writes 0.",
  );
  const head = el(
    "tr",
    {},
    ...[
      "step",
      "kind",
      "cache shape (one layer's K)",
      "positions",
      "K+V bytes, all layers",
      "per layer",
      "MHA would hold",
      "repeat_kv ops",
      "repeat_kv bytes written",
      "read again",
      "grouped path",
    ].map((h) => el("th", { scope: "col", text: h })),
  );
  const body = rows.map((r) =>
    el(
      "tr",
      {
        class: r.step === state.step ? "current" : "",
        "data-step": r.step,
        tabindex: 0,
        onclick: () => setStep(r.step),
        onkeydown: (ev) => {
          if (ev.key === "Enter") setStep(r.step);
        },
      },
      ...[
        r.step,
        r.kind,
        "[" + r.shape.join(", ") + "]",
        r.length,
        r.bytes,
        r.perLayer,
        r.mhaBytes,
        r.repeatKvOps,
        r.repeatKvBytes,
        r.repeatKvRead,
        grouped ? r.repeatKvBytes : 0,
      ].map((v, k) => el("td", { "data-col": k, text: String(v) })),
    ),
  );
  $("cache-table").replaceChildren(el("thead", {}, head), el("tbody", {}, ...body));
}

// ---- the op graph -----------------------------------------------------------------

function renderGraph() {
  const t = state.trace,
    d = t.doc,
    s = currentStep();
  const which = $("graph-layer").value || String(t.layers[0]);
  const params = $("graph-params").checked;
  const nodes = s.graph.nodes;
  const inLayer = (n) =>
    which === "all"
      ? true
      : which === "outside"
        ? n.layer === undefined
        : n.layer === Number(which);
  const isInput = (n) => n.op === "param" || n.op === "input";
  const show = (n) => inLayer(n) && (params || !isInput(n));
  const incoming = new Map(),
    outgoing = new Map();
  for (const l of d.cache_links) {
    if (l.to.step === state.step) incoming.set(l.to.node, l);
    if (l.from.step === state.step) outgoing.set(l.from.node, l);
  }
  const svg = drawGraph(nodes, show, { incoming, outgoing }, state.graphSel, (n) => {
    state.graphSel = n.id;
    renderGraph();
    const g = document.querySelector('#graph [data-node="' + n.id + '"]');
    if (g) g.focus();
  });
  $("graph").replaceChildren(svg);
  const shown = nodes.filter(show);
  const written = shown.reduce((a, n) => a + n.bytes, 0);
  const rk = shown.filter((n) => n.op === "repeat_kv");
  let text =
    shown.length +
    " of " +
    nodes.length +
    " nodes shown, " +
    formatBytes(written) +
    " written; " +
    rk.length +
    " repeat_kv node" +
    (rk.length === 1 ? "" : "s") +
    " (" +
    formatBytes(rk.reduce((a, n) => a + n.bytes, 0)) +
    ").";
  if (state.graphSel !== null) {
    const n = nodes[state.graphSel];
    if (n)
      text =
        "node " +
        n.id +
        ": " +
        n.op +
        (n.name ? " " + n.name : "") +
        " [" +
        n.shape.join(", ") +
        "] " +
        n.dtype +
        ", " +
        n.bytes +
        " bytes written, inputs [" +
        n.inputs.join(", ") +
        "]" +
        (n.layer !== undefined ? ", layer " + n.layer : "");
  }
  $("graph-summary").textContent = text;
  const linkButtons = [];
  for (const l of d.cache_links) {
    const layerOk = which === "all" || l.layer === Number(which);
    if (!layerOk) continue;
    if (l.to.step === state.step)
      linkButtons.push(
        el(
          "button",
          {
            type: "button",
            onclick: () => {
              setStep(l.from.step);
              state.graphSel = l.from.node;
              renderGraph();
            },
          },
          "\u2190 layer " +
            l.layer +
            " " +
            l.tensor.toUpperCase() +
            " cache: from step " +
            l.from.step +
            ", node " +
            l.from.node,
        ),
      );
    if (l.from.step === state.step)
      linkButtons.push(
        el(
          "button",
          {
            type: "button",
            onclick: () => {
              setStep(l.to.step);
              state.graphSel = l.to.node;
              renderGraph();
            },
          },
          "layer " +
            l.layer +
            " " +
            l.tensor.toUpperCase() +
            " cache \u2192 step " +
            l.to.step +
            ", node " +
            l.to.node,
        ),
      );
  }
  $("graph-links").replaceChildren(...linkButtons);
}

// ---- compare ----------------------------------------------------------------------

function renderCompare() {
  const sum = $("compare-summary");
  if (!state.cmp) {
    sum.textContent = state.trace
      ? "Open or drop a second trace (B) to compare it with the one shown (A)."
      : "";
    $("compare-table").replaceChildren();
    return;
  }
  const r = state.cmp;
  const worst = r.groups.find((g) => g.max === r.max && g.at);
  sum.replaceChildren(
    "A: " +
      state.name +
      " (" +
      state.trace.doc.attention +
      "), B: " +
      state.bName +
      " (" +
      state.b.doc.attention +
      "). Largest |A \u2212 B| over every snapshot: ",
    el("strong", { id: "compare-max", "data-max": String(r.max), text: showDiff(r.max) }),
    worst && r.max > 0
      ? " (" +
          worst.name +
          ", layer " +
          worst.layer +
          (worst.at.head >= 0 ? ", head " + worst.at.head : "") +
          ", position " +
          worst.at.pos +
          ")"
      : "",
    ". Rows matched by snapshot, layer, head and position: " +
      r.groups.reduce((a, g) => a + g.rows, 0) +
      (r.onlyA || r.onlyB ? "; only in A: " + r.onlyA + ", only in B: " + r.onlyB : "") +
      ".",
  );
  const head = el(
    "tr",
    {},
    ...["layer", "snapshot", "rows", "max |A \u2212 B|"].map((h) =>
      el("th", { scope: "col", text: h }),
    ),
  );
  const body = r.groups.map((g, i) =>
    el(
      "tr",
      {
        tabindex: 0,
        class: i === state.cmpSel ? "selected" : "",
        "data-name": g.name,
        "data-layer": g.layer,
        onclick: () => {
          state.cmpSel = i;
          state.cmpHead = null;
          renderCompare();
        },
        onkeydown: (ev) => {
          if (ev.key === "Enter") {
            state.cmpSel = i;
            state.cmpHead = null;
            renderCompare();
          }
        },
      },
      el("td", { text: String(g.layer) }),
      el("td", { text: g.name }),
      el("td", { text: String(g.rows) }),
      el("td", { "data-max": String(g.max), text: showDiff(g.max) }),
    ),
  );
  $("compare-table").replaceChildren(el("thead", {}, head), el("tbody", {}, ...body));
  const g = r.groups[state.cmpSel];
  if (!g) return;
  const heads = [...new Set(g.pairs.map(([x]) => x.head))].sort((a, b) => a - b);
  const sel = $("compare-head");
  sel.replaceChildren(
    ...heads.map((h) =>
      el("option", { value: String(h), text: h < 0 ? "(no heads)" : "head " + h }),
    ),
  );
  // A newly selected snapshot opens on the head with its largest difference.
  if (state.cmpHead === null || !heads.includes(state.cmpHead))
    state.cmpHead = g.at && heads.includes(g.at.head) ? g.at.head : heads[0];
  sel.value = String(state.cmpHead);
  const headSel = state.cmpHead;
  const mat = diffMatrix(g, headSel, r.digits);
  let lim = 0;
  for (let i = 0; i < mat.rows; i++)
    for (let j = 0; j < mat.cols; j++) {
      const v = mat.at(i, j);
      if (typeof v === "number" && Number.isFinite(v)) lim = Math.max(lim, Math.abs(v));
    }
  if (lim === 0) lim = 1;
  const cols = columnsOf(g.name);
  $("compare-title").textContent =
    "A \u2212 B: " +
    g.name +
    ", layer " +
    g.layer +
    (headSel >= 0 ? ", head " + headSel : "") +
    " (rows: query positions; columns: " +
    cols +
    "; blue negative, red positive, white zero; scale \u00b1" +
    fmt(lim) +
    ")";
  const canvas = $("compare-canvas");
  const inset = drawMap(canvas, mat, {
    scale: "diverging",
    range: [-lim, lim],
    rowLabel: (r) => String(mat.rowLabel(r)),
    colLabel: (c) => String(c),
    width: 700,
    font: 14,
    maxCell: 40,
    titles: { rows: "query position", cols: cols },
  });
  canvas.dataset.columns = cols;
  canvas.onmousemove = (ev) => {
    const cell = cellAt(canvas, ev, mat.rows, mat.cols, inset);
    if (!cell) return;
    $("compare-readout").textContent =
      "position " +
      mat.rowLabel(cell.r) +
      ", " +
      (cols === "keys" ? "key " : "feature ") +
      cell.c +
      ": A \u2212 B = " +
      showDiff(mat.at(cell.r, cell.c));
  };
}

// A difference as text: float subtraction of two rounded numbers leaves
// noise digits (0.036917000000000003); show as many digits as the traces kept.
function showDiff(v) {
  const p = state.trace.doc.options.precision;
  if (typeof v !== "number" || !Number.isFinite(v) || p === 0) return showValue(v);
  return String(Number(v.toPrecision(p)));
}

// ---- gradients --------------------------------------------------------------------

function renderGrads() {
  const t = state.trace,
    d = t.doc,
    s = currentStep();
  if (!d.options.grads) {
    $("grads-summary").textContent =
      "This trace has no gradients. Make one with glassllm trace --grads to see which positions each chosen token depended on.";
    drawBars($("grads-chart"), [], [], null, fmt);
    $("grads-readout").textContent = "";
    return;
  }
  const which = $("grads-layer").value || "all";
  const layers = which === "all" ? t.layers : [Number(which)];
  // Attention attribution at the last query row: sum over heads of
  // |p_j * d log p(next) / d p_j|, how much key j's weight moved the choice.
  const m = s.keys.count,
    score = new Array(m).fill(0);
  for (const layer of layers) {
    const snap = snapshot(t, state.step, "attn.softmax", layer);
    if (!snap || !snap.grad) continue;
    const [, H, T] = snap.shape;
    for (let h = 0; h < H; h++) {
      const p = headMatrix(snap, h),
        g = headMatrix(snap, h, "grad");
      for (let j = 0; j < m; j++) {
        const a = p.at(T - 1, j),
          b = g.at(T - 1, j);
        if (typeof a === "number" && typeof b === "number") score[j] += Math.abs(a * b);
      }
    }
  }
  const labels = score.map((_, j) =>
    showText((keyToken(t, state.step, j).tok || { text: "?" }).text),
  );
  drawBars(
    $("grads-chart"),
    labels,
    [
      {
        name: "\u03a3 over heads of |p \u00b7 \u2202 log p(next) / \u2202p| at the last query",
        color: OKABE_ITO[4],
        values: score,
      },
    ],
    null,
    fmt,
  );
  $("grads-summary").textContent =
    "Step " +
    state.step +
    " chose " +
    tokenLabel(s.next) +
    (s.next ? " (id " + s.next.id + ")" : "") +
    (s.log_prob !== undefined ? ", log p = " + s.log_prob : "") +
    ". Bars: how much each key position's attention weight " +
    "moved that choice, in " +
    (which === "all" ? "all layers" : "layer " + which) +
    ".";
  const order = score
    .map((v, j) => [v, j])
    .sort((a, b) => b[0] - a[0])
    .slice(0, 5);
  $("grads-readout").textContent =
    "Most: " +
    order
      .map(
        ([v, j]) =>
          "pos " +
          (s.keys.start + j) +
          " " +
          tokenLabel(keyToken(t, state.step, j).tok) +
          " " +
          fmt(v),
      )
      .join("; ");
}

// ---- training metrics -------------------------------------------------------------

function renderMetrics() {
  const m = state.metrics;
  if (m) $("metrics-summary").textContent = m.name + ": " + m.count + " records, x axis: " + m.xKey;
  const axis = drawLines(
    $("loss-chart"),
    m ? m.loss : [],
    m ? m.xKey : "",
    "Open a metrics.jsonl file",
    { log: $("loss-log").checked, yTitle: "loss" },
  );
  $("loss-chart").dataset.ticks = axis ? axis.yTicks.join(",") : "";
  drawLines(
    $("acc-chart"),
    m ? m.acc : [],
    m ? m.xKey : "",
    m ? "No accuracy field in this file" : "Open a metrics.jsonl file",
    { yTitle: "accuracy" },
  );
}

// ---- tabs, keyboard, files --------------------------------------------------------

function selectTab(name) {
  state.tab = name;
  for (const b of document.querySelectorAll("[role=tab]"))
    b.setAttribute("aria-selected", String(b.dataset.tab === name));
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

function onKey(ev) {
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

// The title line of an exported image: the view, the prompt, the step, and
// the layer and head when one is chosen.
function exportTitle() {
  const tab = document.querySelector("[role=tab][aria-selected=true]").textContent;
  if (!state.trace) return "GlassLM inspector \u2014 " + tab;
  const d = state.trace.doc;
  const prompt = d.steps[0].kind === "prefill" ? d.steps[0].tokens.map((t) => t.text).join("") : "";
  let where = "";
  if (state.tab === "attention" && state.zoom)
    where = ", layer " + state.zoom.layer + ", head " + state.zoom.head;
  else if (state.tab === "qk")
    where = ", layer " + $("qk-layer").value + ", head " + $("qk-head").value;
  else if (state.tab === "attention") where = ", all heads";
  return (
    "GlassLM \u2014 " +
    tab +
    " \u2014 prompt " +
    JSON.stringify(prompt) +
    " \u2014 step " +
    state.step +
    " (" +
    stepLabels(d)[state.step] +
    ")" +
    where +
    (state.tab === "attention" ? ", " + MODE_NAMES[state.mode] : "")
  );
}

// Export: the current view drawn into one PNG, twice the screen's pixels,
// with a title line. Canvases are copied, the op graph's SVG rendered, and
// the text, backgrounds and borders of every other element painted where
// the page lays them out.
async function exportPng() {
  const panel = $("panel-" + state.tab);
  document.body.classList.add("exporting");
  try {
    const root = panel.getBoundingClientRect();
    const W = Math.ceil(Math.max(panel.scrollWidth, root.width, 900)),
      H = Math.min(16000, Math.ceil(panel.scrollHeight) + 44);
    const k = 2;
    const out = document.createElement("canvas");
    out.width = W * k;
    out.height = H * k;
    const ctx = out.getContext("2d");
    ctx.scale(k, k);
    ctx.fillStyle = cssVar("--bg");
    ctx.fillRect(0, 0, W, H);
    ctx.fillStyle = cssVar("--fg");
    ctx.font = 'bold 18px "DejaVu Sans", sans-serif';
    ctx.textBaseline = "top";
    const title = exportTitle();
    ctx.fillText(title, 4, 8, W - 8);
    ctx.translate(0, 44);
    const at = (r) => [r.left - root.left, r.top - root.top];
    const all = [panel, ...panel.querySelectorAll("*")];
    for (const e of all) {
      if (e.closest("[hidden]") || (e.closest("svg") && e.tagName !== "svg")) continue;
      const r = e.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) continue;
      const [x, y] = at(r);
      const cs = getComputedStyle(e);
      if (cs.backgroundColor && cs.backgroundColor !== "rgba(0, 0, 0, 0)" && e !== panel) {
        ctx.fillStyle = cs.backgroundColor;
        ctx.fillRect(x, y, r.width, r.height);
      }
      const bw = parseFloat(cs.borderTopWidth);
      if (bw > 0 && cs.borderTopStyle !== "none") {
        ctx.strokeStyle = cs.borderTopColor;
        ctx.lineWidth = bw;
        ctx.strokeRect(x + bw / 2, y + bw / 2, r.width - bw, r.height - bw);
      }
      if (e.tagName === "CANVAS") ctx.drawImage(e, x, y, r.width, r.height);
      else if (e.tagName === "svg") {
        const xml = new XMLSerializer().serializeToString(e);
        const img = new Image();
        img.src = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(xml);
        await img.decode();
        ctx.drawImage(img, x, y, r.width, r.height);
      } else if (e.tagName === "INPUT" && (e.type === "radio" || e.type === "checkbox")) {
        ctx.strokeStyle = cssVar("--fg");
        ctx.lineWidth = 1.5;
        ctx.strokeRect(x + 1, y + 1, r.width - 2, r.height - 2);
        if (e.checked) {
          ctx.fillStyle = cssVar("--fg");
          ctx.fillRect(x + 4, y + 4, r.width - 8, r.height - 8);
        }
      }
      ctx.font = cs.fontWeight + " " + cs.fontSize + " " + cs.fontFamily;
      ctx.fillStyle = cs.color;
      ctx.textBaseline = "middle";
      ctx.textAlign = "left";
      for (const node of e.childNodes) {
        if (node.nodeType !== Node.TEXT_NODE || !node.textContent.trim()) continue;
        const range = document.createRange();
        range.selectNodeContents(node);
        const rects = [...range.getClientRects()];
        if (rects.length === 0) continue;
        if (e.tagName === "OPTION") continue;
        const words = node.textContent.split(/(\s+)/);
        // One line: draw it; several: fill each line box with as many words as fit.
        let wi = 0;
        for (const lr of rects) {
          let line = "";
          while (wi < words.length && ctx.measureText(line + words[wi]).width <= lr.width + 2)
            line += words[wi++];
          if (!line && wi < words.length) line = words[wi++];
          const [lx, ly] = at(lr);
          ctx.fillText(line.trim() ? line : "", lx, ly + lr.height / 2);
        }
      }
      if (e.tagName === "SELECT") {
        const [sx, sy] = at(r);
        ctx.fillText(
          e.options[e.selectedIndex] ? e.options[e.selectedIndex].text : "",
          sx + 6,
          sy + r.height / 2,
        );
      }
    }
    const blob = await new Promise((resolve) => out.toBlob(resolve, "image/png"));
    const url = URL.createObjectURL(blob);
    const a = el("a", {
      href: url,
      download:
        "glassllm-" +
        state.tab +
        (state.trace ? "-step" + state.step : "") +
        (state.tab === "attention" && state.zoom
          ? "-layer" + state.zoom.layer + "-head" + state.zoom.head
          : "") +
        ".png",
    });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
    return { width: out.width, height: out.height, bytes: blob.size, title };
  } finally {
    document.body.classList.remove("exporting");
  }
}

function setupFilePicker(buttonId, inputId, kind) {
  $(buttonId).addEventListener("click", () => $(inputId).click());
  $(inputId).addEventListener("change", async (ev) => {
    const f = ev.target.files[0];
    if (f) await readFile(f, kind);
    ev.target.value = "";
  });
}

function setup() {
  setupFilePicker("open-trace", "trace-file", "trace");
  setupFilePicker("open-compare", "compare-file", "compare");
  setupFilePicker("open-metrics", "metrics-file", "metrics");
  for (const b of document.querySelectorAll("[role=tab]"))
    b.addEventListener("click", () => selectTab(b.dataset.tab));
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
        showMessage(e.message + ". Write all, or numbers and ranges such as 0,2,5-7.");
        return;
      }
      clearMessage();
      renderTab();
    });
  pick("layer-select", "layerPick", "Layers");
  pick("head-select", "headPick", "Heads");
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
  for (const id of ["qk-layer", "qk-head", "qk-row"]) $(id).addEventListener("change", renderQk);
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
  $("graph-layer").addEventListener("change", renderGraph);
  $("graph-params").addEventListener("change", renderGraph);
  $("grads-layer").addEventListener("change", renderGrads);
  $("compare-head").addEventListener("change", (ev) => {
    state.cmpHead = Number(ev.target.value);
    renderCompare();
  });
  $("export-png").addEventListener("click", () => exportPng());
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

  const embedded = $("trace").textContent;
  if (embedded.trim()) loadTraceText(embedded, "the embedded trace");
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
    firstRenderMs: performance.now(),
  };
  document.body.dataset.ready = "1";
}

setup();
