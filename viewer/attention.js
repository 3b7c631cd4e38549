// attention.js: the Attention view -- every layer's maps, grouped by the K/V
// head their query heads share, the enlarged map, the readout and the choice
// of layers and heads. Its state is app.js's `state`.
"use strict";

// ---- attention ------------------------------------------------------------------

// "all", "" -> null (everything); "0,2,5-7" -> [0, 2, 5, 6, 7]. Throws a
// message naming the field (whatId: its message id) and the allowed range.
// "all" is also read in the page's language ("todas").
function parsePick(text, limit, whatId) {
  const picked = text.trim().toLowerCase();
  if (picked === "" || picked === "all" || picked === t("pick.all")) return null;
  const out = new Set();
  const what = t(whatId);
  for (const part of picked.split(",")) {
    const m = /^\s*(\d+)\s*(?:-\s*(\d+))?\s*$/.exec(part);
    if (!m) throw new Error(t("pick.not_number", { what, part: part.trim() }));
    const a = Number(m[1]),
      b = m[2] === undefined ? a : Number(m[2]);
    if (a > b || b >= limit)
      throw new Error(t("pick.outside", { what, part: part.trim(), last: limit - 1 }));
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
  return withWindow(headMatrix(snap, hi), step, layer);
}

// On a sliding-window layer, outside(r, c) says which cells are keys behind
// the query's window, which heatImage paints in their own grey. Not in the
// raw scores: those are drawn before any mask, as the causal ones are.
function withWindow(mat, step, layer) {
  if (state.mode === "attn.scores" || layerWindow(state.trace, layer) === 0) return mat;
  const s = state.trace.doc.steps[step];
  mat.outside = (r, c) => outsideWindow(state.trace, layer, s.rows.start + r, s.keys.start + c);
  return mat;
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
  const mean = { rows, cols, heads: heads.map(([h]) => h), at: (r, c) => data[r * cols + c] };
  return withWindow(mean, step, layer);
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

// The parts of a cell's readout: who (the map), the query, the key, the value.
function describeCell(layer, head, r, c, v, mat) {
  const tr = state.trace;
  const q = queryToken(tr, state.step, r),
    k = keyToken(tr, state.step, c);
  const who =
    head === "mean"
      ? t("cell.mean", { layer, heads: meanMatrix(state.step, layer).heads.join(",") })
      : t("cell.head", { layer, head, g: tr.groupOf.get(head) });
  return [
    who,
    t("cell.query", { tok: tokenLabel(q.tok), pos: q.pos }),
    t("cell.key", { tok: tokenLabel(k.tok), pos: k.pos }),
    modeName(state.mode) +
      " = " +
      fmt(v) +
      (mat.outside && mat.outside(r, c)
        ? " " + t("cell.outside_window", { w: layerWindow(tr, layer) })
        : ""),
  ];
}

// The readout follows the cell last hovered (or the cursor): after a change
// of step, mode or selection it reads that cell's new value, or goes back
// to the hint when the cell is gone.
function refreshReadout() {
  const h = state.hover;
  let text = t("attn.hover"),
    tip = "";
  if (h) {
    const mat =
      h.head === "mean" ? meanMatrix(state.step, h.layer) : matrixFor(state.step, h.layer, h.head);
    if (mat && h.r < mat.rows && h.c < mat.cols) {
      const [who, q, k, v] = describeCell(h.layer, h.head, h.r, h.c, mat.at(h.r, h.c), mat);
      text = who + ": " + q + " " + k + ": " + v;
      tip = who + ":\n" + q + "\n" + k + ":\n" + v;
    } else state.hover = null;
  }
  $("readout").textContent = text;
  $("tooltip").dataset.text = tip;
}

function showCell(ev, layer, head, r, c) {
  state.hover = { layer, head, r, c };
  refreshReadout();
  const tip = $("tooltip");
  tip.textContent = tip.dataset.text;
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
// extra: drawMap options that replace the grid's (presentation mode's sizes).
function mapTile(layer, head, mat, range, width, height, caption, onOpen, corner, extra) {
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
    rowFloor: 22,
    ...extra,
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
      "aria-label": t("attn.enlarge", { caption }),
      onclick: onOpen,
    },
    canvas,
  );
}

// Draws the grid so that every layer fits in the window: a second pass
// takes off what the first overflowed by (borders and labels the sizes
// below only estimate).
function renderAttention() {
  const presenting = state.present && state.trace;
  $("stage").hidden = !presenting;
  if (presenting) {
    $("grid").hidden = true;
    $("zoom").hidden = true;
    renderStage();
    writeLink();
    return;
  }
  drawAttention(0);
  writeLink();
  const grid = $("grid");
  if (state.zoom || state.summaryMaps || grid.children.length === 0) return;
  const bottom = grid.getBoundingClientRect().bottom + window.scrollY;
  const over = bottom - window.innerHeight;
  const top = grid.getBoundingClientRect().top + window.scrollY;
  if (over > 0 && window.innerHeight - top >= window.innerHeight * 0.45)
    drawAttention(Math.ceil(over / grid.children.length) + 2);
}

function drawAttention(shrink) {
  const d = state.trace.doc;
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
  const what = modeName(state.mode);
  const shared = state.colorMode === "shared";
  if (isScores())
    drawLegend(
      $("legend"),
      "diverging",
      shared ? -(lim || 1) : -1,
      shared ? lim || 1 : 1,
      t(shared ? "legend.shared" : "legend.each_abs", { what }),
    );
  else
    drawLegend(
      $("legend"),
      state.scale,
      0,
      1,
      t(shared ? "legend.shared" : "legend.each_max", { what }),
    );
  addWindowKey($("legend"), layers);
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
          t("attn.mean_caption", { layer, n: mat.heads.length }),
          () => {
            state.layerPick = [layer];
            state.summaryMaps = false;
            $("layer-select").value = String(layer);
            $("summary-maps").checked = false;
            renderAttention();
          },
          t("layer.n", { layer }),
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
                t("attn.caption", { layer, head, g }),
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
                  text: t("attn.group", { g, heads: heads.join(", ") }),
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
          el("div", { class: "layer-label", text: t("layer.n", { layer }) }),
          ...groups,
        ),
      );
    }
  }
  if (rows.length === 0 || maps.size === 0)
    rows.push(
      el("p", {
        class: "big-summary",
        text: t("attn.no_map", { mode: state.mode }),
      }),
    );
  grid.replaceChildren(...rows);
  grid.hidden = state.zoom !== null;
  renderZoom(lim);
  refreshReadout();
}

