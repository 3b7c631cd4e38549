// trace.cpp: `glassllm trace`: generate from a prompt with a Tracer
// active, so every step (the prefill, each decode step, any window reset) is
// recorded, and write the trace as JSON (docs/trace.schema.json) and/or as
// the attention inspector's self-contained page with the trace inside it.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <stdexcept>

#include "cli/cli.h"
#include "cli/options.h"
#include "glassllm/io/budget.h"
#include "glassllm/io/checkpoint.h"
#include "glassllm/io/files.h"
#include "glassllm/trace/tracer.h"

#ifndef GLASSLLM_SOURCE_DIR
#define GLASSLLM_SOURCE_DIR ""
#endif

namespace glassllm::cli {

std::string bundled_model_dir() {
  namespace fs = std::filesystem;
  std::vector<fs::path> places;
  if (*GLASSLLM_SOURCE_DIR)
    places.push_back(fs::path(GLASSLLM_SOURCE_DIR) / "models/demo");
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec)
    places.push_back(exe.parent_path().parent_path() / "share/glassllm/models/demo");
  std::string looked;
  for (const fs::path& p : places) {
    if (fs::exists(p / "config.json")) return p.string();
    looked += (looked.empty() ? "" : " and ") + p.lexically_normal().string();
  }
  throw std::invalid_argument("there is no bundled model (looked in " + looked +
                              "); pass a checkpoint folder as DIR, e.g. one made by "
                              "`glassllm init --out DIR`");
}

