// panels.js: the other views of one trace -- the K/V cache, the op graph,
// compare, gradients and the training curves -- drawn from app.js's `state`
// with views.js, graph.js and qk.js.
"use strict";

// ---- the K/V cache ----------------------------------------------------------------

// The columns of a compared snapshot (trace.js's columnsOf) as message ids.
const COLUMN_IDS = {
  keys: "axis.keys",
  "features (d_model)": "axis.features_model",
  "features (head_dim)": "axis.features_hd",
};

function renderCache() {
  const tr = state.trace,
    d = tr.doc,
    c = d.config,
    rows = cacheRows(tr),
    cur = rows[state.step];
  const labels = stepLabels(d).map((l, i) => (d.steps[i].kind === "prefill" ? t("chart.p") : l));
  const marks = rows.filter((r) => r.kind === "window_reset").map((r) => ({ at: r.step }));
  drawCacheTensor($("cache-tensor"), tr, state.step);
  drawBars(
    $("cache-chart"),
    labels,
    [
      {
        name: t("cache.this_model", { kv: c.n_kv_heads }),
        color: OKABE_ITO[4],
        values: rows.map((r) => r.bytes),
      },
      {
        name: t("cache.multi_head", { kv: c.n_heads }),
        color: OKABE_ITO[5],
        outline: true,
        values: rows.map((r) => r.mhaBytes),
      },
    ],
    state.step,
    formatBytes,
    {
      bytes: true,
      yTitle: t("cache.held"),
      xTitle: t("cache.x_title"),
      marks,
    },
  );
  const grouped = d.attention === "grouped";
  drawBars(
    $("repeat-chart"),
    labels,
    [
      {
        name: t(grouped ? "cache.repeat_path_computed" : "cache.repeat_path"),
        color: OKABE_ITO[5],
        values: rows.map((r) => (grouped ? r.repeatKvWould : r.repeatKvBytes)),
      },
      {
        name: t("cache.grouped_path"),
        color: OKABE_ITO[2],
        values: rows.map((r) => (grouped ? r.repeatKvBytes : 0)),
      },
    ],
    state.step,
    formatBytes,
    { bytes: true, yTitle: t("cache.repeat_writes"), xTitle: t("cache.step"), marks },
  );
  const shape = "[" + cur.shape.join(", ") + "]";
  const mode =
    cur.mode === "none"
      ? t("cache.no_cache")
      : t("cache.holds", {
          step: state.step,
          kind: t("kind." + cur.kind),
          mode: cur.mode,
          n: cur.length,
          shape,
          layers: c.n_layers,
        });
  $("cache-summary").replaceChildren(
    mode,
    el("strong", {
      id: "cache-bytes",
      "data-bytes": cur.bytes,
      text: t("bytes.n", { n: cur.bytes }),
    }),
    t("cache.per_layer", { all: formatBytes(cur.bytes), per: formatBytes(cur.perLayer) }),
    el("strong", { id: "cache-mha", text: t("bytes.n", { n: cur.mhaBytes }) }),
    " (" + c.n_rep + "\u00d7). ",
    grouped
      ? t("cache.grouped_ran", { n: cur.repeatKvWould })
      : t("cache.repeat_ran", {
          ops: cur.repeatKvOps,
          n: cur.repeatKvBytes,
          read: cur.repeatKvRead,
        }),
  );
  const head = el(
    "tr",
    {},
    ...[
      "cache.col_step",
      "cache.col_kind",
      "cache.col_shape",
      "cache.col_positions",
      "cache.col_bytes",
      "cache.col_per_layer",
      "cache.col_mha",
      "cache.col_repeat_ops",
      "cache.col_repeat_bytes",
      "cache.col_read",
      "cache.col_grouped",
    ].map((h) => el("th", { scope: "col", text: t(h) })),
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
        t("kind." + r.kind),
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
  const tr = state.trace,
    d = tr.doc,
    s = currentStep();
  const which = $("graph-layer").value || String(tr.layers[0]);
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
    t("graph.shown", { shown: shown.length, all: nodes.length, written: formatBytes(written) }) +
    tn("graph.repeat", rk.length, { bytes: formatBytes(rk.reduce((a, n) => a + n.bytes, 0)) });
  if (state.graphSel !== null) {
    const n = nodes[state.graphSel];
    if (n)
      text =
        t("graph.node", {
          id: n.id,
          op: n.op + (n.name ? " " + n.name : ""),
          shape: n.shape.join(", "),
          dtype: n.dtype,
          bytes: n.bytes,
          inputs: n.inputs.join(", "),
        }) + (n.layer !== undefined ? t("graph.node_layer", { layer: n.layer }) : "");
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
          t("graph.link_from", {
            layer: l.layer,
            tensor: l.tensor.toUpperCase(),
            step: l.from.step,
            node: l.from.node,
          }),
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
          t("graph.link_to", {
            layer: l.layer,
            tensor: l.tensor.toUpperCase(),
            step: l.to.step,
            node: l.to.node,
          }),
        ),
      );
  }
  $("graph-links").replaceChildren(...linkButtons);
}

// ---- compare ----------------------------------------------------------------------

