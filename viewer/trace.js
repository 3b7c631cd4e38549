// trace.js: reading what `glassllm trace` wrote (docs/trace.schema.json,
// format "glassllm-trace", versions 1 and 2; trace_check.js checks it), and the computations the
// views share: snapshot lookup, heatmap cells, cache figures, comparing two
// traces, and training metrics (metrics.jsonl). No drawing here: see
// views.js, and app.js for the page's state and controls.
"use strict";

const TRACE_FORMAT = "glassllm-trace";
// Version 1 wrote every row of every step and the masked scores; version 2
// (docs/09-tracer.md) leaves out what follows from other data.
const TRACE_VERSIONS = [1, 2];

// Significant digits of a trace's numbers, and a number rounded to them: a
// packed float32 of 0.0768493 reads back as 0.07684930413961411, and is
// shown (and compared) as the 0.0768493 the tracer wrote.
function traceDigits(doc) {
  const p = doc.options.precision;
  return p > 0 ? p : doc.dtype === "float32" ? 9 : 17;
}
function rounded(v, digits) {
  return typeof v === "number" && Number.isFinite(v) ? Number(v.toPrecision(digits)) : v;
}

// The values of a packed tensor: base64 of little-endian float32 (or
// float64) numbers. null if the text is not that.
function unpackValues(text, dtype) {
  const width = dtype === "float64" ? 8 : 4;
  let bin;
  try {
    bin = atob(text);
  } catch (e) {
    return null;
  }
  if (bin.length % width !== 0) return null;
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  const view = new DataView(bytes.buffer);
  const n = bin.length / width;
  const out = width === 8 ? new Float64Array(n) : new Float32Array(n);
  if (LITTLE_ENDIAN)
    return width === 8 ? new Float64Array(bytes.buffer) : new Float32Array(bytes.buffer);
  for (let i = 0; i < n; i++)
    out[i] = width === 8 ? view.getFloat64(i * 8, true) : view.getFloat32(i * 4, true);
  return out;
}
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

// Parses text as a trace; throws an Error with a message for the page.
function parseTrace(text) {
  const doc = parseJsonBounded(text, t("check.the_file"));
  checkTrace(doc);
  return indexTrace(doc);
}

// Adds lookup tables the views use; the document itself is kept as is.
// Version 2 leaves out what follows from other data: the masked scores
// (made here from the raw scores when first asked for) and, after a window
// reset, the rows that only recompute the previous window (steps[s].rows).
function indexTrace(doc) {
  const groupOf = new Map(); // query head -> K/V head
  doc.head_groups.forEach((heads, g) => heads.forEach((h) => groupOf.set(h, g)));
  for (const s of doc.steps)
    if (s.rows === undefined) s.rows = { start: s.start, count: s.tokens.length };
  const snaps = doc.steps.map((s) => {
    const m = new Map();
    for (const snap of s.snapshots) m.set(snap.name + "|" + snap.layer, snap);
    return m;
  });
  const layers = [...new Set(doc.steps[0].snapshots.map((s) => s.layer))].sort((a, b) => a - b);
  const names = new Set(doc.steps[0].snapshots.map((s) => s.name));
  return { doc, groupOf, snaps, layers, names };
}

// A layer's sliding window w (config.layer_window, written for models that
// have one): its query at position p sees keys p - w < j <= p. 0: the layer
// sees every earlier key (and every layer of a trace without the field).
function layerWindow(trace, layer) {
  const w = trace.doc.config.layer_window;
  return w && w[layer] > 0 ? w[layer] : 0;
}

// Whether key position `key` is behind the window of a query at position
// `query` on this layer: masked there, although it is not in the future.
function outsideWindow(trace, layer, query, key) {
  const w = layerWindow(trace, layer);
  return w > 0 && key <= query - w;
}

// The snapshot of a name and layer in a step, or null. Masked scores that
// the trace left out are made from the raw scores: null where the key's
// position is after the query's, or behind the layer's sliding window.
function snapshot(trace, step, name, layer) {
  const m = trace.snaps[step];
  const key = name + "|" + layer;
  if (m.has(key)) return m.get(key);
  if (name !== "attn.scores_masked") return null;
  const raw = m.get("attn.scores|" + layer);
  if (!raw) return null;
  const s = trace.doc.steps[step];
  const [, H, T, M] = raw.shape;
  const data = Array.from(raw.data); // a plain list: it holds null

  for (let h = 0; h < H; h++)
    for (let t = 0; t < T; t++) {
      const query = s.rows.start + t;
      for (let j = 0; j < M; j++) {
        const key = s.keys.start + j;
        if (key > query || outsideWindow(trace, layer, query, key))
          data[(h * T + t) * M + j] = null;
      }
    }
  const masked = { name, layer, shape: raw.shape, heads: raw.heads, data, derived: true };
  m.set(key, masked);
  return masked;
}

