// json_limits.test.mjs: the page's JSON reader (viewer/trace_check.js) keeps
// the native reader's nesting limit, and a trace too large to draw is refused
// before anything is laid out. Plain Node: the script runs in a VM context,
// as the page's scripts share one global scope.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import vm from "node:vm";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
// i18n.js first, as in the page: the messages come from its table (English here).
const page = vm.createContext({
  location: { hash: "" },
  navigator: { languages: ["en"] },
  document: { documentElement: { dataset: {} }, querySelectorAll: () => [] },
  URLSearchParams,
});
vm.runInContext(fs.readFileSync(path.join(root, "viewer/i18n.js"), "utf8"), page);
vm.runInContext('const TRACE_FORMAT = "glassllm-trace"; const TRACE_VERSIONS = [1, 2];', page);
vm.runInContext(fs.readFileSync(path.join(root, "viewer/trace_check.js"), "utf8"), page);

const nested = (n) => "[".repeat(n) + "]".repeat(n);

test("jsonDepth counts brackets outside strings only", () => {
  assert.equal(page.jsonDepth('{"a": [1, {"b": []}]}'), 4);
  assert.equal(page.jsonDepth('{"a": "[[[[\\"[[["}'), 1);
  assert.equal(page.jsonDepth("3"), 0);
});

test("256 levels parse, 257 and 100,000 are refused with one message", () => {
  assert.equal(page.jsonDepth(nested(256)), 256);
  assert.doesNotThrow(() => page.parseJsonBounded(nested(256), "the file"));
  for (const n of [257, 100000])
    assert.throws(
      () => page.parseJsonBounded('{"config": ' + nested(n) + ', "b": 1}', "the file"),
      {
        message: "the file nests deeper than 256 levels; at most 256 are allowed",
      },
    );
  assert.throws(
    () => page.parseJsonBounded("{", "line 3 of the metrics file"),
    (e) => e.message.startsWith("line 3 of the metrics file is not valid JSON ("),
  );
});

test("a trace with more heads or tokens than the page draws is refused by name", () => {
  const trace = {
    format: "glassllm-trace",
    version: 2,
    config: {
      n_layers: 1,
      n_heads: 1000000,
      n_kv_heads: 1,
      head_dim: 4,
      n_rep: 1000000,
      max_len: 8,
    },
  };
  for (const key of [
    "attention",
    "head_groups",
    "options",
    "sequence",
    "steps",
    "cache_links",
    "dtype",
  ])
    trace[key] = null;
  assert.throws(() => page.checkTrace(trace), {
    message: "config.n_heads is 1000000; the page shows at most 1024",
  });
});

test("a trace whose attention maps would pass the page's memory budget is refused", () => {
  // 32 layers of 32 heads over 400 tokens: each under its own limit, but
  // 32 × 32 × 400² = 163,840,000 cells, more than 2^27 = 134,217,728.
  const trace = {
    format: "glassllm-trace",
    version: 2,
    config: { n_layers: 32, n_heads: 32, n_kv_heads: 8, head_dim: 4, n_rep: 4, max_len: 512 },
    attention: "grouped",
    head_groups: Array.from({ length: 8 }, (_, g) => [4 * g, 4 * g + 1, 4 * g + 2, 4 * g + 3]),
    options: { precision: 6, grads: false },
    sequence: Array.from({ length: 400 }, (_, i) => ({ id: i % 10, text: "a" })),
    steps: [],
    cache_links: [],
    dtype: "float64",
  };
  assert.throws(
    () => page.checkTrace(trace),
    (e) => {
      assert.match(
        e.message,
        /^config\.n_layers × config\.n_heads × tokens² is 32 × 32 × 400² = 163840000 attention cells \(1\.2 GiB\); the page's budget is 134217728 cells \(1 GiB\)$/,
      );
      return true;
    },
  );
  // 300 tokens: 92,160,000 cells, under the budget; refused later, for its
  // empty list of steps, not for its size.
  trace.sequence.length = 300;
  assert.throws(
    () => page.checkTrace(trace),
    (e) => !/budget/.test(e.message),
  );
});