namespace {

struct TraceArgs {
  std::vector<std::string> stop;  // --stop, any number of times
  std::string dir;                // "": the bundled model
  std::string prompt, out, html, attention = "repeat_kv", layers, heads;
  std::size_t steps = 16, top_k = 5;
  int precision = 6;
  bool grads = false, attention_only = false, allow_nonfinite = false;
};

std::vector<std::size_t> parse_indices(const std::string& text, const char* what,
                                       std::size_t limit) {
  std::vector<std::size_t> out;
  if (text.empty()) return out;
  // "a-b" is the range a, a+1, ..., b: "0-8" for the 9 query heads of
  // SmolLM2-135M's first three K/V groups.
  std::string listed;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t comma = text.find(',', pos);
    std::string item = text.substr(pos, comma == std::string::npos ? comma : comma - pos);
    std::size_t dash = item.find('-', 1);
    if (dash != std::string::npos) {
      std::int64_t lo = parse_ids(item.substr(0, dash), what).at(0);
      std::int64_t hi = parse_ids(item.substr(dash + 1), what).at(0);
      if (hi < lo)
        throw std::invalid_argument(std::string(what) + ": range '" + item +
                                    "' runs backwards");
      // Checked before the range is listed: 0-9999999999 would list ten
      // billion numbers first.
      if (lo < 0 || std::uint64_t(hi) >= limit)
        throw std::invalid_argument(std::string(what) + ": range '" + item +
                                    "' is out of range [0, " + std::to_string(limit) +
                                    ")");
      for (std::int64_t v = lo; v <= hi; ++v)
        listed += (listed.empty() ? "" : ",") + std::to_string(v);
    } else {
      listed += (listed.empty() ? "" : ",") + item;
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  for (std::int64_t v : parse_ids(listed, what)) {
    if (v < 0 || std::size_t(v) >= limit)
      throw std::invalid_argument(std::string(what) + ": " + std::to_string(v) +
                                  " is out of range [0, " + std::to_string(limit) + ")");
    out.push_back(std::size_t(v));
  }
  return out;
}

}  // namespace

namespace {

// Everything the command line says that can be checked before the model is
// read.
void check_trace_args(const TraceArgs& a, const std::string& dir) {
  if (a.prompt.empty()) throw std::invalid_argument("trace: --prompt is empty");
  if (a.out.empty() && a.html.empty())
    throw std::invalid_argument(
        "trace: nowhere to write; pass --out FILE.json, --html FILE.html "
        "or both");
  if (!a.out.empty() && !a.html.empty() && same_file(a.out, a.html))
    throw std::invalid_argument("--out and --html are the same file " + a.out +
                                "; give each its own path");
  for (const std::string* path : {&a.out, &a.html})
    if (!path->empty())
      refuse_output_over_inputs(path == &a.out ? "--out" : "--html", *path,
                                checkpoint_files(dir));
}

// Each step keeps its attention snapshots: per layer and head, T x T
// probabilities for the prefill, then up to max_len per decode step, as
// doubles and again as JSON text (about 20 bytes a number).
void check_trace_fits(const TraceArgs& a, const GlassLM& model) {
  const Config& cfg = model.config();
  const double T = std::min<double>(double(cfg.max_len), double(a.prompt.size()));
  const double keys = std::min<double>(double(cfg.max_len), T + double(a.steps));
  const double per_head = T * T + double(a.steps) * keys;
  check_fits_in_memory(
      "a trace of " + std::to_string(a.steps) + " steps",
      28.0 * per_head * double(cfg.n_layers) * double(cfg.n_heads) * (a.grads ? 2 : 1) +
          preallocated_cache_bytes(cfg, model.dtype()),
      "trace fewer --steps, or fewer --layers and --heads");
}

TraceOptions trace_options(const TraceArgs& a, const Config& cfg) {
  TraceOptions opt;
  opt.layers = parse_indices(a.layers, "--layers", cfg.n_layers);
  opt.heads = parse_indices(a.heads, "--heads", cfg.n_heads);
  opt.precision = a.precision;
  opt.top_k = a.top_k;
  opt.grads = a.grads;
  opt.vectors = !a.attention_only;
  return opt;
}

// One line per file written, then the continuation as text.
void print_trace_summary(const TraceArgs& a, const Tracer& tracer, Attention attention,
                         const std::string& continuation, bool ended) {
  std::size_t decode = 0, resets = 0;
  for (const TraceStep& s : tracer.steps()) {
    decode += s.kind == "decode";
    resets += s.kind == "window_reset";
  }
  for (const std::string& path : {a.out, a.html}) {
    if (path.empty()) continue;
    std::printf(
        "wrote %s: %zu steps (1 prefill, %zu decode, %zu window reset), %s path, %zu "
        "bytes\n",
        printable(path).c_str(), tracer.steps().size(), decode, resets,
        attention_name(attention), std::size_t(std::filesystem::file_size(path)));
  }
  const std::string shown = cut_at_stop(continuation, a.stop);
  std::cout << "continuation: " << printable(shown, true)
            << (ended                                ? " (then the end-of-text token)"
                : shown.size() < continuation.size() ? " (then a --stop string)"
                                                     : "")
            << "\n";
}

int trace(const TraceArgs& a) {
  const std::string dir = a.dir.empty() ? bundled_model_dir() : a.dir;
  check_trace_args(a, dir);
  const Attention attention = parse_attention(a.attention);
  Checkpoint ckpt = load_model("trace", dir, std::nullopt, a.allow_nonfinite);
  GlassLM& model = ckpt.model;
  model.attention = attention;
  if (!ckpt.tokenizer && !ckpt.hf_tokenizer)
    throw std::invalid_argument(
        "trace: " + dir +
        " has no glassllm_tokenizer.json or tokenizer.json; a text "
        "prompt needs one");
  check_trace_fits(a, model);
  const TraceOptions opt = trace_options(a, model.config());

  // The character tokenizer of GlassLM's own models, or a Hugging Face one.
  const bool hf = !ckpt.tokenizer;
  std::vector<std::int64_t> prompt =
      hf ? ckpt.hf_tokenizer->encode(a.prompt) : ckpt.tokenizer->encode(a.prompt);
  auto token_text = [&ckpt, hf](std::int64_t id) {
    return hf ? ckpt.hf_tokenizer->token_text(id) : ckpt.tokenizer->token_text(id);
  };
  // The text after the prompt, for --stop and the line printed at the end.
  const ContinuationText continuation_of =
      hf ? continuation_text(*ckpt.hf_tokenizer, prompt.size())
         : continuation_text(*ckpt.tokenizer, prompt.size());
  Tracer tracer(opt, token_text);
  GenerateOptions gen;
  gen.max_new_tokens = a.steps + 1;  // the prefill's token, then one per decode step
  gen.eos_token_ids = ckpt.eos_token_ids;  // an answer that ends ends the trace
  gen.stop = stop_at_strings(continuation_of, a.stop);
  gen.record_graph = a.grads;
  gen.on_step = [&](const Tensor&, std::int64_t next) {
    tracer.set_next_token(next);
    if (a.grads)  // the weights' gradients are not part of the trace
      for (auto& [name, w] : model.named_parameters()) w.zero_grad();
  };
  std::vector<std::int64_t> out = model.generate(prompt, gen);
  if (!a.out.empty()) tracer.write(a.out);
  if (!a.html.empty())
    write_file_safely(a.html,
                      inspector_page(tracer.to_json(), page_model_or_refusal(dir)));

  const bool ended =
      out.size() > prompt.size() &&
      std::count(ckpt.eos_token_ids.begin(), ckpt.eos_token_ids.end(), out.back());
  if (ended) out.pop_back();  // the end-of-text token is not part of the text
  print_trace_summary(a, tracer, model.attention, continuation_of(out), ended);
  return 0;
}

}  // namespace

Command register_trace(CLI::App& app) {
  auto a = std::make_shared<TraceArgs>();
  CLI::App* sub = app.add_subcommand(
      "trace",
      "Generate from a prompt and record every step (tokens, per-layer attention "
      "snapshots, top-k, cache, op graph) as JSON for the inspector.");
  sub->add_option("dir", a->dir, "Checkpoint folder (default: the bundled model)");
  sub->add_option("--prompt", a->prompt, "Text to continue")->required();
  sub->add_option("--out", a->out, "Output .json file");
  sub->add_option("--html", a->html,
                  "Also (or instead) write the inspector as one self-contained .html "
                  "page holding the trace (and, when this glassllm has the WebAssembly "
                  "engine, the model, to generate live in the page)");
  add_whole(sub, "--steps", a->steps,
            "Most decode steps after the prefill (fewer when the model writes its "
            "end-of-text token)",
            0, 100000);
  sub->add_option("--stop", a->stop,
                  "Stop once the generated text contains STRING; may be given more than "
                  "once")
      ->allow_extra_args(false);
  sub->add_option("--attention", a->attention, attention_help)->capture_default_str();
  sub->add_flag("--grads", a->grads,
                "Also record d log p(next token) / d snapshot for every snapshot");
  sub->add_flag("--attention-only", a->attention_only,
                "Record only the attention scores and weights: no residual, q, k, v or "
                "attention-output vectors (a smaller page; the inspector's Q\u00b7K view "
                "then has no vectors to show)");
  sub->add_option("--layers", a->layers,
                  "Blocks to snapshot, e.g. 0,3 or 0-5 (default: all)");
  sub->add_option("--heads", a->heads,
                  "Query heads to snapshot, e.g. 0,2 or 0-8 (default: all)");
  add_whole(sub, "--precision", a->precision, "Significant digits (0: exact)", 0, 17);
  add_whole(sub, "--top-k", a->top_k, "Next-token candidates per step", 1, kMaxSize);
  add_allow_nonfinite(sub, a->allow_nonfinite);
  return {sub, [a] { return trace(*a); }};
}

}  // namespace glassllm::cli
