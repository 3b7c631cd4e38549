// model.cpp: `glassllm init`, `forward`, `grads` and `generate`: making a
// checkpoint, and running one on token ids or on text.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>

#include "cli/cli.h"
#include "glassllm/engine/ops.h"
#include "glassllm/model/checkpoint.h"
#include "glassllm/model/npy.h"

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

namespace {

struct InitArgs {
  std::string out;
  std::size_t vocab_size = 0;  // 0: the default tokenizer's
  std::size_t d_model = 128, n_layers = 4, n_heads = 4, n_kv_heads = 2, d_ff = 384,
              max_len = 128;
  std::uint64_t seed = 0;
  std::string dtype = "float32";
};

struct ForwardArgs {
  std::string dir, tokens, out, attention = "repeat_kv";
  std::optional<std::string> dtype;
};

struct GradsArgs {
  std::string dir, tokens, targets, out, attention = "repeat_kv";
  std::optional<std::string> dtype;
};

struct GenerateArgs {
  std::string dir, prompt, attention = "repeat_kv", cache = "concat";
  std::size_t max_new_tokens = 64, top_k = 0;
  double temperature = 0.0;
  std::uint64_t seed = 0;
};

Checkpoint load(const std::string& dir, const std::optional<std::string>& dtype,
                const std::string& attention) {
  Checkpoint ckpt =
      load_checkpoint(dir, dtype ? std::optional(parse_dtype(*dtype)) : std::nullopt);
  ckpt.model.attention = parse_attention(attention);
  return ckpt;
}

int init(const InitArgs& a) {
  Tokenizer tokenizer;
  Config cfg;
  cfg.vocab_size = a.vocab_size ? a.vocab_size : tokenizer.vocab_size();
  cfg.d_model = a.d_model;
  cfg.n_layers = a.n_layers;
  cfg.n_heads = a.n_heads;
  cfg.n_kv_heads = a.n_kv_heads;
  cfg.d_ff = a.d_ff;
  cfg.max_len = a.max_len;
  cfg.validate();
  GlassLM model(cfg, a.seed, parse_dtype(a.dtype));
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
  Checkpoint ckpt = load(a.dir, a.dtype, a.attention);
  std::vector<std::int64_t> tokens = parse_ids(a.tokens, "--tokens");
  Tensor logits;
  {
    no_grad guard;
    logits = ckpt.model.forward(tokens);  // [1, T, vocab]
  }
  write_npy(a.out, logits);
  std::printf("wrote %s: logits %s %s (%s path)\n", a.out.c_str(),
              shape_str(logits.shape()).c_str(), dtype_name(logits.dtype()),
              attention_name(ckpt.model.attention));
  return 0;
}

int grads(const GradsArgs& a) {
  Checkpoint ckpt = load(a.dir, a.dtype, a.attention);
  std::vector<std::int64_t> tokens = parse_ids(a.tokens, "--tokens");
  std::vector<std::int64_t> targets = parse_ids(a.targets, "--targets");
  if (targets.size() != tokens.size())
    throw std::invalid_argument("grads: " + std::to_string(tokens.size()) +
                                " tokens but " + std::to_string(targets.size()) +
                                " targets; give one target per token");
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
// the BOS token; special tokens are left out of what is printed.
int generate_hf(const GenerateArgs& a, Checkpoint& ckpt, const GenerateOptions& opt) {
  const HFTokenizer& tok = *ckpt.hf_tokenizer;
  std::vector<std::int64_t> prompt = tok.encode(a.prompt);
  std::vector<std::int64_t> out = ckpt.model.generate(prompt, opt);
  std::cout << tok.decode(out, true) << "\n";
  return 0;
}

int generate(const GenerateArgs& a) {
  Checkpoint ckpt = load(a.dir, std::nullopt, a.attention);
  if (ckpt.hf_tokenizer && !ckpt.tokenizer) {
    if (a.prompt.empty()) throw std::invalid_argument("generate: --prompt is empty");
    if (a.temperature < 0)
      throw std::invalid_argument("generate: --temperature must be >= 0");
    GenerateOptions opt;
    opt.max_new_tokens = a.max_new_tokens;
    opt.temperature = a.temperature;
    opt.top_k = a.top_k;
    opt.seed = a.seed;
    opt.cache_mode = parse_cache_mode(a.cache);
    return generate_hf(a, ckpt, opt);
  }
  if (!ckpt.tokenizer)
    throw std::invalid_argument(
        "generate: " + a.dir +
        " has no glassllm_tokenizer.json or tokenizer.json; text needs a tokenizer");
  const Tokenizer& tok = *ckpt.tokenizer;
  if (a.prompt.empty()) throw std::invalid_argument("generate: --prompt is empty");
  if (std::size_t unknown = tok.count_unknown(a.prompt))
    std::fprintf(stderr,
                 "generate: %zu character(s) of the prompt are not in the vocabulary; "
                 "they are shown as \xEF\xBF\xBD\n",
                 unknown);
  GenerateOptions opt;
  opt.max_new_tokens = a.max_new_tokens;
  opt.temperature = a.temperature;
  opt.top_k = a.top_k;
  opt.seed = a.seed;
  opt.cache_mode = parse_cache_mode(a.cache);
  if (a.temperature < 0)
    throw std::invalid_argument("generate: --temperature must be >= 0");
  std::vector<std::int64_t> prompt = tok.encode(a.prompt);
  std::vector<std::int64_t> out = ckpt.model.generate(prompt, opt);
  std::vector<std::int64_t> continuation(out.begin() + std::ptrdiff_t(prompt.size()),
                                         out.end());
  std::cout << tok.decode(prompt) << tok.decode(continuation) << "\n";
  return 0;
}

}  // namespace

Command register_init(CLI::App& app) {
  auto a = std::make_shared<InitArgs>();
  CLI::App* sub =
      app.add_subcommand("init", "Write a randomly initialised checkpoint folder.");
  sub->add_option("--out", a->out, "Checkpoint folder to write")->required();
  sub->add_option("--vocab-size", a->vocab_size,
                  "Vocabulary size (default: the character tokenizer's)");
  sub->add_option("--d-model", a->d_model, "Residual width")->capture_default_str();
  sub->add_option("--n-layers", a->n_layers, "Transformer blocks")->capture_default_str();
  sub->add_option("--n-heads", a->n_heads, "Query heads")->capture_default_str();
  sub->add_option("--n-kv-heads", a->n_kv_heads,
                  "Key/value heads (must divide --n-heads)")
      ->capture_default_str();
  sub->add_option("--d-ff", a->d_ff, "Hidden width of the MLP")->capture_default_str();
  sub->add_option("--max-len", a->max_len, "Longest window")->capture_default_str();
  sub->add_option("--seed", a->seed, "Initialisation seed")->capture_default_str();
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
  return {sub, [a] { return grads(*a); }};
}

Command register_generate(CLI::App& app) {
  auto a = std::make_shared<GenerateArgs>();
  CLI::App* sub = app.add_subcommand("generate", "Continue a text prompt.");
  sub->add_option("dir", a->dir, "Checkpoint folder (with its tokenizer)")->required();
  sub->add_option("--prompt", a->prompt, "Text to continue")->required();
  sub->add_option("--max-new-tokens", a->max_new_tokens, "Tokens to generate")
      ->capture_default_str();
  sub->add_option("--temperature", a->temperature, "0: greedy; > 0: sample")
      ->capture_default_str();
  sub->add_option("--top-k", a->top_k, "Sample among the k most likely tokens (0: all)")
      ->capture_default_str();
  sub->add_option("--seed", a->seed, "Sampling seed")->capture_default_str();
  sub->add_option("--attention", a->attention, attention_help)->capture_default_str();
  sub->add_option("--cache", a->cache, "concat or preallocated")->capture_default_str();
  return {sub, [a] { return generate(*a); }};
}

}  // namespace glassllm::cli
