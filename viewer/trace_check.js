// trace_check.js: checking a trace document before anything is drawn: every
// field the views read, with its type and range, so that a malformed or
// hostile trace gives one message naming the field (trace.js reads it).
"use strict";

// ---- reading JSON -------------------------------------------------------------

// The deepest nesting of objects and lists a file may have, as in the native
// reader (include/glassllm/io/json_reader.h): JSON.parse and the code that
// walks its result recurse, and a value nested 100,000 deep overflows the
// page's stack ("Maximum call stack size exceeded").
const JSON_MAX_DEPTH = 256;

// How deeply `text` nests, counted without recursion (brackets inside
// strings do not count); stops counting once past `limit`.
function jsonDepth(text, limit = JSON_MAX_DEPTH) {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) {
      inString = true;
    } else if (c === 91 || c === 123) {
      if (++depth > deepest && (deepest = depth) > limit) return deepest;
    } else if (c === 93 || c === 125) {
      depth--;
    }
  }
  return deepest;
}

// JSON.parse with the nesting limit; `what` names the text in messages
// ("the trace", "line 3 of the metrics file").
function parseJsonBounded(text, what) {
  if (jsonDepth(text) > JSON_MAX_DEPTH)
    throw new Error(t("check.too_deep", { what, n: JSON_MAX_DEPTH }));
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(t("check.not_json", { what, why: e.message }));
  }
}

// ---- checking a document ------------------------------------------------------

// The largest trace the page draws (a 1B model has 16 layers of 32 heads;
// a trace of 16,384 tokens is already a long one to read).
const TRACE_MAX_HEADS_OR_LAYERS = 1024;
const TRACE_MAX_TOKENS = 16384;
// What the views may build from a trace's sizes, at most: a tokens × tokens
// attention map for every layer and head, each cell a number of 8 bytes.
// 2^27 cells are 1 GiB: past that a tab stalls or dies, so such a trace is
// refused, by its sizes, before anything is laid out.
const TRACE_CELL_BUDGET = 2 ** 27;

const SNAPSHOT_NAMES = [
  "resid.in",
  "attn.q_norm",
  "attn.k_norm",
  "attn.q",
  "attn.k",
  "attn.v",
  "attn.scores",
  "attn.scores_masked",
  "attn.softmax",
  "attn.out",
];