// The query heads a 4-D snapshot holds (axis 1), in order.
function snapshotHeads(snap) {
  if (snap.heads && snap.heads.length) return snap.heads;
  return Array.from({ length: snap.shape[1] }, (_, i) => i);
}

// One head of a [B, H, T, m] snapshot (batch row 0) as a T x m matrix view.
function headMatrix(snap, headIndex, which) {
  const [, , T, m] = snap.shape;
  const values = which === "grad" ? snap.grad : snap.data;
  const base = headIndex * T * m;
  return {
    rows: T,
    cols: m,
    at: (r, c) => values[base + r * m + c],
  };
}

// Token of sequence index i as {id, text}; null past the end.
function seqToken(trace, i) {
  return trace.doc.sequence[i] || null;
}

// The token of key j of a step, and of its query row t.
function keyToken(trace, step, j) {
  const s = trace.doc.steps[step];
  const pos = s.keys.start + j;
  return { pos, index: s.window_offset + pos, tok: seqToken(trace, s.window_offset + pos) };
}
function queryToken(trace, step, t) {
  const s = trace.doc.steps[step];
  const pos = s.rows.start + t;
  return { pos, index: s.window_offset + pos, tok: seqToken(trace, s.window_offset + pos) };
}

// ---- the K/V cache ------------------------------------------------------------

// The sliding layers grouped by window, [{window, layers: [...]}], in layer
// order; [] for a trace whose layers all see every key.
function slidingLayers(trace) {
  const groups = new Map();
  const windows = trace.doc.config.layer_window || [];
  windows.forEach((w, layer) => {
    if (!(w > 0)) return;
    if (!groups.has(w)) groups.set(w, { window: w, layers: [] });
    groups.get(w).layers.push(layer);
  });
  return [...groups.values()];
}

// After a step that holds `held` positions, the cached keys a layer with
// window w never reads again: the newest query (position held - 1) sees only
// positions held - w .. held - 1, and every later query sees less of the
// past. Positions 0 .. droppable - 1 could be dropped.
function droppableKeys(held, w) {
  return w > 0 ? Math.max(0, held - w) : 0;
}

// What the cache holds after each step, beside what multi-head attention
// (one K/V head per query head: n_rep times as many) would store, and what
// repeat_kv wrote. For a grouped trace, repeatKvBytes is what the repeat_kv
// path would have written for the same keys (2 tensors per layer of
// [B, H, m, hd]), computed from the config and marked as computed.
function cacheRows(trace) {
  const d = trace.doc,
    c = d.config;
  const elem = d.dtype === "float64" ? 8 : 4;
  return d.steps.map((s, i) => {
    const B = s.cache.shape.length ? s.cache.shape[0] : 1;
    const grouped = d.attention === "grouped";
    return {
      step: i,
      kind: s.kind,
      shape: s.cache.shape,
      length: s.cache.length,
      mode: s.cache.mode,
      bytes: s.cache.bytes,
      perLayer: s.cache.per_layer,
      mhaBytes: s.cache.bytes * c.n_rep,
      repeatKvOps: s.repeat_kv.ops,
      repeatKvBytes: s.repeat_kv.bytes,
      repeatKvRead: s.repeat_kv.read_bytes,
      repeatKvComputed: grouped,
      repeatKvWould: 2 * c.n_layers * B * c.n_heads * s.keys.count * c.head_dim * elem,
    };
  });
}

function formatBytes(n) {
  if (n < 1024) return n + " B";
  if (n < 1024 * 1024) return (n / 1024).toFixed(n % 1024 ? 2 : 0) + " KiB";
  return (n / 1024 / 1024).toFixed(2) + " MiB";
}

// ---- comparing two traces -----------------------------------------------------

// Rows keyed by what they compute, not by step: snapshot name, layer, head,
// and the query token's place (window offset, position). So a trace and
// itself match row for row, and a prefill of N tokens matches a prefill of
// N-1 and one decode step. Rows of different length (a prefill row sees the
// masked future keys) are compared over the keys both have.
function rowsOf(trace) {
  const rows = new Map();
  trace.doc.steps.forEach((s, si) => {
    for (const snap of s.snapshots) {
      const shape = snap.shape;
      if (shape.length === 4) {
        const [, H, T, m] = shape;
        const heads = snapshotHeads(snap);
        for (let h = 0; h < H; h++)
          for (let t = 0; t < T; t++)
            rows.set(
              snap.name +
                "|" +
                snap.layer +
                "|" +
                heads[h] +
                "|" +
                s.window_offset +
                "|" +
                (s.rows.start + t),
              {
                snap,
                step: si,
                off: (h * T + t) * m,
                len: m,
                head: heads[h],
                pos: s.rows.start + t,
                seq: s.window_offset + s.rows.start + t,
              },
            );
      } else if (shape.length === 3) {
        const [, T, d] = shape;
        for (let t = 0; t < T; t++)
          rows.set(
            snap.name + "|" + snap.layer + "|-1|" + s.window_offset + "|" + (s.rows.start + t),
            {
              snap,
              step: si,
              off: t * d,
              len: d,
              head: -1,
              pos: s.rows.start + t,
              seq: s.window_offset + s.rows.start + t,
            },
          );
      }
    }
  });
  return rows;
}

