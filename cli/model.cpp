// model.cpp: `glassllm init`, `forward`, `grads` and `generate`: making a
// checkpoint, and running one on token ids or on text.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>

#include "cli/cli.h"
#include "cli/options.h"
#include "glassllm/engine/ops.h"
#include "glassllm/io/budget.h"
#include "glassllm/io/checkpoint.h"
#include "glassllm/io/files.h"
#include "glassllm/io/npy.h"

namespace glassllm::cli {

std::vector<std::int64_t> parse_ids(const std::string& text, const char* what) {
  std::vector<std::int64_t> ids;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t comma = text.find(',', pos);
    std::string item =
        text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    std::size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size())
      throw std::invalid_argument(std::string(what) + ": '" + item +
                                  "' is not an integer; expected ids like 4,5,6");
    ids.push_back(v);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return ids;
}

Checkpoint load_model(const std::string& command, const std::string& dir,
                      std::optional<DType> dtype, bool allow_nonfinite,
                      std::optional<WeightType> weights) {
  Checkpoint ckpt = load_checkpoint(dir, dtype, allow_nonfinite, weights);
  for (const std::string& line : ckpt.nonfinite)
    std::cerr << "glassllm " << command << ": warning: " << printable(line)
              << "; outputs will not be finite\n";
  return ckpt;
}

std::vector<std::string> checkpoint_files(const std::string& dir) {
  // Every entry of the folder, not only the files GlassLM writes: a Hugging
  // Face folder's shards, index, tokenizer.json and tokenizer_config.json
  // are read too, and a user's own file there is theirs. same_file compares
  // inodes, so a symlink or hard link to any of them counts as well.
  const std::filesystem::path root(dir);
  std::vector<std::string> files = {(root / "model.safetensors").string(),
                                    (root / "config.json").string(),
                                    (root / "glassllm_tokenizer.json").string(), dir};
  std::error_code ec;
  for (std::filesystem::directory_iterator it(root, ec), end; !ec && it != end;
       it.increment(ec))
    files.push_back(it->path().string());
  return files;
}

void add_allow_nonfinite(CLI::App* sub, bool& flag) {
  sub->add_flag("--allow-nonfinite", flag,
                "Load weights holding nan or inf (to see what they do); warns for each");
}

// --weights, for the commands that only run the model (forward, generate).
void add_weights(CLI::App* sub, std::optional<std::string>& weights) {
  sub->add_option("--weights", weights,
                  "Keep the projections' weights in bf16, f16 or f32 (default: as the "
                  "checkpoint stores them); bf16 and f16 run with float32 activations");
}

ContinuationText continuation_text(const Tokenizer& tokenizer, std::size_t prompt_len) {
  return [&tokenizer, prompt_len](const std::vector<std::int64_t>& tokens) {
    return tokenizer.decode(std::vector<std::int64_t>(
        tokens.begin() + std::ptrdiff_t(prompt_len), tokens.end()));
  };
}

ContinuationText continuation_text(const HFTokenizer& tokenizer, std::size_t prompt_len) {
  return [&tokenizer, prompt_len](const std::vector<std::int64_t>& tokens) {
    const std::vector<std::int64_t> prompt(tokens.begin(),
                                           tokens.begin() + std::ptrdiff_t(prompt_len));
    const std::string all = tokenizer.decode(tokens, true);
    const std::string before = tokenizer.decode(prompt, true);
    if (all.starts_with(before)) return all.substr(before.size());
    // The decoded prompt is not a prefix (a character cut between the
    // prompt's last token and the first new one): the new tokens alone.
    return tokenizer.decode(
        std::vector<std::int64_t>(tokens.begin() + std::ptrdiff_t(prompt_len),
                                  tokens.end()),
        true);
  };
}

