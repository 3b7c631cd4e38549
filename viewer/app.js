// app.js: the inspector's state, its controls and keyboard, loading files
// (the embedded trace, the file pickers, drag and drop) and PNG export.
// trace.js reads and checks traces; views.js and graph.js draw.
"use strict";

const state = {
  trace: null,
  name: "",
  step: 0,
  mode: "attn.softmax",
  scale: "viridis",
  tab: "attention",
  zoom: null, // {layer, head} of the enlarged map
  cursor: { r: 0, c: 0 },
  b: null,
  bName: "",
  cmp: null,
  cmpSel: 0,
  metrics: null,
  graphSel: null,
  filesRead: 0,
};

const $ = (id) => document.getElementById(id);
const MODE_NAMES = {
  "attn.scores": "raw score",
  "attn.scores_masked": "masked score",
  "attn.softmax": "softmax",
};

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

function loadTraceText(text, name) {
  let trace;
  try {
    trace = parseTrace(traceTextOf(text));
  } catch (e) {
    const kept = state.trace ? " The trace shown before (" + state.name + ") is still shown." : "";
    showMessage("Could not open " + name + ": " + e.message + "." + kept);
    return false;
  }
  clearMessage();
  state.trace = trace;
  state.name = name;
  state.step = 0;
  state.zoom = null;
  state.graphSel = null;
  if (state.b) state.cmp = compareTraces(state.trace, state.b);
  buildForTrace();
  renderAll();
  return true;
}

function loadCompareText(text, name) {
  if (!state.trace) {
    showMessage("Open trace A first, then trace B to compare.");
    return;
  }
  let b;
  try {
    b = parseTrace(traceTextOf(text));
  } catch (e) {
    showMessage("Could not open trace B (" + name + "): " + e.message + ".");
    return;
  }
  clearMessage();
  state.b = b;
  state.bName = name;
  state.cmp = compareTraces(state.trace, b);
  state.cmpSel = state.cmp.groups.findIndex((g) => g.max === state.cmp.max);
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
        title: "index " + i + ", id " + tok.id + (i >= promptLen ? " (generated)" : " (prompt)"),
      },
      el("span", { class: "t", text: showText(tok.text) }),
      el("span", { class: "i", text: String(tok.id) }),
    ),
  );
  $("tokens").replaceChildren(...chips);
  $("sequence-text").textContent = d.sequence.map((tok) => tok.text).join("");
  // Timeline
  let decode = 0;
  const buttons = d.steps.map((s, i) => {
    const label = s.kind === "prefill" ? "prefill" : s.kind === "decode" ? "d" + ++decode : "reset";
    return el("button", {
      type: "button",
      role: "option",
      class: s.kind,
      "data-step": i,
      text: label,
      "aria-label": "step " + i + ": " + s.kind,
      onclick: () => setStep(i),
    });
  });
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
  const newChip = $("tokens").children[newFirst];
  if (newChip) newChip.scrollIntoView({ block: "nearest" });
  const words =
    s.kind === "prefill"
      ? "prefill of the prompt"
      : s.kind === "decode"
        ? "decode step"
        : "window reset: the cache was full, so the last " +
          s.tokens.length +
          " tokens run again from position 0";
  const top = (s.top_k || []).map((c) => tokenLabel(c) + " " + c.prob).join(", ");
  $("step-info").textContent =
    "Step " +
    state.step +
    " of " +
    (d.steps.length - 1) +
    ": " +
    words +
    "; " +
    s.tokens.length +
    " new token" +
    (s.tokens.length === 1 ? "" : "s") +
    " at position" +
    (s.tokens.length === 1
      ? " " + s.start
      : "s " + s.start + "-" + (s.start + s.tokens.length - 1)) +
    "; m = " +
    s.keys.count +
    " keys" +
    (s.next
      ? "; chose " + tokenLabel(s.next) + " (id " + s.next.id + ", p = " + s.next.prob + ")"
      : "") +
    (top ? "; top: " + top : "");
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

// ---- attention ------------------------------------------------------------------

function matrixFor(step, layer, head) {
  const snap = snapshot(state.trace, step, state.mode, layer);
  if (!snap) return null;
  const hi = snapshotHeads(snap).indexOf(head);
  if (hi < 0) return null;
  return headMatrix(snap, hi);
}

function rangeFor(mat) {
  const [lo, hi] = matrixRange(mat);
  return state.mode === "attn.softmax" ? [0, Math.max(hi, 1e-12)] : [lo, hi];
}