// Throws an Error whose message says, in one sentence, what is wrong and
// where. Checks the type of every field the views read (a trace is a file
// anyone can edit: a number where a string belongs must give this message,
// not a half-drawn page).
function checkTrace(doc) {
  const fail = (msg) => {
    throw new Error(msg);
  };
  const show = (v) => {
    const text = JSON.stringify(v);
    return text === undefined
      ? t("check.nothing")
      : text.length > 40
        ? text.slice(0, 37) + "..."
        : text;
  };
  const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
  const index = (v, where, limit) => {
    if (!Number.isInteger(v) || v < 0) fail(t("check.index", { where, v: show(v) }));
    if (limit !== undefined && v >= limit) fail(t("check.range", { where, v, limit }));
    return v;
  };
  const list = (v, where) => {
    if (!Array.isArray(v)) fail(t("check.list", { where, v: show(v) }));
    return v;
  };
  const object = (v, where) => {
    if (!isObject(v)) fail(t("check.object", { where, v: show(v) }));
    return v;
  };
  const string = (v, where) => {
    if (typeof v !== "string") fail(t("check.string", { where, v: show(v) }));
    return v;
  };
  const number = (v, where) => {
    if (typeof v !== "number") fail(t("check.number", { where, v: show(v) }));
    return v;
  };
  const token = (tok, where) => {
    object(tok, where);
    index(tok.id, where + ".id");
    string(tok.text, where + ".text");
  };
  const candidate = (c, where) => {
    token(c, where);
    number(c.prob, where + ".prob");
  };
  if (!isObject(doc)) fail(t("check.not_object"));
  if (doc.format !== TRACE_FORMAT)
    fail(t("check.format", { v: show(doc.format), format: TRACE_FORMAT }));
  if (!TRACE_VERSIONS.includes(doc.version))
    fail(
      t("check.version", {
        v: show(doc.version),
        versions: TRACE_VERSIONS.join(t("check.and")),
      }),
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
    if (!(key in doc)) fail(t("check.no_field", { key }));
  const c = object(doc.config, "config");
  for (const key of ["n_layers", "n_heads", "n_kv_heads", "head_dim", "n_rep", "max_len"])
    if (!Number.isInteger(c[key]) || c[key] < 1)
      fail(t("check.positive", { key, v: show(c[key]) }));
  // The page lays out an element per layer, head and token: past these sizes
  // it would freeze for many seconds before drawing anything.
  for (const key of ["n_layers", "n_heads"])
    if (c[key] > TRACE_MAX_HEADS_OR_LAYERS)
      fail(t("check.too_many", { key, v: c[key], limit: TRACE_MAX_HEADS_OR_LAYERS }));
  if (c.n_heads !== c.n_kv_heads * c.n_rep)
    fail(t("check.n_rep", { heads: c.n_heads, kv: c.n_kv_heads, rep: c.n_rep }));
  // Optional (a model with sliding-window layers): per layer its window, 0
  // for full attention. Traces without it have none.
  if (c.layer_window !== undefined) {
    list(c.layer_window, "config.layer_window").forEach((w, l) =>
      index(w, "config.layer_window[" + l + "]"),
    );
    if (c.layer_window.length !== c.n_layers)
      fail(t("check.layer_window", { n: c.layer_window.length, layers: c.n_layers }));
  }
  if (!["float32", "float64"].includes(doc.dtype)) fail(t("check.dtype", { v: show(doc.dtype) }));
  string(doc.attention, "attention");
  list(doc.head_groups, "head_groups");
  if (doc.head_groups.length !== c.n_kv_heads)
    fail(t("check.head_groups", { n: doc.head_groups.length, kv: c.n_kv_heads }));
  doc.head_groups.forEach((g, i) =>
    list(g, "head_groups[" + i + "]").forEach((h, k) =>
      index(h, "head_groups[" + i + "][" + k + "]", c.n_heads),
    ),
  );
  const o = object(doc.options, "options");
  if (!Number.isInteger(o.precision) || o.precision < 0 || o.precision > 17)
    fail(t("check.precision", { v: show(o.precision) }));
  if (typeof o.grads !== "boolean") fail(t("check.grads", { v: show(o.grads) }));
  list(doc.sequence, "sequence");
  if (doc.sequence.length > TRACE_MAX_TOKENS)
    fail(t("check.too_long", { n: doc.sequence.length, limit: TRACE_MAX_TOKENS }));
  const cells = c.n_layers * c.n_heads * doc.sequence.length ** 2;
  if (cells > TRACE_CELL_BUDGET)
    fail(
      t("check.cells", {
        layers: c.n_layers,
        heads: c.n_heads,
        tokens: doc.sequence.length,
        cells,
        gib: ((cells * 8) / 2 ** 30).toFixed(1),
        budget: TRACE_CELL_BUDGET,
      }),
    );
  doc.sequence.forEach((t, i) => token(t, "sequence[" + i + "]"));
  list(doc.steps, "steps");
  if (doc.steps.length === 0) fail(t("check.no_steps"));
  doc.steps.forEach((s, i) => {
    const where = "steps[" + i + "]";
    object(s, where);
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
      if (!(key in s)) fail(t("check.step_field", { where, key }));
    if (!["prefill", "decode", "window_reset"].includes(s.kind))
      fail(t("check.kind", { where, v: show(s.kind) }));
    index(s.start, where + ".start");
    list(s.tokens, where + ".tokens").forEach((tok, k) => token(tok, where + ".tokens[" + k + "]"));
    list(s.positions, where + ".positions").forEach((p, k) =>
      index(p, where + ".positions[" + k + "]"),
    );
    if (s.positions.length !== s.tokens.length)
      fail(t("check.positions", { where, n: s.tokens.length, p: s.positions.length }));
    if (s.tokens.length === 0) fail(t("check.no_tokens", { where }));
    index(s.window_offset, where + ".window_offset");
    object(s.keys, where + ".keys");
    index(s.keys.start, where + ".keys.start");
    index(s.keys.count, where + ".keys.count");
    if (s.window_offset + s.keys.start + s.keys.count > doc.sequence.length)
      fail(
        t("check.keys_past", {
          where,
          last: s.window_offset + s.keys.start + s.keys.count - 1,
          n: doc.sequence.length,
        }),
      );
    const rows = s.rows === undefined ? { start: s.start, count: s.tokens.length } : s.rows;
    object(rows, where + ".rows");
    index(rows.start, where + ".rows.start");
    index(rows.count, where + ".rows.count");
    if (s.window_offset + rows.start + rows.count > doc.sequence.length)
      fail(t("check.rows_past", { where }));
    const cache = object(s.cache, where + ".cache");
    string(cache.mode, where + ".cache.mode");
    list(cache.shape, where + ".cache.shape").forEach((d, k) =>
      index(d, where + ".cache.shape[" + k + "]"),
    );
    for (const key of ["length", "bytes", "per_layer"]) index(cache[key], where + ".cache." + key);
    object(s.repeat_kv, where + ".repeat_kv");
    for (const key of ["ops", "bytes", "read_bytes"])
      index(s.repeat_kv[key], where + ".repeat_kv." + key);
    list(s.top_k || [], where + ".top_k").forEach((c, k) =>
      candidate(c, where + ".top_k[" + k + "]"),
    );
    if (s.next !== null && s.next !== undefined) candidate(s.next, where + ".next");
    list(s.snapshots, where + ".snapshots").forEach((snap, k) => {
      const at = where + ".snapshots[" + k + "]";
      object(snap, at);
      if (!SNAPSHOT_NAMES.includes(snap.name))
        fail(t("check.snap_name", { at, names: SNAPSHOT_NAMES.join(", "), v: show(snap.name) }));
      index(snap.layer, at + ".layer", c.n_layers);
      list(snap.shape, at + ".shape").forEach((d, j) => index(d, at + ".shape[" + j + "]"));
      const n = snap.shape.reduce((a, b) => a * b, 1);
      if (snap.shape.length === 4) {
        const limit = /^attn\.(k|k_norm|v)$/.test(snap.name) ? c.n_kv_heads : c.n_heads;
        list(snap.heads || [], at + ".heads").forEach((h, j) =>
          index(h, at + ".heads[" + j + "]", limit),
        );
        if (snap.heads && snap.heads.length && snap.heads.length !== snap.shape[1])
          fail(t("check.snap_heads", { at, n: snap.heads.length, shape: String(snap.shape) }));
        if (snap.shape[2] !== rows.count)
          fail(t("check.snap_rows", { at, n: snap.shape[2], rows: rows.count }));
        if (/scores|softmax/.test(snap.name) && snap.shape[3] !== s.keys.count)
          fail(t("check.snap_keys", { at, n: snap.shape[3], keys: s.keys.count }));
      }
      for (const field of ["data", "grad"]) {
        if (field === "grad" && snap[field] === undefined) continue;
        // Version 2 packs the values in a base64 string: unpack it here.
        if (typeof snap[field] === "string") {
          const values = unpackValues(snap[field], doc.dtype);
          if (values === null) fail(t("check.base64", { at: at + "." + field, dtype: doc.dtype }));
          snap[field] = values;
        }
        const v = snap[field];
        if (!(Array.isArray(v) || ArrayBuffer.isView(v)) || v.length !== n)
          fail(
            t(field === "grad" ? "check.grad_count" : "check.value_count", {
              at,
              name: snap.name,
              layer: snap.layer,
              n: Array.isArray(v) ? v.length : t("check.no"),
              shape: String(snap.shape),
            }),
          );
        if (Array.isArray(v))
          for (let j = 0; j < v.length; j++)
            if (typeof v[j] !== "number" && v[j] !== null)
              fail(t("check.value", { at: at + "." + field + "[" + j + "]", v: show(v[j]) }));
      }
    });
    const graph = object(s.graph, where + ".graph");
    list(graph.nodes, where + ".graph.nodes").forEach((nd, k) => {
      const at = where + ".graph.nodes[" + k + "]";
      object(nd, at);
      if (nd.id !== k) fail(t("check.node_id", { at, k, v: show(nd.id) }));
      string(nd.op, at + ".op");
      list(nd.inputs, at + ".inputs").forEach((x, j) => index(x, at + ".inputs[" + j + "]", k));
      list(nd.shape, at + ".shape").forEach((d, j) => index(d, at + ".shape[" + j + "]"));
      index(nd.bytes, at + ".bytes");
      if (nd.layer !== undefined) index(nd.layer, at + ".layer", c.n_layers);
      if (nd.name !== undefined) string(nd.name, at + ".name");
    });
  });
  list(doc.cache_links, "cache_links").forEach((l, i) => {
    const at = "cache_links[" + i + "]";
    object(l, at);
    index(l.layer, at + ".layer", c.n_layers);
    for (const end of ["from", "to"]) {
      object(l[end], at + "." + end);
      index(l[end].step, at + "." + end + ".step", doc.steps.length);
      index(l[end].node, at + "." + end + ".node", doc.steps[l[end].step].graph.nodes.length);
    }
  });
}
