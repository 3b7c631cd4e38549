// trace.js: reading what `glassllm trace` wrote (docs/trace.schema.json,
// format "glassllm-trace", version 1), checking it, and the computations the
// views share: snapshot lookup, heatmap cells, cache figures, comparing two
// traces, and training metrics (metrics.jsonl). No drawing here: see
// views.js, and app.js for the page's state and controls.
"use strict";

const TRACE_FORMAT = "glassllm-trace";
const TRACE_VERSION = 1;

// ---- checking a document ------------------------------------------------------

// Throws an Error whose message says, in one sentence, what is wrong. Checks
// what the views rely on, not every rule of the schema.
function checkTrace(doc) {
  const fail = (msg) => {
    throw new Error(msg);
  };
  if (doc === null || typeof doc !== "object" || Array.isArray(doc))
    fail("this is not a GlassLM trace: the file holds JSON but not an object");
  if (doc.format !== TRACE_FORMAT)
    fail(
      'this is not a GlassLM trace: its "format" is ' +
        JSON.stringify(doc.format) +
        ', expected "' +
        TRACE_FORMAT +
        '"',
    );
  if (doc.version !== TRACE_VERSION)
    fail(
      "unsupported trace version " +
        JSON.stringify(doc.version) +
        ": this inspector reads " +
        "version " +
        TRACE_VERSION +
        "; make the trace again with the matching glassllm",
    );
  for (const key of [
    "config",
    "attention",
    "head_groups",
    "options",
    "sequence",
    "steps",
    "cache_links",
    "dtype",
  ])
    if (!(key in doc)) fail('the trace has no "' + key + '" field');
  const c = doc.config;
  for (const key of ["n_layers", "n_heads", "n_kv_heads", "head_dim", "n_rep", "max_len"])
    if (!Number.isInteger(c[key]) || c[key] < 1)
      fail("config." + key + " must be a positive integer, not " + JSON.stringify(c[key]));
  if (!Array.isArray(doc.sequence)) fail('"sequence" must be a list of tokens');
  if (!Array.isArray(doc.steps) || doc.steps.length === 0) fail("the trace has no steps");
  doc.steps.forEach((s, i) => {
    const where = "steps[" + i + "]";
    for (const key of [
      "kind",
      "start",
      "tokens",
      "positions",
      "window_offset",
      "keys",
      "cache",
      "repeat_kv",
      "snapshots",
      "graph",
    ])
      if (!(key in s)) fail(where + ' has no "' + key + '" field');
    if (!Array.isArray(s.snapshots)) fail(where + ".snapshots must be a list");
    s.snapshots.forEach((snap, k) => {
      const n = Array.isArray(snap.shape) ? snap.shape.reduce((a, b) => a * b, 1) : -1;
      if (!Array.isArray(snap.data) || snap.data.length !== n)
        fail(
          where +
            ".snapshots[" +
            k +
            "] (" +
            snap.name +
            ", layer " +
            snap.layer +
            ") has " +
            (Array.isArray(snap.data) ? snap.data.length : "no") +
            " values for shape [" +
            snap.shape +
            "]",
        );
    });
  });
}

// Parses text as a trace; throws an Error with a message for the page.
function parseTrace(text) {
  let doc;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new Error("the file is not valid JSON (" + e.message + ")");
  }
  checkTrace(doc);
  return indexTrace(doc);
}

// Adds lookup tables the views use; the document itself is kept as is.
function indexTrace(doc) {
  const groupOf = new Map(); // query head -> K/V head
  doc.head_groups.forEach((heads, g) => heads.forEach((h) => groupOf.set(h, g)));
  const snaps = doc.steps.map((s) => {
    const m = new Map();
    for (const snap of s.snapshots) m.set(snap.name + "|" + snap.layer, snap);
    return m;
  });
  const layers = [...new Set(doc.steps[0].snapshots.map((s) => s.layer))].sort((a, b) => a - b);
  return { doc, groupOf, snaps, layers };
}

function snapshot(trace, step, name, layer) {
  return trace.snaps[step].get(name + "|" + layer) || null;
}

// The query heads a 4-D snapshot holds (axis 1), in order.
function snapshotHeads(snap, nHeads) {
  if (snap.heads && snap.heads.length) return snap.heads;
  return Array.from({ length: snap.shape[1] }, (_, i) => i);
}

// One head of a [B, H, T, m] snapshot (batch row 0) as a T x m matrix view.
function headMatrix(snap, headIndex, which) {
  const [, H, T, m] = snap.shape;
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
function queryToken(step, t) {
  return { pos: step.positions[t], tok: step.tokens[t] };
}

// ---- the K/V cache ------------------------------------------------------------

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
                s.positions[t],
              {
                snap,
                step: si,
                off: (h * T + t) * m,
                len: m,
                head: heads[h],
                pos: s.positions[t],
                seq: s.window_offset + s.positions[t],
              },
            );
      } else if (shape.length === 3) {
        const [, T, d] = shape;
        for (let t = 0; t < T; t++)
          rows.set(snap.name + "|" + snap.layer + "|-1|" + s.window_offset + "|" + s.positions[t], {
            snap,
            step: si,
            off: t * d,
            len: d,
            head: -1,
            pos: s.positions[t],
            seq: s.window_offset + s.positions[t],
          });
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
      const u = x.snap.data[x.off + j],
        v = y.snap.data[y.off + j];
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
  return { groups: list, max, onlyA, onlyB: [...rb.keys()].filter((k) => !ra.has(k)).length };
}

const SNAPSHOT_ORDER = [
  "resid.in",
  "attn.q",
  "attn.k",
  "attn.v",
  "attn.scores",
  "attn.scores_masked",
  "attn.softmax",
  "attn.out",
];

// The difference a - b of one compared group as a matrix for one head:
// rows = matched query rows in sequence order, cols = the keys (or features)
// both rows have.
function diffMatrix(group, head) {
  const pairs = group.pairs.filter(([x]) => x.head === head).sort(([x], [y]) => x.seq - y.seq);
  const cols = pairs.reduce((m, [x, y]) => Math.max(m, Math.min(x.len, y.len)), 0);
  return {
    rows: pairs.length,
    cols,
    rowLabel: (r) => pairs[r][0].pos,
    at: (r, c) => {
      const [x, y] = pairs[r];
      if (c >= Math.min(x.len, y.len)) return undefined;
      const u = x.snap.data[x.off + c],
        v = y.snap.data[y.off + c];
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
  if (lines.length === 0) throw new Error("the metrics file is empty");
  const records = lines.map((l, i) => {
    let r;
    try {
      r = JSON.parse(l);
    } catch (e) {
      throw new Error(
        "line " + (i + 1) + " of the metrics file is not valid JSON (" + e.message + ")",
      );
    }
    if (r === null || typeof r !== "object" || Array.isArray(r))
      throw new Error("line " + (i + 1) + " of the metrics file is not a JSON object");
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
  if (loss.length === 0 && acc.length === 0)
    throw new Error('the metrics file has no field named like "loss" or "accuracy"');
  return { xKey: xKey || "line", loss, acc, count: records.length };
}