std::function<bool(const std::vector<std::int64_t>&)> stop_at_strings(
    ContinuationText text, const std::vector<std::string>& stops) {
  for (const std::string& s : stops)
    if (s.empty()) throw std::invalid_argument("--stop: the string is empty");
  if (stops.empty()) return nullptr;
  return [text = std::move(text), stops](const std::vector<std::int64_t>& tokens) {
    const std::string t = text(tokens);
    return cut_at_stop(t, stops).size() < t.size();
  };
}

std::string cut_at_stop(const std::string& text, const std::vector<std::string>& stops) {
  std::size_t end = text.size();
  for (const std::string& s : stops) end = std::min(end, text.find(s));
  return text.substr(0, end);
}

namespace {

struct InitArgs {
  std::string out;
  std::size_t vocab_size = 0;  // 0: the default tokenizer's
  Config sizes;                // kSizeFlags' fields, the design's by default
  std::uint64_t seed = 0;
  std::string dtype = "float32";
};

struct ForwardArgs {
  std::string dir, tokens, out, attention = "repeat_kv";
  std::optional<std::string> dtype, weights;
  bool allow_nonfinite = false;
};

struct GradsArgs {
  std::string dir, tokens, targets, out, attention = "repeat_kv";
  std::optional<std::string> dtype;
  bool allow_nonfinite = false;
};

struct GenerateArgs {
  std::vector<std::string> stop;  // --stop, any number of times
  std::string dir, prompt, attention = "repeat_kv", cache = "concat";
  std::size_t max_new_tokens = 64, top_k = 0;
  double temperature = 0.0;
  std::uint64_t seed = 0;
  std::optional<std::string> weights;
  bool allow_nonfinite = false;
};

// Every option is checked (names, the output path) before the checkpoint is
// read, so a typo costs nothing.
// --weights: absent, the projections stay as the file stores them (16 bits
// for a bf16 or f16 checkpoint), unless --dtype asks for a dtype of weights.
Checkpoint load(const std::string& command, const std::string& dir,
                const std::optional<std::string>& dtype, const std::string& attention,
                bool allow_nonfinite, const std::optional<std::string>& weights = "f32") {
  const Attention path = parse_attention(attention);
  const std::optional<DType> as =
      dtype ? std::optional(parse_dtype(*dtype)) : std::nullopt;
  const std::optional<WeightType> kept =
      weights ? std::optional(parse_weight_type(*weights)) : std::nullopt;
  Checkpoint ckpt = load_model(command, dir, as, allow_nonfinite, kept);
  ckpt.model.attention = path;
  return ckpt;
}

int init(const InitArgs& a) {
  Tokenizer tokenizer;
  Config cfg = a.sizes;
  cfg.vocab_size = a.vocab_size ? a.vocab_size : tokenizer.vocab_size();
  cfg.validate();
  const DType dtype = parse_dtype(a.dtype);
  // Never over a checkpoint (or a run) the user already has.
  for (const char* file : {"config.json", "model.safetensors"})
    if (std::filesystem::exists(std::filesystem::path(a.out) / file))
      throw std::invalid_argument("--out " + a.out + " already holds a checkpoint (" +
                                  file + "); choose a new folder");
  // The weights, and their bytes once more while they are written.
  check_fits_in_memory("a model of these sizes (vocab " + std::to_string(cfg.vocab_size) +
                           ", d_model " + std::to_string(cfg.d_model) + ", " +
                           std::to_string(cfg.n_layers) + " layers, d_ff " +
                           std::to_string(cfg.d_ff) + ")",
                       2 * parameter_bytes(cfg, dtype), "choose smaller sizes");
  GlassLM model(cfg, a.seed, dtype);
  // The character tokenizer fits only its own vocabulary size; a model of
  // another size is saved without one (commands taking token ids need none).
  bool with_tokenizer = cfg.vocab_size == tokenizer.vocab_size();
  save_checkpoint(a.out, model, with_tokenizer ? &tokenizer : nullptr);
  std::printf("wrote %s: %zu parameters, %s, vocab %zu%s\n", a.out.c_str(),
              model.parameter_count(), dtype_name(model.dtype()), cfg.vocab_size,
              with_tokenizer
                  ? ""
                  : " (no tokenizer: vocab differs from the character tokenizer's)");
  return 0;
}

int forward(const ForwardArgs& a) {
  refuse_output_over_inputs("--out", a.out, checkpoint_files(a.dir));
  std::vector<std::int64_t> tokens = parse_ids(a.tokens, "--tokens");
  Checkpoint ckpt =
      load("forward", a.dir, a.dtype, a.attention, a.allow_nonfinite, a.weights);
  Tensor logits;
  {
    no_grad guard;
    logits = ckpt.model.forward(tokens);  // [1, T, vocab]
  }
  write_npy(a.out, logits);
  const GlassLM& model = ckpt.model;
  std::printf("wrote %s: logits %s %s (%s path%s%s)\n", a.out.c_str(),
              shape_str(logits.shape()).c_str(), dtype_name(logits.dtype()),
              attention_name(model.attention), model.weights16 ? ", weights " : "",
              model.weights16 ? weight_type_name(model.weights16->type) : "");
  return 0;
}

int grads(const GradsArgs& a) {
  refuse_output_over_inputs("--out", a.out, checkpoint_files(a.dir));
  std::vector<std::int64_t> tokens = parse_ids(a.tokens, "--tokens");
  std::vector<std::int64_t> targets = parse_ids(a.targets, "--targets");
  if (targets.size() != tokens.size())
    throw std::invalid_argument("grads: " + std::to_string(tokens.size()) +
                                " tokens but " + std::to_string(targets.size()) +
                                " targets; give one target per token");
  // -100 marks a position the loss ignores; with every position ignored the
  // loss is 0 by convention and every gradient is 0: not what anyone wants.
  if (std::all_of(targets.begin(), targets.end(), [](auto t) { return t == -100; }))
    throw std::invalid_argument(
        "--targets: every target is -100 (ignored); give at least one token id");
  Checkpoint ckpt = load("grads", a.dir, a.dtype, a.attention, a.allow_nonfinite);
  for (std::size_t i = 0; i < targets.size(); ++i)
    if (targets[i] != -100 &&
        (targets[i] < 0 || std::uint64_t(targets[i]) >= ckpt.model.config().vocab_size))
      throw std::invalid_argument(
          "--targets: " + std::to_string(targets[i]) + " at position " +
          std::to_string(i) + " is not a token id; expected 0 to " +
          std::to_string(ckpt.model.config().vocab_size - 1) + ", or -100 to ignore it");
  NamedTensors params = ckpt.model.named_parameters();
  for (auto& [name, w] : params) w.requires_grad_();
  Tensor loss = ckpt.model.loss({tokens}, {targets});
  loss.backward();
  NamedTensors gradients;
  for (auto& [name, w] : params)
    gradients.emplace_back(name, w.grad().defined() ? w.grad() : zeros_like(w));
  write_safetensors(a.out, gradients, {{"loss", std::to_string(loss.item())}});
  std::printf("wrote %s: gradients of %zu weights; mean cross-entropy %.9g\n",
              a.out.c_str(), gradients.size(), loss.item());
  return 0;
}

// generate with a Hugging Face tokenizer (tokenizer.json): its template adds
// the BOS token; special tokens (and a --stop string) are left out of what is
// printed.
int generate_hf(const GenerateArgs& a, Checkpoint& ckpt, GenerateOptions opt) {
  const HFTokenizer& tok = *ckpt.hf_tokenizer;
  std::vector<std::int64_t> prompt = tok.encode(a.prompt);
  const ContinuationText text = continuation_text(tok, prompt.size());
  // A model whose vocab_size is larger than the tokenizer's (padded
  // embeddings) may sample an id the tokenizer has no text for: stopped at
  // that token, not after the whole generation.
  auto stop_at_string = stop_at_strings(text, a.stop);
  opt.stop = [&tok, &a, stop_at_string](const std::vector<std::int64_t>& tokens) {
    const std::int64_t id = tokens.back();
    if (id < 0 || std::size_t(id) >= tok.vocab_size())
      throw std::runtime_error(a.dir + ": the model generated token id " +
                               std::to_string(id) + ", which tokenizer.json (" +
                               std::to_string(tok.vocab_size()) +
                               " tokens) has no text for");
    return stop_at_string && stop_at_string(tokens);
  };
  std::vector<std::int64_t> out = ckpt.model.generate(prompt, opt);
  // The tokenizer's text comes from a file: no control character reaches the
  // terminal (newlines and tabs are text).
  std::cout << printable(tok.decode(prompt, true) + cut_at_stop(text(out), a.stop), true)
            << "\n";
  return 0;
}

// A preallocated cache holds max_len positions from the start; a
// concatenated one grows to at most max_len.
void check_cache_fits(const GenerateArgs& a, const GlassLM& model, CacheMode cache_mode) {
  const Config& cfg = model.config();
  Config used = cfg;
  if (cache_mode == CacheMode::concat)
    used.max_len = std::min<std::size_t>(cfg.max_len, a.prompt.size() + a.max_new_tokens);
  check_fits_in_memory("the K/V cache of " + std::to_string(used.max_len) +
                           " positions (max_position_embeddings " +
                           std::to_string(cfg.max_len) + ")",
                       preallocated_cache_bytes(used, model.dtype()),
                       "use a checkpoint with a smaller max_position_embeddings");
}

GenerateOptions generate_options(const GenerateArgs& a, const Checkpoint& ckpt,
                                 CacheMode cache_mode) {
  GenerateOptions opt;
  opt.max_new_tokens = a.max_new_tokens;
  opt.temperature = a.temperature;
  opt.top_k = a.top_k;
  opt.seed = a.seed;
  opt.cache_mode = cache_mode;
  opt.eos_token_ids = ckpt.eos_token_ids;
  return opt;
}

int generate(const GenerateArgs& a) {
  if (a.prompt.empty()) throw std::invalid_argument("generate: --prompt is empty");
  const CacheMode cache_mode = parse_cache_mode(a.cache);
  Checkpoint ckpt =
      load("generate", a.dir, std::nullopt, a.attention, a.allow_nonfinite, a.weights);
  check_cache_fits(a, ckpt.model, cache_mode);
  GenerateOptions opt = generate_options(a, ckpt, cache_mode);
  if (ckpt.hf_tokenizer && !ckpt.tokenizer) return generate_hf(a, ckpt, opt);
  if (!ckpt.tokenizer)
    throw std::invalid_argument(
        "generate: " + a.dir +
        " has no glassllm_tokenizer.json or tokenizer.json; text needs a tokenizer");
  const Tokenizer& tok = *ckpt.tokenizer;
  if (std::size_t unknown = tok.count_unknown(a.prompt))
    std::fprintf(stderr,
                 "generate: %zu character(s) of the prompt are not in the vocabulary; "
                 "they are shown as \xEF\xBF\xBD\n",
                 unknown);
  std::vector<std::int64_t> prompt = tok.encode(a.prompt);
  opt.stop = stop_at_strings(continuation_text(tok, prompt.size()), a.stop);
  std::vector<std::int64_t> out = ckpt.model.generate(prompt, opt);
  std::vector<std::int64_t> continuation(out.begin() + std::ptrdiff_t(prompt.size()),
                                         out.end());
  // The end-of-text token ends the answer; it is not part of the text.
  if (!continuation.empty() && std::count(ckpt.eos_token_ids.begin(),
                                          ckpt.eos_token_ids.end(), continuation.back()))
    continuation.pop_back();
  // Nor is a --stop string. The tokenizer's text comes from a file: no
  // control character reaches the terminal (newlines and tabs are text).
  std::cout << printable(
                   tok.decode(prompt) + cut_at_stop(tok.decode(continuation), a.stop),
                   true)
            << "\n";
  return 0;
}

}  // namespace

