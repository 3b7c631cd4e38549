// generation_window.cpp: greedy generation past the end of the window. A tiny
// untrained model with max_len 8 generates 20 tokens; every chosen token is
// checked against the argmax of a fresh full forward over the last max_len
// tokens, which is what the window rule promises. Quoted by
// docs/07-generation.md.
#include <cstdio>
#include <string>
#include <vector>

#include "glassllm/engine/ops.h"
#include "glassllm/model/model.h"

using namespace glassllm;

int main() {
  // doc:begin generate
  Config cfg;
  cfg.vocab_size = 16;
  cfg.d_model = 16;
  cfg.n_layers = 2;
  cfg.n_heads = 2;
  cfg.n_kv_heads = 1;
  cfg.d_ff = 32;
  cfg.max_len = 8;
  GlassLM model(cfg, 0, DType::float64);
  // Untrained weights drawn at the usual scale (0.02) give nearly flat
  // logits and greedy decoding soon repeats one token; larger random weights
  // make the choices vary, which makes the check below worth more.
  for (const auto& [name, w] : model.named_parameters())
    if (name.find("norm") == std::string::npos)
      model.parameter(name) = (w * 40.0).detach();
  std::vector<std::int64_t> prompt = {3, 1, 4, 1, 5};
  GenerateOptions opt;
  opt.max_new_tokens = 20;
  opt.temperature = 0;  // greedy: the argmax every step
  std::vector<std::int64_t> out = model.generate(prompt, opt);  // 5 + 20 ids
  // doc:end generate

  // doc:begin check
  // Replay: before step s the sequence holds P + s tokens. Its next token must
  // be the argmax of a plain forward (no cache, positions from 0) over the
  // last max_len of them.
  no_grad guard;
  const std::size_t P = prompt.size(), L = cfg.max_len, V = cfg.vocab_size;
  std::size_t held = 0;  // the cache's length in generate(), replayed
  bool all_equal = true;
  for (std::size_t s = 0; s < opt.max_new_tokens; ++s) {
    const std::size_t n = P + s, from = n > L ? n - L : 0;
    std::vector<std::int64_t> window(out.begin() + from, out.begin() + n);
    Tensor logits = model.forward(window);  // [1, n - from, V]
    const double* last = logits.data<double>() + (window.size() - 1) * V;
    std::int64_t best = 0;  // argmax, lowest id among ties (as generate)
    for (std::size_t i = 1; i < V; ++i)
      if (last[i] > last[best]) best = std::int64_t(i);
    // What generate() ran to get these logits (its rule, replayed):
    const char* how;
    if (s == 0) {
      how = "prefill the prompt";
      held = P;
    } else if (held == L) {
      how = "cache full: re-run window from 0";
    } else {
      how = "one token through the cache";
      ++held;
    }
    all_equal = all_equal && best == out[n];
    std::printf(
        "step %2zu: %2zu tokens, window %2zu..%2zu, %-35s -> %2lld  fresh argmax %2lld "
        "%s\n",
        s + 1, n, from, n - 1, how, (long long)out[n], (long long)best,
        best == out[n] ? "ok" : "DIFFERENT");
  }
  std::printf("every token equals the fresh forward's argmax: %s\n",
              all_equal ? "yes" : "no");
  // doc:end check
  return 0;
}
