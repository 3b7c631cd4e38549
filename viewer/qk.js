// qk.js: two views drawn from one step's numbers. The Q·K view: for one
// head and one query, the query vector, every key vector it can see, their
// dot products divided by sqrt(head_dim) and the softmax, next to the
// scores and weights the trace recorded. The K/V cache as a tensor: one
// column per position held, one row per K/V head, coloured by K/V head.
"use strict";

// The key vector (one K/V head) of the token at window position `pos` as
// seen by step `step`: from the latest step up to it, in the same window,
// that recorded that position's attn.k. null if none did (a window reset
// keeps only its new row; --lean traces keep no attn.k).
function keyVector(trace, step, layer, kvHead, pos) {
  const steps = trace.doc.steps;
  const offset = steps[step].window_offset;
  for (let s = step; s >= 0; s--) {
    const st = steps[s];
    if (st.window_offset !== offset) break;
    const snap = snapshot(trace, s, "attn.k", layer);
    if (!snap) return null;
    const r = pos - st.rows.start;
    if (r < 0 || r >= st.rows.count) {
      if (st.kind !== "decode") break; // positions before a prefill or reset: none
      continue;
    }
    const hi = snapshotHeads(snap).indexOf(kvHead);
    if (hi < 0) return null;
    const m = headMatrix(snap, hi);
    return Array.from({ length: m.cols }, (_, i) => m.at(r, i));
  }
  return null;
}

function queryVector(trace, step, layer, head, row) {
  const snap = snapshot(trace, step, "attn.q", layer);
  if (!snap) return null;
  const hi = snapshotHeads(snap).indexOf(head);
  if (hi < 0) return null;
  const m = headMatrix(snap, hi);
  return Array.from({ length: m.cols }, (_, i) => m.at(row, i));
}

// The arithmetic of one attention row: per key, the dot product, the score
// it gives, the recorded score, the softmax recomputed and recorded.
function qkRows(trace, step, layer, head, row) {
  const s = trace.doc.steps[step];
  const hd = trace.doc.config.head_dim;
  const q = queryVector(trace, step, layer, head, row);
  const scores = snapshot(trace, step, "attn.scores", layer);
  const probs = snapshot(trace, step, "attn.softmax", layer);
  const pick = (snap) => {
    if (!snap) return null;
    const hi = snapshotHeads(snap).indexOf(head);
    return hi < 0 ? null : headMatrix(snap, hi);
  };
  const S = pick(scores),
    P = pick(probs);
  const query = queryToken(trace, step, row);
  const kv = trace.groupOf.get(head);
  const keys = [];
  for (let j = 0; j < s.keys.count; j++) {
    const key = keyToken(trace, step, j);
    const k = keyVector(trace, step, layer, kv, key.pos);
    const masked = key.pos > query.pos;
    let dot = null;
    if (q && k) dot = q.reduce((a, v, i) => a + v * k[i], 0);
    keys.push({
      j,
      key,
      k,
      masked,
      dot,
      score: dot === null ? null : dot / Math.sqrt(hd),
      recorded: S ? S.at(row, j) : null,
      prob: P ? P.at(row, j) : null,
    });
  }
  // The softmax of the recorded scores, over the keys the mask lets through.
  const live = keys.filter((k) => !k.masked && typeof k.recorded === "number");
  const max = Math.max(...live.map((k) => k.recorded));
  const total = live.reduce((a, k) => a + Math.exp(k.recorded - max), 0);
  for (const k of keys)
    k.softmax = k.masked
      ? 0
      : typeof k.recorded === "number"
        ? Math.exp(k.recorded - max) / total
        : null;
  return { q, query, keys, hd, kv };
}