Command register_init(CLI::App& app) {
  auto a = std::make_shared<InitArgs>();
  CLI::App* sub =
      app.add_subcommand("init", "Write a randomly initialised checkpoint folder.");
  sub->add_option("--out", a->out, "Checkpoint folder to write")->required();
  add_whole(sub, "--vocab-size", a->vocab_size,
            "Vocabulary size (default: the character tokenizer's)", 1, kMaxSize)
      ->default_str("");
  for (const SizeFlag& size : kSizeFlags)
    add_whole(sub, size.flag, a->sizes.*size.field, size.help, 1, kMaxSize);
  add_whole(sub, "--seed", a->seed, "Initialisation seed", 0, UINT64_MAX);
  sub->add_option("--dtype", a->dtype, "float32 or float64")->capture_default_str();
  return {sub, [a] { return init(*a); }};
}

Command register_forward(CLI::App& app) {
  auto a = std::make_shared<ForwardArgs>();
  CLI::App* sub = app.add_subcommand(
      "forward", "Write the logits [1, T, vocab] of token ids as .npy.");
  sub->add_option("dir", a->dir, "Checkpoint folder")->required();
  sub->add_option("--tokens", a->tokens, "Token ids, e.g. 4,5,6")->required();
  sub->add_option("--out", a->out, "Output .npy file")->required();
  sub->add_option("--attention", a->attention, attention_help)->capture_default_str();
  sub->add_option("--dtype", a->dtype, "Convert the weights to float32 or float64");
  add_weights(sub, a->weights);
  add_allow_nonfinite(sub, a->allow_nonfinite);
  return {sub, [a] { return forward(*a); }};
}

