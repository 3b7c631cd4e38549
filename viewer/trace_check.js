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
    throw new Error(
      what +
        " nests deeper than " +
        JSON_MAX_DEPTH +
        " levels; at most " +
        JSON_MAX_DEPTH +
        " are allowed",
    );
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(what + " is not valid JSON (" + e.message + ")");
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
    return text === undefined ? "nothing" : text.length > 40 ? text.slice(0, 37) + "..." : text;
  };
  const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
  const index = (v, where, limit) => {
    if (!Number.isInteger(v) || v < 0)
      fail(where + " must be a non-negative integer, not " + show(v));
    if (limit !== undefined && v >= limit)
      fail(where + " is " + v + ", out of range [0, " + limit + ")");
    return v;
  };
  const list = (v, where) => {
    if (!Array.isArray(v)) fail(where + " must be a list, not " + show(v));
    return v;
  };
  const object = (v, where) => {
    if (!isObject(v)) fail(where + " must be an object, not " + show(v));
    return v;
  };
  const string = (v, where) => {
    if (typeof v !== "string") fail(where + " must be a string, not " + show(v));
    return v;
  };
  const number = (v, where) => {
    if (typeof v !== "number") fail(where + " must be a number, not " + show(v));
    return v;
  };
  const token = (t, where) => {
    object(t, where);
    index(t.id, where + ".id");
    string(t.text, where + ".text");
  };
  const candidate = (c, where) => {
    token(c, where);
    number(c.prob, where + ".prob");
  };
  if (!isObject(doc)) fail("this is not a GlassLM trace: the file holds JSON but not an object");
  if (doc.format !== TRACE_FORMAT)
    fail(
      'this is not a GlassLM trace: its "format" is ' +
        show(doc.format) +
        ', expected "' +
        TRACE_FORMAT +
        '"',
    );
  if (!TRACE_VERSIONS.includes(doc.version))
    fail(
      "unsupported trace version " +
        show(doc.version) +
        ": this inspector reads version" +
        (TRACE_VERSIONS.length > 1 ? "s " : " ") +
        TRACE_VERSIONS.join(" and ") +
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
  const c = object(doc.config, "config");
  for (const key of ["n_layers", "n_heads", "n_kv_heads", "head_dim", "n_rep", "max_len"])
    if (!Number.isInteger(c[key]) || c[key] < 1)
      fail("config." + key + " must be a positive integer, not " + show(c[key]));
  // The page lays out an element per layer, head and token: past these sizes
  // it would freeze for many seconds before drawing anything.
  for (const key of ["n_layers", "n_heads"])
    if (c[key] > TRACE_MAX_HEADS_OR_LAYERS)
      fail(
        "config." + key + " is " + c[key] + "; the page shows at most " + TRACE_MAX_HEADS_OR_LAYERS,
      );
  if (c.n_heads !== c.n_kv_heads * c.n_rep)
    fail(
      "config.n_heads (" +
        c.n_heads +
        ") must be n_kv_heads (" +
        c.n_kv_heads +
        ") times n_rep (" +
        c.n_rep +
        ")",
    );
  if (!["float32", "float64"].includes(doc.dtype))
    fail('"dtype" must be "float32" or "float64", not ' + show(doc.dtype));
  string(doc.attention, "attention");
  list(doc.head_groups, "head_groups");
  if (doc.head_groups.length !== c.n_kv_heads)
    fail(
      "head_groups has " + doc.head_groups.length + " entries for " + c.n_kv_heads + " K/V heads",
    );
  doc.head_groups.forEach((g, i) =>
    list(g, "head_groups[" + i + "]").forEach((h, k) =>
      index(h, "head_groups[" + i + "][" + k + "]", c.n_heads),
    ),
  );
  const o = object(doc.options, "options");
  if (!Number.isInteger(o.precision) || o.precision < 0 || o.precision > 17)
    fail("options.precision must be an integer 0..17, not " + show(o.precision));
  if (typeof o.grads !== "boolean")
    fail("options.grads must be true or false, not " + show(o.grads));
  list(doc.sequence, "sequence");
  if (doc.sequence.length > TRACE_MAX_TOKENS)
    fail(
      "sequence has " + doc.sequence.length + " tokens; the page shows at most " + TRACE_MAX_TOKENS,
    );
  const cells = c.n_layers * c.n_heads * doc.sequence.length ** 2;
  if (cells > TRACE_CELL_BUDGET)
    fail(
      "config.n_layers × config.n_heads × tokens² is " +
        c.n_layers +
        " × " +
        c.n_heads +
        " × " +
        doc.sequence.length +
        "² = " +
        cells +
        " attention cells (" +
        ((cells * 8) / 2 ** 30).toFixed(1) +
        " GiB); the page's budget is " +
        TRACE_CELL_BUDGET +
        " cells (1 GiB)",
    );
  doc.sequence.forEach((t, i) => token(t, "sequence[" + i + "]"));
  list(doc.steps, "steps");
  if (doc.steps.length === 0) fail("the trace has no steps");
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
      if (!(key in s)) fail(where + ' has no "' + key + '" field');
    if (!["prefill", "decode", "window_reset"].includes(s.kind))
      fail(where + '.kind must be "prefill", "decode" or "window_reset", not ' + show(s.kind));
    index(s.start, where + ".start");
    list(s.tokens, where + ".tokens").forEach((t, k) => token(t, where + ".tokens[" + k + "]"));
    list(s.positions, where + ".positions").forEach((p, k) =>
      index(p, where + ".positions[" + k + "]"),
    );
    if (s.positions.length !== s.tokens.length)
      fail(where + " has " + s.tokens.length + " tokens but " + s.positions.length + " positions");
    if (s.tokens.length === 0) fail(where + " has no tokens");
    index(s.window_offset, where + ".window_offset");
    object(s.keys, where + ".keys");
    index(s.keys.start, where + ".keys.start");
    index(s.keys.count, where + ".keys.count");
    if (s.window_offset + s.keys.start + s.keys.count > doc.sequence.length)
      fail(
        where +
          " attends over sequence tokens up to " +
          (s.window_offset + s.keys.start + s.keys.count - 1) +
          " but the sequence has " +
          doc.sequence.length,
      );
    const rows = s.rows === undefined ? { start: s.start, count: s.tokens.length } : s.rows;
    object(rows, where + ".rows");
    index(rows.start, where + ".rows.start");
    index(rows.count, where + ".rows.count");
    if (s.window_offset + rows.start + rows.count > doc.sequence.length)
      fail(where + ".rows run past the end of the sequence");
    const cache = object(s.cache, where + ".cache");
    string(cache.mode, where + ".cache.mode");
    list(cache.shape, where + ".cache.shape").forEach((d, k) =>
      index(d, where + ".cache.shape[" + k + "]"),
    );
    for (const key of ["length", "bytes", "per_layer"]) index(cache[key], where + ".cache." + key);
    object(s.repeat_kv, where + ".repeat_kv");
    for (const key of ["ops", "bytes", "read_bytes"])
      index(s.repeat_kv[key], where + ".repeat_kv." + key);
    list(s.top_k || [], where + ".top_k").forEach((t, k) =>
      candidate(t, where + ".top_k[" + k + "]"),
    );
    if (s.next !== null && s.next !== undefined) candidate(s.next, where + ".next");
    list(s.snapshots, where + ".snapshots").forEach((snap, k) => {
      const at = where + ".snapshots[" + k + "]";
      object(snap, at);
      if (!SNAPSHOT_NAMES.includes(snap.name))
        fail(at + ".name must be one of " + SNAPSHOT_NAMES.join(", ") + ", not " + show(snap.name));
      index(snap.layer, at + ".layer", c.n_layers);
      list(snap.shape, at + ".shape").forEach((d, j) => index(d, at + ".shape[" + j + "]"));
      const n = snap.shape.reduce((a, b) => a * b, 1);
      if (snap.shape.length === 4) {
        const limit = snap.name === "attn.k" || snap.name === "attn.v" ? c.n_kv_heads : c.n_heads;
        list(snap.heads || [], at + ".heads").forEach((h, j) =>
          index(h, at + ".heads[" + j + "]", limit),
        );
        if (snap.heads && snap.heads.length && snap.heads.length !== snap.shape[1])
          fail(at + " lists " + snap.heads.length + " heads for shape [" + snap.shape + "]");
        if (snap.shape[2] !== rows.count)
          fail(at + " has " + snap.shape[2] + " query rows, but the step records " + rows.count);
        if (/scores|softmax/.test(snap.name) && snap.shape[3] !== s.keys.count)
          fail(at + " has " + snap.shape[3] + " keys, but the step attends over " + s.keys.count);
      }
      for (const field of ["data", "grad"]) {
        if (field === "grad" && snap[field] === undefined) continue;
        // Version 2 packs the values in a base64 string: unpack it here.
        if (typeof snap[field] === "string") {
          const values = unpackValues(snap[field], doc.dtype);
          if (values === null)
            fail(
              at +
                "." +
                field +
                " is neither a list of numbers nor base64 of " +
                doc.dtype +
                " values",
            );
          snap[field] = values;
        }
        const v = snap[field];
        if (!(Array.isArray(v) || ArrayBuffer.isView(v)) || v.length !== n)
          fail(
            at +
              " (" +
              snap.name +
              ", layer " +
              snap.layer +
              ") has " +
              (Array.isArray(v) ? v.length : "no") +
              " values" +
              (field === "grad" ? " of grad" : "") +
              " for shape [" +
              snap.shape +
              "]",
          );
        if (Array.isArray(v))
          for (let j = 0; j < v.length; j++)
            if (typeof v[j] !== "number" && v[j] !== null)
              fail(at + "." + field + "[" + j + "] must be a number or null, not " + show(v[j]));
      }
    });
    const graph = object(s.graph, where + ".graph");
    list(graph.nodes, where + ".graph.nodes").forEach((nd, k) => {
      const at = where + ".graph.nodes[" + k + "]";
      object(nd, at);
      if (nd.id !== k) fail(at + ".id must be " + k + ", not " + show(nd.id));
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
