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
const page = vm.createContext({});
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
