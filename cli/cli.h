// cli.h (private): the command-line tool's subcommands. Each file of cli/
// (and bench/bench.cpp) registers its subcommands on the tool's CLI::App,
// with their options, and runs them; main.cpp only calls the register_*
// functions below, parses, and runs the one chosen. A command returns the
// process's exit status and throws on bad input: main prints the message on
// one line and exits with the status its kind of error gives (2 bad command
// line, 3 bad input file, 4 too large for memory, 5 cannot write an output;
// docs/errors-and-safety.md).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "glassllm/io/checkpoint.h"
#include "glassllm/io/tokenizer.h"
#include "glassllm/model/model.h"

namespace CLI {
class App;
}

namespace glassllm::cli {

/// A registered subcommand: `app` is CLI11's subcommand (true once the user
/// chose it), `run` runs it with the options parsed into it.
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

Command register_gradcheck(CLI::App& app);  // cli/gradcheck.cpp
Command register_init(CLI::App& app);       // cli/model.cpp
Command register_forward(CLI::App& app);    // cli/model.cpp
Command register_grads(CLI::App& app);      // cli/model.cpp
Command register_check(CLI::App& app);      // cli/check.cpp
Command register_generate(CLI::App& app);   // cli/model.cpp
Command register_tokenize(CLI::App& app);   // cli/tokenize.cpp
Command register_trace(CLI::App& app);      // cli/trace.cpp
Command register_inspector(CLI::App& app);  // cli/inspector.cpp
Command register_memory(CLI::App& app);     // cli/memory.cpp
Command register_bench(CLI::App& app);      // bench/bench.cpp
Command register_train(CLI::App& app);      // cli/train.cpp
Command register_eval(CLI::App& app);       // cli/train.cpp

/// The memory allocator this tool runs on (cli/allocator.cpp): "mimalloc
/// 2.0.9" when it was linked in, else "the C library's malloc".
std::string allocator_name();
/// Sets the allocator's options; main() calls it first.
void tune_allocator();

/// The help text of every --attention option.
inline constexpr const char* attention_help = "K/V sharing path: repeat_kv or grouped";

/// The attention inspector (viewer/) as one self-contained HTML page, with
/// empty <script type="application/json"> elements id="trace" (for a trace)
/// and id="model" (for the model the engine runs). Generated at build time by
/// cmake/viewer_page.cmake.
std::string_view viewer_page_template();
/// Whether that page holds the WebAssembly engine (scripts/build-wasm.sh was
/// run before this binary was built).
bool viewer_page_has_engine();
/// The largest model.safetensors a page holds and runs (viewer/live.js has
/// the same limit): base64 makes the page 4/3 of it, and the engine holds it
/// twice while loading. The demo model is 3.2 MiB.
inline constexpr std::uintmax_t kPageModelLimit = std::uintmax_t(16) << 20;
/// The inspector page with `trace_json` and `model_json` (either may be
/// empty) embedded, ready to open from disk. Every '<' of the JSON is written
/// \u003c (so no token text can close the script element or open a comment
/// in it), as are U+2028 and U+2029. cli/inspector.cpp.
std::string inspector_page(std::string_view trace_json, std::string_view model_json = {});
/// The model element's JSON for a checkpoint folder: its config.json,
/// glassllm_tokenizer.json and model.safetensors (base64). Throws
/// std::invalid_argument naming why the page cannot run it: no engine in
/// this binary, a Hugging Face tokenizer.json, sharded weights, or weights
/// over kPageModelLimit.
std::string page_model_json(const std::string& dir);
/// For `trace --html`: page_model_json(dir), or "" without the engine, or
/// {"refused": why} (the page shows why it cannot generate live) after one
/// note on stderr.
std::string page_model_or_refusal(const std::string& dir);
/// The bundled model's folder: models/demo in the source tree this binary was
/// built from, else <prefix>/share/glassllm/models/demo beside an installed
/// binary (<prefix>/bin/glassllm). Throws naming both places if neither exists.
std::string bundled_model_dir();

/// The shape of an attention-only stack: what `glassllm memory` and the
/// benchmark run one decode step of (batch 1).
struct StackShape {
  std::size_t layers, heads, kv_heads, head_dim, ctx;
};
/// One preallocated KVCache of ctx positions per layer, holding `filled`
/// positions of random keys and values (the same random block in every layer).
Cache filled_caches(const StackShape& s, std::size_t filled, DType dtype);

/// load_checkpoint for `command`: with allow_nonfinite, prints one warning
/// line on stderr per weight holding nan or inf ("glassllm forward: warning:
/// ckpt/model.safetensors: weight 'lm_head.weight' has nan at index [3, 17];
/// outputs will not be finite"). `weights`: how the projections are kept
/// (load_checkpoint's; float32 for every command but forward and generate).
/// cli/model.cpp.
Checkpoint load_model(const std::string& command, const std::string& dir,
                      std::optional<DType> dtype, bool allow_nonfinite,
                      std::optional<WeightType> weights = WeightType::f32);
/// The files of a checkpoint folder (and the folder): a command's outputs
/// may not be any of them (refuse_output_over_inputs, files.h).
std::vector<std::string> checkpoint_files(const std::string& dir);
/// Adds --allow-nonfinite (load_model's allow_nonfinite) to a subcommand.
void add_allow_nonfinite(CLI::App* sub, bool& flag);
/// The text generated after the prompt: given every token so far (the
/// prompt's first), what the new ones add to the printed text.
using ContinuationText = std::function<std::string(const std::vector<std::int64_t>&)>;
/// With the character tokenizer: the new tokens (after the first
/// `prompt_len`) decoded. `tokenizer` must outlive the function.
ContinuationText continuation_text(const Tokenizer& tokenizer, std::size_t prompt_len);
/// With a Hugging Face tokenizer: decode(all) with the decoded prompt taken
/// off its front, special tokens (BOS, EOS) left out. Decoding the new tokens
/// alone could lose a space: SentencePiece's decoder strips the one its first
/// token starts with ("▁world" alone is "world"). `tokenizer` must outlive
/// the function.
ContinuationText continuation_text(const HFTokenizer& tokenizer, std::size_t prompt_len);
/// --stop for generate and trace: GenerateOptions::stop that is true once
/// the continuation's text contains one of `stops` (empty strings are
/// refused: "--stop: the string is empty"); nullptr for no stops.
std::function<bool(const std::vector<std::int64_t>&)> stop_at_strings(
    ContinuationText text, const std::vector<std::string>& stops);
/// `text` up to, not including, the first of `stops` it contains.
std::string cut_at_stop(const std::string& text, const std::vector<std::string>& stops);

/// Parses "4,5,6" into ids; throws naming the bad entry.
std::vector<std::int64_t> parse_ids(const std::string& text, const char* what);

}  // namespace glassllm::cli