// A vector as a strip of coloured cells on a scale symmetric around 0.
// Its cells are narrow enough that the strip (hd numbers) stays 160 px or less.
function vectorStrip(v, lim, title) {
  const c = el("canvas", { class: "strip", title });
  const cell = Math.max(2, Math.min(8, Math.floor(160 / Math.max(1, v.length))));
  const ctx = sizeCanvas(c, v.length * cell, 18);
  v.forEach((x, i) => {
    const [r, g, b] = colorOf("diverging", x, -lim, lim);
    ctx.fillStyle = "rgb(" + r + "," + g + "," + b + ")";
    ctx.fillRect(i * cell, 0, cell, 18);
  });
  return c;
}

function buildQkHeads() {
  const c = state.trace.doc.config;
  $("qk-head").replaceChildren(
    ...Array.from({ length: c.n_heads }, (_, h) =>
      el("option", {
        value: String(h),
        text: t("qk.head_option", { head: h, g: state.trace.groupOf.get(h) }),
      }),
    ),
  );
}

function renderQk() {
  const tr = state.trace,
    s = currentStep();
  const layer = Number($("qk-layer").value || tr.layers[0]);
  const head = Number($("qk-head").value || 0);
  const rowSel = $("qk-row");
  const prev = rowSel.value;
  rowSel.replaceChildren(
    ...Array.from({ length: s.rows.count }, (_, r) => {
      const q = queryToken(tr, state.step, r);
      return el("option", {
        value: String(r),
        text: t("grads.pos", { pos: q.pos }) + " " + tokenLabel(q.tok),
      });
    }),
  );
  // The last row by default: the one that chose the next token.
  // A link's query row first, then the row shown before.
  const want = state.qkQuery !== null ? String(state.qkQuery) : prev;
  state.qkQuery = null;
  rowSel.value = want !== "" && Number(want) < s.rows.count ? want : String(s.rows.count - 1);
  const row = Number(rowSel.value);
  const r = qkRows(tr, state.step, layer, head, row);
  const sum = $("qk-summary");
  if (!r.q) {
    sum.textContent = t("qk.no_q", { layer, head });
  } else
    sum.textContent = t("qk.summary", {
      layer,
      head,
      kv: r.kv,
      tok: tokenLabel(r.query.tok),
      pos: r.query.pos,
      hd: r.hd,
      sqrt: fmt(Math.sqrt(r.hd)),
    });
  const list = (v) => "[" + Array.from(v, fmt).join(", ") + "]";
  const vectors = [r.q, ...r.keys.map((k) => k.k)].filter(Boolean);
  const lim = vectors.reduce((m, v) => Math.max(m, ...v.map((x) => Math.abs(x))), 0) || 1;
  // Short headers keep the table inside a 1024 px screen; the title says more.
  const th = (text, title) => el("th", { scope: "col", text, title });
  const head_ = el(
    "tr",
    {},
    th(t("qk.col_pos"), t("qk.col_pos_title")),
    th(t("qk.col_key"), t("qk.col_key_title")),
    th("k (" + r.hd + ")", t("qk.col_k_title", { hd: r.hd })),
    th("q \u00b7 k", t("qk.col_dot_title")),
    th("\u00f7 \u221a" + r.hd, t("qk.col_score_title", { hd: r.hd })),
    th(t("qk.col_recorded"), t("qk.col_recorded_score_title")),
    th(t("mode.softmax"), t("qk.col_softmax_title")),
    th(t("qk.col_recorded"), t("qk.col_recorded_softmax_title")),
    th("", t("qk.col_bar_title")),
  );
  const qRow = el(
    "tr",
    { class: "qrow" },
    el("td", { text: String(r.query.pos) }),
    el("td", { class: "tokcell", text: "q: " + showText((r.query.tok || { text: "?" }).text) }),
    el("td", {}, r.q ? vectorStrip(r.q, lim, "q = " + list(r.q)) : t("qk.not_recorded")),
    el("td", { colspan: 6, text: t("qk.q_vector", { head }) }),
  );
  const body = r.keys.map((k) =>
    el(
      "tr",
      { class: k.masked ? "masked" : "", "data-key": k.j },
      el("td", { text: String(k.key.pos) }),
      el("td", { class: "tokcell", text: showText((k.key.tok || { text: "?" }).text) }),
      el("td", {}, k.k ? vectorStrip(k.k, lim, "k = " + list(k.k)) : t("qk.not_recorded")),
      el("td", { "data-col": "dot", text: k.dot === null ? "-" : fmt(k.dot) }),
      el("td", { "data-col": "score", text: k.score === null ? "-" : fmt(k.score) }),
      el("td", {
        "data-col": "recorded",
        text: k.masked ? t("qk.masked") : typeof k.recorded === "number" ? fmt(k.recorded) : "-",
      }),
      el("td", {
        "data-col": "softmax",
        text: k.softmax === null ? "-" : fmt(k.softmax),
      }),
      el("td", {
        "data-col": "prob",
        text: typeof k.prob === "number" ? fmt(k.prob) : "-",
      }),
      el(
        "td",
        { class: "barcell" },
        el("span", {
          class: "bar",
          style: "width:" + Math.round(120 * (typeof k.prob === "number" ? k.prob : 0)) + "px",
        }),
      ),
    ),
  );
  $("qk-table").replaceChildren(el("thead", {}, head_), el("tbody", {}, qRow, ...body));
}