function describeCell(layer, head, r, c, v) {
  const s = currentStep(),
    t = state.trace;
  const q = queryToken(s, r),
    k = keyToken(t, state.step, c);
  return (
    "layer " +
    layer +
    " head " +
    head +
    " (K/V head " +
    t.groupOf.get(head) +
    "): query " +
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
    showValue(v)
  );
}

function showCell(ev, text) {
  $("readout").textContent = text;
  const tip = $("tooltip");
  tip.textContent = text
    .replace(": query", ":\nquery")
    .replace(" \u2192 key", "\n\u2192 key")
    .replace("): ", "):\n");
  tip.hidden = false;
  tip.style.left = Math.min(window.innerWidth - 420, ev.clientX + 14) + "px";
  tip.style.top = ev.clientY + 16 + "px";
}
function hideTip() {
  $("tooltip").hidden = true;
}

function renderAttention() {
  const t = state.trace,
    d = t.doc,
    c = d.config;
  const grid = $("grid");
  const avail = Math.max(
    600,
    (grid.clientWidth || window.innerWidth - 40) - 110 - c.n_kv_heads * 36,
  );
  const tileW = Math.max(90, Math.min(240, Math.floor(avail / c.n_heads) - 12));
  const rows = [];
  for (const layer of t.layers) {
    const groups = d.head_groups
      .map((heads, g) => {
        const tiles = [];
        for (const head of heads) {
          const mat = matrixFor(state.step, layer, head);
          if (!mat) continue;
          const h = Math.max(14, Math.min(tileW, Math.round((tileW * mat.rows) / mat.cols)));
          const canvas = el("canvas", { "data-layer": layer, "data-head": head });
          drawHeatmap(canvas, mat, state.scale, rangeFor(mat), tileW, h);
          canvas.addEventListener("mousemove", (ev) => {
            const cell = cellAt(canvas, ev, mat.rows, mat.cols);
            if (cell)
              showCell(ev, describeCell(layer, head, cell.r, cell.c, mat.at(cell.r, cell.c)));
          });
          canvas.addEventListener("mouseleave", hideTip);
          tiles.push(
            el(
              "button",
              {
                type: "button",
                class: "head",
                "data-layer": layer,
                "data-head": head,
                "data-kv": g,
                "aria-label":
                  "layer " + layer + " head " + head + ", shares K/V head " + g + "; enlarge",
                onclick: () => openZoom(layer, head),
              },
              canvas,
              el("span", { class: "cap", text: "head " + head }),
            ),
          );
        }
        if (tiles.length === 0) return null;
        return el(
          "div",
          { class: "kv-group", "data-kv": g, style: "border-color:" + groupColor(g) },
          el("div", {
            class: "kv-label",
            text: "K/V head " + g + " \u2190 query heads " + heads.join(", "),
          }),
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
  grid.replaceChildren(...rows);
  grid.hidden = state.zoom !== null;
  drawLegend(
    $("legend"),
    state.scale,
    0,
    1,
    (state.mode === "attn.softmax" ? "each map from 0" : "each map from its minimum") +
      " to its maximum:",
  );
  $("legend").children[1].textContent = "low";
  $("legend").children[3].textContent = "high";
  renderZoom();
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
  renderAttention();
  if (z) {
    const b = document.querySelector(
      '.head[data-layer="' + z.layer + '"][data-head="' + z.head + '"]',
    );
    if (b) b.focus();
  }
}

let zoomInset = null;
function renderZoom() {
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
    s.kind +
    "), " +
    MODE_NAMES[state.mode] +
    ", " +
    mat.rows +
    " \u00d7 " +
    mat.cols;
  box.style.borderColor = groupColor(g);
  box.style.borderWidth = "4px";
  const range = rangeFor(mat);
  const canvas = $("zoom-canvas");
  zoomInset = drawLabelledHeatmap(
    canvas,
    mat,
    state.scale,
    range,
    (r) => showText(queryToken(s, r).tok.text) + " " + queryToken(s, r).pos,
    (c) => showText((keyToken(t, state.step, c).tok || { text: "?" }).text),
    Math.max(700, (box.clientWidth || 1000) - 30),
  );
  state.cursor.r = Math.min(state.cursor.r, mat.rows - 1);
  state.cursor.c = Math.min(state.cursor.c, mat.cols - 1);
  drawCursor();
  drawLegend($("legend"), state.scale, range[0], range[1], "this map:");
  canvas.onmousemove = (ev) => {
    const cell = cellAt(canvas, ev, mat.rows, mat.cols, zoomInset);
    if (cell) showCell(ev, describeCell(layer, head, cell.r, cell.c, mat.at(cell.r, cell.c)));
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
  ctx.lineWidth = 2;
  ctx.strokeRect(zoomInset.left + state.cursor.c * cw, zoomInset.top + state.cursor.r * ch, cw, ch);
  $("readout").textContent = describeCell(
    layer,
    head,
    state.cursor.r,
    state.cursor.c,
    mat.at(state.cursor.r, state.cursor.c),
  );
}

// ---- the K/V cache ----------------------------------------------------------------

function renderCache() {
  const t = state.trace,
    d = t.doc,
    c = d.config,
    rows = cacheRows(t),
    cur = rows[state.step];
  const labels = rows.map((r) =>
    r.kind === "prefill" ? "P" : r.kind === "window_reset" ? "R" : String(r.step),
  );
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
          renderCompare();
        },
        onkeydown: (ev) => {
          if (ev.key === "Enter") {
            state.cmpSel = i;
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
  const prev = Number(sel.value);
  sel.replaceChildren(
    ...heads.map((h) =>
      el("option", { value: String(h), text: h < 0 ? "(no heads)" : "head " + h }),
    ),
  );
  sel.value = String(heads.includes(prev) ? prev : heads[0]);
  const headSel = Number(sel.value);
  const mat = diffMatrix(g, headSel);
  let lim = 0;
  for (let i = 0; i < mat.rows; i++)
    for (let j = 0; j < mat.cols; j++) {
      const v = mat.at(i, j);
      if (typeof v === "number" && Number.isFinite(v)) lim = Math.max(lim, Math.abs(v));
    }
  if (lim === 0) lim = 1;
  $("compare-title").textContent =
    "A \u2212 B: " +
    g.name +
    ", layer " +
    g.layer +
    (headSel >= 0 ? ", head " + headSel : "") +
    " (rows: query positions; blue negative, red positive, white zero; scale \u00b1" +
    fmt(lim) +
    ")";
  const canvas = $("compare-canvas");
  const inset = drawHeatmapDiverging(canvas, mat, lim);
  canvas.onmousemove = (ev) => {
    const cell = cellAt(canvas, ev, mat.rows, mat.cols, inset);
    if (!cell) return;
    $("compare-readout").textContent =
      "position " +
      mat.rowLabel(cell.r) +
      ", column " +
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

function drawHeatmapDiverging(canvas, mat, lim) {
  return drawLabelledHeatmap(
    canvas,
    mat,
    "diverging",
    [-lim, lim],
    (r) => "pos " + mat.rowLabel(r),
    (c) => String(c),
    640,
  );
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
  drawLines($("loss-chart"), m ? m.loss : [], m ? m.xKey : "", "Open a metrics.jsonl file");
  drawLines(
    $("acc-chart"),
    m ? m.acc : [],
    m ? m.xKey : "",
    m ? "No accuracy field in this file" : "Open a metrics.jsonl file",
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
  if (isTyping(ev.target) || ev.altKey || ev.ctrlKey || ev.metaKey) return;
  if (ev.key === "ArrowRight") {
    ev.preventDefault();
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

// Export: the current view drawn into one PNG, twice the screen's pixels,
// with a title line. Canvases are copied, the op graph's SVG rendered, and
// the text, backgrounds and borders of every other element painted where
// the page lays them out.
async function exportPng() {
  const panel = $("panel-" + state.tab);
  document.body.classList.add("exporting");
  try {
    const root = panel.getBoundingClientRect();
    const W = Math.ceil(Math.max(panel.scrollWidth, root.width)),
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
    const tab = document.querySelector("[role=tab][aria-selected=true]").textContent;
    ctx.fillText(
      "GlassLM inspector \u2014 " +
        tab +
        (state.trace ? " \u2014 " + state.name + ", step " + state.step : ""),
      4,
      8,
    );
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
      download: "glassllm-" + state.tab + (state.trace ? "-step" + state.step : "") + ".png",
    });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
    return { width: out.width, height: out.height, bytes: blob.size };
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
  $("compare-head").addEventListener("change", renderCompare);
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
  // For the tests and the benchmark: when the first render finished.
  window.glassllmInspector = {
    state,
    exportPng,
    loadTraceText,
    loadCompareText,
    loadMetricsText,
    setStep,
    selectTab,
    firstRenderMs: performance.now(),
  };
  document.body.dataset.ready = "1";
}

setup();