Command register_grads(CLI::App& app) {
  auto a = std::make_shared<GradsArgs>();
  CLI::App* sub = app.add_subcommand(
      "grads",
      "Write the gradient of the mean cross-entropy w.r.t. every weight, by name.");
  sub->add_option("dir", a->dir, "Checkpoint folder")->required();
  sub->add_option("--tokens", a->tokens, "Token ids, e.g. 4,5,6")->required();
  sub->add_option("--targets", a->targets, "One target id per token (-100: ignored)")
      ->required();
  sub->add_option("--out", a->out, "Output .safetensors file")->required();
  sub->add_option("--attention", a->attention, attention_help)->capture_default_str();
  sub->add_option("--dtype", a->dtype, "Convert the weights to float32 or float64");
  add_allow_nonfinite(sub, a->allow_nonfinite);
  return {sub, [a] { return grads(*a); }};
}

Command register_generate(CLI::App& app) {
  auto a = std::make_shared<GenerateArgs>();
  CLI::App* sub = app.add_subcommand("generate", "Continue a text prompt.");
  sub->add_option("dir", a->dir, "Checkpoint folder (with its tokenizer)")->required();
  sub->add_option("--prompt", a->prompt, "Text to continue")->required();
  add_whole(sub, "--max-new-tokens", a->max_new_tokens,
            "Most tokens to generate (fewer when the model writes its end-of-text "
            "token, config.json's eos_token_id)",
            0, kMaxNewTokens);
  sub->add_option("--stop", a->stop,
                  "Stop once the generated text contains STRING (printed without it); "
                  "may be given more than once")
      ->allow_extra_args(false);
  add_real(sub, "--temperature", a->temperature, "0: greedy; > 0: sample", {0, 100});
  add_whole(sub, "--top-k", a->top_k, "Sample among the k most likely tokens (0: all)", 0,
            kMaxSize);
  add_whole(sub, "--seed", a->seed, "Sampling seed", 0, UINT64_MAX);
  sub->add_option("--attention", a->attention, attention_help)->capture_default_str();
  sub->add_option("--cache", a->cache, "concat or preallocated")->capture_default_str();
  add_weights(sub, a->weights);
  add_allow_nonfinite(sub, a->allow_nonfinite);
  return {sub, [a] { return generate(*a); }};
}

}  // namespace glassllm::cli