// Per (snapshot name, layer): rows compared, the largest |a - b| and where.
// A number against a null (masked) counts as an infinite difference.
function compareTraces(a, b) {
  const ra = rowsOf(a),
    rb = rowsOf(b);
  const da = traceDigits(a.doc),
    db = traceDigits(b.doc);
  const groups = new Map();
  let onlyA = 0;
  for (const [key, x] of ra) {
    const y = rb.get(key);
    if (!y) {
      onlyA++;
      continue;
    }
    const gkey = x.snap.name + "|" + x.snap.layer;
    let g = groups.get(gkey);
    if (!g) {
      g = { name: x.snap.name, layer: x.snap.layer, rows: 0, max: 0, at: null, pairs: [] };
      groups.set(gkey, g);
    }
    g.rows++;
    g.pairs.push([x, y]);
    const n = Math.min(x.len, y.len);
    for (let j = 0; j < n; j++) {
      const u = rounded(x.snap.data[x.off + j], da),
        v = rounded(y.snap.data[y.off + j], db);
      let diff;
      if (u === null && v === null) diff = 0;
      else if (u === null || v === null) diff = Infinity;
      else diff = Math.abs(u - v);
      if (g.at === null || diff > g.max) {
        g.at = { head: x.head, pos: x.pos, col: j, stepA: x.step, stepB: y.step };
        g.max = diff;
      }
    }
  }
  const list = [...groups.values()].sort(
    (p, q) => p.layer - q.layer || SNAPSHOT_ORDER.indexOf(p.name) - SNAPSHOT_ORDER.indexOf(q.name),
  );
  const max = list.reduce((m, g) => Math.max(m, g.max), 0);
  return {
    groups: list,
    max,
    onlyA,
    onlyB: [...rb.keys()].filter((k) => !ra.has(k)).length,
    digits: [da, db],
  };
}

const SNAPSHOT_ORDER = SNAPSHOT_NAMES;

// What the columns of a snapshot are: keys for scores and softmax, features
// (one head's head_dim, or d_model for the residual stream) otherwise.
function columnsOf(name) {
  if (/scores|softmax/.test(name)) return "keys";
  if (name === "resid.in") return "features (d_model)";
  return "features (head_dim)";
}

// The difference a - b of one compared group as a matrix for one head:
// rows = matched query rows in sequence order, cols = the keys (or features)
// both rows have.
function diffMatrix(group, head, digits) {
  const [da, db] = digits || [17, 17];
  const pairs = group.pairs.filter(([x]) => x.head === head).sort(([x], [y]) => x.seq - y.seq);
  const cols = pairs.reduce((m, [x, y]) => Math.max(m, Math.min(x.len, y.len)), 0);
  return {
    rows: pairs.length,
    cols,
    rowLabel: (r) => pairs[r][0].pos,
    at: (r, c) => {
      const [x, y] = pairs[r];
      if (c >= Math.min(x.len, y.len)) return undefined;
      const u = rounded(x.snap.data[x.off + c], da),
        v = rounded(y.snap.data[y.off + c], db);
      if (u === null && v === null) return null;
      if (u === null || v === null) return Infinity;
      return u - v;
    },
  };
}

// ---- training metrics ---------------------------------------------------------

// metrics.jsonl: one JSON object per line. The x axis is the first of step,
// iter, iteration, epoch found in the lines (else the line number); every
// numeric field whose name contains "loss" is a loss curve and every one
// containing "acc" an accuracy curve.
function parseMetrics(text) {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== "");
  if (lines.length === 0) throw new Error(t("metrics.empty"));
  const records = lines.map((l, i) => {
    const r = parseJsonBounded(l, t("metrics.line_of", { n: i + 1 }));
    if (r === null || typeof r !== "object" || Array.isArray(r))
      throw new Error(t("metrics.not_object", { n: i + 1 }));
    return r;
  });
  const xKey =
    ["step", "iter", "iteration", "epoch"].find((k) =>
      records.some((r) => typeof r[k] === "number"),
    ) || null;
  const keys = new Set();
  for (const r of records)
    for (const k of Object.keys(r)) if (typeof r[k] === "number" && k !== xKey) keys.add(k);
  const series = (pick) =>
    [...keys].filter(pick).map((k) => ({
      name: k,
      points: records
        .map((r, i) => [xKey ? r[xKey] : i, r[k]])
        .filter(([x, y]) => typeof x === "number" && typeof y === "number"),
    }));
  const loss = series((k) => /loss/i.test(k));
  const acc = series((k) => /acc/i.test(k));
  if (loss.length === 0 && acc.length === 0) throw new Error(t("metrics.no_field"));
  return { xKey: xKey || t("metrics.line"), loss, acc, count: records.length };
}