function renderCompare() {
  const sum = $("compare-summary");
  if (!state.cmp) {
    sum.textContent = state.trace ? t("compare.none") : "";
    $("compare-table").replaceChildren();
    return;
  }
  const r = state.cmp;
  const worst = r.groups.find((g) => g.max === r.max && g.at);
  sum.replaceChildren(
    t("compare.summary", {
      a: state.name,
      pathA: state.trace.doc.attention,
      b: state.bName,
      pathB: state.b.doc.attention,
    }),
    el("strong", { id: "compare-max", "data-max": String(r.max), text: fmt(r.max) }),
    worst && r.max > 0
      ? t(worst.at.head >= 0 ? "compare.worst_head" : "compare.worst", {
          name: worst.name,
          layer: worst.layer,
          head: worst.at.head,
          pos: worst.at.pos,
        })
      : "",
    t("compare.rows", { n: r.groups.reduce((a, g) => a + g.rows, 0) }) +
      (r.onlyA || r.onlyB ? t("compare.only", { a: r.onlyA, b: r.onlyB }) : "") +
      ".",
  );
  const head = el(
    "tr",
    {},
    ...["compare.col_layer", "compare.col_snapshot", "compare.col_rows", "compare.col_max"].map(
      (h) => el("th", { scope: "col", text: t(h) }),
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
      el("option", {
        value: String(h),
        text: h < 0 ? t("compare.no_heads") : t("head.n", { head: h }),
      }),
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
  const colsText = t(COLUMN_IDS[cols]);
  $("compare-title").textContent = t(headSel >= 0 ? "compare.title_head" : "compare.title", {
    name: g.name,
    layer: g.layer,
    head: headSel,
    cols: colsText,
    lim: fmt(lim),
  });
  const canvas = $("compare-canvas");
  const inset = drawMap(canvas, mat, {
    scale: "diverging",
    range: [-lim, lim],
    rowLabel: (r) => String(mat.rowLabel(r)),
    colLabel: (c) => String(c),
    width: 700,
    font: 14,
    maxCell: 40,
    titles: { rows: t("compare.query_position"), cols: colsText },
  });
  canvas.dataset.columns = cols;
  canvas.onmousemove = (ev) => {
    const cell = cellAt(canvas, ev, mat.rows, mat.cols, inset);
    if (!cell) return;
    $("compare-readout").textContent = t(
      cols === "keys" ? "compare.cell_key" : "compare.cell_feature",
      {
        pos: mat.rowLabel(cell.r),
        c: cell.c,
        v: fmt(mat.at(cell.r, cell.c)),
      },
    );
  };
}

// ---- gradients --------------------------------------------------------------------

function renderGrads() {
  const tr = state.trace,
    d = tr.doc,
    s = currentStep();
  // Without gradients in the trace there is nothing to chart: the layer
  // choice and the empty axes are hidden rather than shown blank.
  const hasGrads = Boolean(d.options.grads);
  $("grads-controls").hidden = !hasGrads;
  $("grads-chart").hidden = !hasGrads;
  if (!hasGrads) {
    $("grads-summary").textContent =
      t("grads.none") + ($("target-form").hidden ? "" : t("grads.none_live"));
    $("grads-readout").textContent = "";
    return;
  }
  const which = $("grads-layer").value || "all";
  const layers = which === "all" ? tr.layers : [Number(which)];
  // Attention attribution at the last query row: sum over heads of
  // |p_j * d log p(next) / d p_j|, how much key j's weight moved the choice.
  const m = s.keys.count,
    score = new Array(m).fill(0);
  for (const layer of layers) {
    const snap = snapshot(tr, state.step, "attn.softmax", layer);
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
    showText((keyToken(tr, state.step, j).tok || { text: "?" }).text),
  );
  drawBars(
    $("grads-chart"),
    labels,
    [
      {
        name: t("grads.bars"),
        color: OKABE_ITO[4],
        values: score,
      },
    ],
    null,
    fmt,
  );
  $("grads-summary").textContent =
    t("grads.chose", { step: state.step, tok: tokenLabel(s.next) }) +
    (s.next ? " (id " + s.next.id + ")" : "") +
    (s.log_prob !== undefined ? ", log p = " + s.log_prob : "") +
    t("grads.bars_in", {
      where: which === "all" ? t("layer.all_layers") : t("layer.n", { layer: which }),
    });
  const order = score
    .map((v, j) => [v, j])
    .sort((a, b) => b[0] - a[0])
    .slice(0, 5);
  $("grads-readout").textContent =
    t("grads.most") +
    order
      .map(
        ([v, j]) =>
          t("grads.pos", { pos: s.keys.start + j }) +
          " " +
          tokenLabel(keyToken(tr, state.step, j).tok) +
          " " +
          fmt(v),
      )
      .join("; ");
}

// ---- training metrics -------------------------------------------------------------

function renderMetrics() {
  const m = state.metrics;
  if (m)
    $("metrics-summary").textContent = t("metrics.summary", {
      name: m.name,
      n: m.count,
      x: m.xKey,
    });
  const axis = drawLines(
    $("loss-chart"),
    m ? m.loss : [],
    m ? m.xKey : "",
    t("metrics.open_file"),
    { log: $("loss-log").checked, yTitle: t("metrics.loss") },
  );
  $("loss-chart").dataset.ticks = axis ? axis.yTicks.join(",") : "";
  drawLines(
    $("acc-chart"),
    m ? m.acc : [],
    m ? m.xKey : "",
    m ? t("metrics.no_acc") : t("metrics.open_file"),
    { yTitle: t("metrics.acc") },
  );
}