// Below the colour bar, on a trace with sliding-window layers among those
// shown (and a mode that masks): what the two greys mean, each with its
// swatch. The causal grey is a key after the query; the hatched darker one a
// key behind the query's window, masked although it is in the past.
function addWindowKey(legend, layers) {
  if (state.mode === "attn.scores") return;
  const sliding = slidingLayers(state.trace)
    .map((g) => ({ ...g, layers: g.layers.filter((l) => layers.includes(l)) }))
    .filter((g) => g.layers.length > 0);
  if (sliding.length === 0) return;
  const hint = legend.querySelector(".hint");
  if (hint) hint.remove();
  // In softmax the causal mask has no grey: a later key's probability is 0.
  const softmax = state.mode === "attn.softmax";
  const key = (cls, text) =>
    el("span", { class: "mask-key" }, cls ? el("span", { class: "swatch " + cls }) : null, text);
  legend.append(
    key(softmax ? null : "causal", t(softmax ? "legend.causal_zero" : "legend.causal")),
    ...sliding.map((g) =>
      key("window", t("legend.window", { layers: g.layers.join(", "), w: g.window })),
    ),
  );
  legend.dataset.window = sliding.map((g) => g.window + ":" + g.layers.join(",")).join(" ");
}

function openZoom(layer, head) {
  state.zoom = { layer, head };
  state.cursor = { r: 0, c: 0 };
  renderAttention();
  $("zoom-canvas").focus();
  writeLink();
}
function closeZoom() {
  const z = state.zoom;
  state.zoom = null;
  state.zoomFill = false;
  $("zoom-fill").setAttribute("aria-pressed", "false");
  renderAttention();
  writeLink();
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
    $("zoom-title").textContent = t("zoom.missing", { layer, head });
    $("zoom-canvas").width = 0;
    return;
  }
  const tr = state.trace,
    s = currentStep(),
    g = tr.groupOf.get(head);
  $("zoom-title").textContent = t("zoom.title", {
    layer,
    head,
    g,
    step: state.step,
    kind: t("kind." + s.kind),
    mode: modeName(state.mode),
    rows: mat.rows,
    cols: mat.cols,
  });
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
    rowLabel: (r) => rowLabelOf(r) + " " + queryToken(tr, state.step, r).pos,
    colLabel: colLabelOf,
    width: (box.clientWidth || 1000) - 24,
    height,
    font,
    maxCell: 400,
    rowFloor: 40,
    titles: { rows: t("axis.queries"), cols: t("axis.keys") },
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