// One strip under the cache tensor for the sliding layers of one window
// (group g: {window, layers}): the positions they still read, solid, and the
// older ones they could drop, hatched in the attention view's window grey.
// Returns how many could be dropped.
function drawDropStrip(ctx, g, label, at) {
  const { y, left, cell, rowH, held } = at;
  const drop = droppableKeys(held, g.window);
  ctx.fillStyle = cssVar("--fg");
  ctx.textAlign = "right";
  ctx.textBaseline = "middle";
  ctx.fillText(label, left - 8, y + rowH / 2);
  for (let p = 0; p < held; p++) {
    ctx.fillStyle = p < drop ? cssVar("--window-masked") : cssVar("--accent");
    ctx.fillRect(left + p * cell, y + 1, Math.max(1, cell - (cell > 4 ? 1 : 0)), rowH - 2);
  }
  hatchOutside(
    ctx,
    { rows: 1, cols: Math.max(1, drop), outside: () => true },
    left,
    y,
    drop * cell,
    rowH,
  );
  return drop;
}

// The K/V cache of one layer after a step as the tensor it is, K above V:
// one row per K/V head (coloured as in the attention view, with the query
// heads that read it), one column per position up to max_len; the columns
// this step wrote are solid, the ones it kept are lighter, the room left is
// empty.
function drawCacheTensor(canvas, trace, step) {
  const d = trace.doc,
    c = d.config,
    s = d.steps[step];
  const held = s.cache.mode === "none" ? 0 : s.cache.length;
  // Columns up to the most the cache holds in this trace: the tensor then
  // fills the width by the last step and visibly grows towards it.
  const capacity = Math.max(
    1,
    held,
    ...d.steps.map((x) => (x.cache.mode === "none" ? 0 : x.cache.length)),
  );
  const rect = canvas.getBoundingClientRect();
  const w = Math.max(500, Math.round(rect.width || 900));
  const font = state.present ? 18 : 14; // projector size in presentation mode
  const rowLabel = (name, g) => t("tensor.row", { name, g, heads: d.head_groups[g].join(",") });
  const ctx = sizeCanvas(canvas, 1, 1);
  ctx.font = font + 'px "DejaVu Sans", sans-serif';
  const stripLabel = (g) => t("tensor.window_row", { layers: g.layers.join(","), w: g.window });
  const labels = [rowLabel("K", c.n_kv_heads - 1), ...slidingLayers(trace).map(stripLabel)];
  const left = Math.ceil(Math.max(...labels.map((l) => ctx.measureText(l).width))) + 16,
    right = 16;
  const cell = Math.max(1, (w - left - right) / capacity);
  const rowH = font + 8,
    blockH = rowH * c.n_kv_heads;
  const top = font + 16;
  const sep = 14; // between the K and the V block
  // Under V, one strip per sliding window: what those layers could drop.
  const sliding = s.cache.mode === "none" ? [] : slidingLayers(trace);
  const stripsY = top + 2 * blockH + sep + 14;
  const axisY = stripsY + sliding.length * (rowH + 6);
  const h = axisY + (4 + sliding.length) * (font + 4) + 8;
  sizeCanvas(canvas, w, h);
  canvas.style.width = "";
  ctx.fillStyle = cssVar("--bg");
  ctx.fillRect(0, 0, w, h);
  ctx.font = font + 'px "DejaVu Sans", sans-serif';
  const newFrom = s.kind === "window_reset" || s.kind === "prefill" ? 0 : s.start;
  const shape = "[" + (s.cache.shape || []).join(", ") + "]";
  ctx.fillStyle = cssVar("--fg");
  ctx.textBaseline = "top";
  ctx.fillText(
    t("tensor.title", { step, shape }) + (s.kind === "window_reset" ? t("tensor.reset") : ""),
    4,
    4,
  );
  ["K", "V"].forEach((name, b) => {
    const y0 = top + b * (blockH + sep) + 8;
    for (let g = 0; g < c.n_kv_heads; g++) {
      const y = y0 + g * rowH;
      const [r, gg, bb] = hexRgb(groupColor(g));
      ctx.fillStyle = cssVar("--fg");
      ctx.textAlign = "right";
      ctx.textBaseline = "middle";
      ctx.fillText(rowLabel(name, g), left - 8, y + rowH / 2);
      for (let p = 0; p < capacity; p++) {
        const x = left + p * cell;
        if (p < held) {
          ctx.fillStyle =
            p >= newFrom
              ? "rgb(" + r + "," + gg + "," + bb + ")"
              : "rgba(" + r + "," + gg + "," + bb + ",0.45)";
          ctx.fillRect(x, y + 1, Math.max(1, cell - (cell > 4 ? 1 : 0)), rowH - 2);
        }
      }
    }
    ctx.strokeStyle = cssVar("--line");
    ctx.strokeRect(left + 0.5, y0 + 0.5, capacity * cell - 1, blockH - 1);
  });
  const drops = sliding.map((g, i) =>
    drawDropStrip(ctx, g, stripLabel(g), {
      y: stripsY + i * (rowH + 6),
      left,
      cell,
      rowH,
      held,
    }),
  );
  // The positions axis: round ticks, the token at each.
  ctx.fillStyle = cssVar("--fg");
  ctx.strokeStyle = cssVar("--fg");
  ctx.textAlign = "center";
  ctx.textBaseline = "top";
  ctx.font = font + 'px "DejaVu Sans Mono", monospace';
  // Labels as far apart as the widest position number needs: never overlapping.
  const every = labelStride(capacity, cell, ctx.measureText(String(capacity - 1)).width + 8);
  for (let p = 0; p < capacity; p += every) {
    const x = left + (p + 0.5) * cell;
    const tok = p < held ? seqToken(trace, s.window_offset + p) : null;
    ctx.fillText(String(p), x, axisY);
    if (tok) ctx.fillText(showText(tok.text).slice(0, every > 1 ? 3 : 1), x, axisY + font + 4);
  }
  ctx.font = font + 'px "DejaVu Sans", sans-serif';
  ctx.textAlign = "left";
  ctx.fillText(t("tensor.axis", { held, room: c.max_len }), 4, axisY + 2 * (font + 4) + 2);
  ctx.fillText(t("tensor.solid"), 4, axisY + 3 * (font + 4) + 2);
  sliding.forEach((g, i) =>
    ctx.fillText(
      t("tensor.window", { layers: g.layers.join(", "), w: g.window, n: drops[i] }),
      4,
      axisY + (4 + i) * (font + 4) + 2,
    ),
  );
  canvas.dataset.droppable = sliding.map((g, i) => g.window + ":" + drops[i]).join(" ");
  canvas.dataset.held = String(held);
  canvas.dataset.capacity = String(capacity);
  canvas.dataset.written = String(held - newFrom);
}
