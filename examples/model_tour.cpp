// model_tour.cpp: the default GlassLM model, seen from outside: its config,
// every weight by its Hugging Face name with its shape, the parameter count,
// and one forward pass on a short prompt. Quoted by docs/04-the-model.md.
// The model is untrained (random weights), so its guesses are noise; the
// point is the shapes.
#include <algorithm>
#include <cstdio>
#include <numeric>
#include <vector>

#include "glassllm/fast/blas.h"
#include "glassllm/io/tokenizer.h"
#include "glassllm/model/model.h"

using namespace glassllm;

int main() {
  set_blas_threads(1);  // the printed logits do not depend on the core count

  // doc:begin config
  Tokenizer tok;  // characters: 99 ids
  Config cfg;     // every other field keeps its default
  cfg.vocab_size = tok.vocab_size();
  GlassLM model(cfg, /*seed=*/0);  // float32, weights drawn from seed 0
  std::printf(
      "d_model %zu, n_layers %zu, n_heads %zu, n_kv_heads %zu, head_dim %zu, "
      "d_ff %zu, max_len %zu, vocab %zu\n",
      cfg.d_model, cfg.n_layers, cfg.n_heads, cfg.n_kv_heads, cfg.head_dim(), cfg.d_ff,
      cfg.max_len, cfg.vocab_size);
  // doc:end config

  // doc:begin params
  std::size_t total = 0;
  for (const auto& [name, w] : model.named_parameters()) {
    std::printf("%-50s %-10s %8zu\n", name.c_str(), shape_str(w.shape()).c_str(),
                w.size());
    total += w.size();
  }
  std::printf("total %zu parameters (parameter_count() says %zu), %zu bytes in float32\n",
              total, model.parameter_count(), total * 4);
  // doc:end params

  // doc:begin forward
  std::vector<std::int64_t> ids = tok.encode("Hello");  // [5] -> B = 1, T = 5
  Tensor logits;
  {
    no_grad guard;                // inference: record no graph
    logits = model.forward(ids);  // [1, 5, 99]
  }
  std::printf("ids");
  for (auto id : ids) std::printf(" %lld", (long long)id);
  std::printf(" -> logits %s %s\n", shape_str(logits.shape()).c_str(),
              dtype_name(logits.dtype()));
  // The last row, logits[0, 4, :], scores every candidate for the 6th token.
  const float* last = logits.data<float>() + (ids.size() - 1) * cfg.vocab_size;
  std::vector<std::int64_t> order(cfg.vocab_size);
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + 3, order.end(),
                    [&](auto a, auto b) { return last[a] > last[b]; });
  for (int i = 0; i < 3; ++i)
    std::printf("top %d: id %2lld '%s' logit %+.4f\n", i + 1, (long long)order[i],
                tok.token_text(order[i]).c_str(), last[order[i]]);
  // doc:end forward
  return 0;
}
