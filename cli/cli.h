// cli.h (private): the command-line tool's subcommands. main.cpp parses the
// arguments (it is the one file that includes CLI11) and calls one of these;
// each returns the process's exit status and throws on bad input (main prints
// the message on one line and exits 1).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "glassllm/model/model.h"

namespace glassllm::cli {

struct GradcheckArgs {
  std::string op;  // "" = every op
  double eps = 1e-6, atol = 1e-5, rtol = 1e-3;
};
int gradcheck(const GradcheckArgs& args);

struct InitArgs {
  std::string out;
  std::size_t vocab_size = 0;  // 0: the default tokenizer's
  std::size_t d_model = 128, n_layers = 4, n_heads = 4, n_kv_heads = 2, d_ff = 384,
              max_len = 128;
  std::uint64_t seed = 0;
  std::string dtype = "float32";
};
int init(const InitArgs& args);

struct ForwardArgs {
  std::string dir, tokens, out, attention = "repeat_kv";
  std::optional<std::string> dtype;
};
int forward(const ForwardArgs& args);

struct GradsArgs {
  std::string dir, tokens, targets, out, attention = "repeat_kv";
  std::optional<std::string> dtype;
};
int grads(const GradsArgs& args);

struct CheckArgs {
  std::string dir;
  std::size_t prompt_len = 8, steps = 8;
};
int check(const CheckArgs& args);

struct GenerateArgs {
  std::string dir, prompt, attention = "repeat_kv", cache = "concat";
  std::size_t max_new_tokens = 64, top_k = 0;
  double temperature = 0.0;
  std::uint64_t seed = 0;
};
int generate(const GenerateArgs& args);

struct BenchArgs {
  bool json = false;
  int runs = 0;  // 0: each benchmark's default
};
int bench(const BenchArgs& args);

// `train`: every option optional, so that --resume can tell the flags given
// (which override the run's saved options) from the ones left out.
struct TrainArgs {
  std::string out;
  std::optional<std::string> task, optimizer, dtype;
  std::optional<std::size_t> steps, batch_size, warmup, log_every, eval_every,
      eval_batches, save_every;
  std::optional<double> lr, min_lr_ratio, weight_decay, momentum, clip;
  std::optional<std::uint64_t> seed;
  std::optional<std::size_t> d_model, n_layers, n_heads, n_kv_heads, d_ff, max_len;
  std::optional<int> threads;
  bool resume = false;
};
int train(const TrainArgs& args);

struct EvalArgs {
  std::string dir;
  std::optional<std::string> task;  // default: the run's (trainer_state.json)
  std::optional<std::uint64_t> seed;
  std::size_t batches = 8, batch_size = 16;
  std::optional<int> threads;
};
int eval(const EvalArgs& args);
struct TraceArgs {
  std::string dir;  // "": the bundled model
  std::string prompt, out, html, attention = "repeat_kv", layers, heads;
  std::size_t steps = 16, top_k = 5;
  int precision = 6;
  bool grads = false;
};
int trace(const TraceArgs& args);

/// The attention inspector (viewer/) as one self-contained HTML page, with an
/// empty <script type="application/json" id="trace"> element for a trace.
/// Generated at build time by cmake/viewer_page.cmake.
std::string_view viewer_page_template();

/// The inspector page with `trace_json` embedded, ready to open from disk.
/// Every '<' of the JSON is written \u003c (so no token text can close the
/// script element or open a comment in it), as are U+2028 and U+2029.
std::string trace_page(std::string_view trace_json);

/// The bundled model's folder: models/demo in the source tree this binary was
/// built from, else <prefix>/share/glassllm/models/demo beside an installed
/// binary (<prefix>/bin/glassllm). Throws naming both places if neither exists.
std::string bundled_model_dir();

struct MemoryArgs {
  std::string preset, dtype = "float32";
  std::size_t n_layers = 4, n_heads = 4, n_kv_heads = 2, head_dim = 32;
  std::size_t ctx = 0;  // 0: the preset's context, else 128
};
int memory(const MemoryArgs& args);

/// The shape of an attention-only stack: what `glassllm memory` and the
/// benchmark run one decode step of (batch 1).
struct StackShape {
  std::size_t layers, heads, kv_heads, head_dim, ctx;
};
/// One preallocated KVCache of ctx positions per layer, holding `filled`
/// positions of random keys and values (the same random block in every layer).
Cache filled_caches(const StackShape& s, std::size_t filled, DType dtype);

/// Parses "4,5,6" into ids; throws naming the bad entry.
std::vector<std::int64_t> parse_ids(const std::string& text, const char* what);

}  // namespace glassllm::cli
