// panels.js: the other views of one trace -- the K/V cache, the op graph,
// compare, gradients and the training curves -- drawn from app.js's `state`
// with views.js, graph.js and qk.js.
"use strict";

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
        name: "multi-head (" + c.n_heads + " K/V heads)",
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
  const svg = drawGraph(
    nodes,
    show,
    { incoming, outgoing },
    state.graphSel,
    (n) => {
      state.graphSel = n.id;
      renderGraph();
      const g = document.querySelector('#graph [data-node="' + n.id + '"]');
      if (g) g.focus();
    },
    $("graph").clientWidth - 4,
  );
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
    el("strong", { id: "compare-max", "data-max": String(r.max), text: fmt(r.max) }),
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
      el("td", { "data-max": String(g.max), text: fmt(g.max) }),
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
      fmt(mat.at(cell.r, cell.c));
  };
}

// ---- gradients --------------------------------------------------------------------

function renderGrads() {
  const t = state.trace,
    d = t.doc,
    s = currentStep();
  // Without gradients in the trace there is nothing to chart: the layer
  // choice and the empty axes are hidden rather than shown blank.
  const hasGrads = Boolean(d.options.grads);
  $("grads-controls").hidden = !hasGrads;
  $("grads-chart").hidden = !hasGrads;
  if (!hasGrads) {
    $("grads-summary").textContent =
      "This trace has no gradients. Make one with glassllm trace --grads to see which positions each chosen token depended on." +
      ($("target-form").hidden
        ? ""
        : " Or type a target continuation below: the page computes its loss and gradients itself.");
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
