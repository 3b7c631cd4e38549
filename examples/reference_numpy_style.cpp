// reference_numpy_style.cpp: one model computed twice, by the engine
// (GlassLM::forward: Tensor ops and the engine's own kernels) and by the
// NumPy-style reference (ReferenceModel: xtensor arrays and xtensor-blas's
// dot, glassllm/reference/reference.cpp), on both K/V paths, full and
// incremental. Quoted by docs/13-reference-in-numpy-style.md.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "glassllm/engine/ops.h"
#include "glassllm/model/model.h"
#include "glassllm/reference/reference.h"

using namespace glassllm;

namespace {

// The largest |engine - reference| over one set of logits.
double max_difference(const Tensor& engine, const ReferenceLogits& reference) {
  std::vector<double> e = engine.to_vector();
  double diff = 0;
  for (std::size_t i = 0; i < e.size(); ++i)
    diff = std::max(diff, std::fabs(e[i] - reference.values[i]));
  return diff;
}

}  // namespace

int main() {
  // doc:begin model
  Config cfg;  // the default sizes: d_model 128, 4 layers, H = 4, Hkv = 2
  cfg.vocab_size = 16;
  GlassLM model(cfg, /*seed=*/0, DType::float64);
  ReferenceModel reference(model);  // the same weights, copied into xt::xarray<double>
  no_grad guard;
  TokenBatch tokens{{4, 5, 6, 7}};
  Tensor engine_logits = model.forward(tokens);              // [1, 4, 16]
  ReferenceLogits numpy_logits = reference.forward(tokens);  // [1, 4, 16]
  std::printf("engine    logits[0, 3, :4] = %.6f %.6f %.6f %.6f\n",
              engine_logits.at({0, 3, 0}), engine_logits.at({0, 3, 1}),
              engine_logits.at({0, 3, 2}), engine_logits.at({0, 3, 3}));
  std::printf("reference logits[0, 3, :4] = %.6f %.6f %.6f %.6f\n",
              numpy_logits.at(0, 3, 0), numpy_logits.at(0, 3, 1),
              numpy_logits.at(0, 3, 2), numpy_logits.at(0, 3, 3));
  std::printf("max |engine - reference| < 1e-12: %s\n",
              max_difference(engine_logits, numpy_logits) < 1e-12 ? "yes" : "no");
  // doc:end model

  // doc:begin cache
  // Prefill three tokens, then the fourth alone, through the reference's cache,
  // and compare with the last row of the full forward above.
  ReferenceCache cache = reference.new_cache();
  reference.forward({{4, 5, 6}}, &cache, 0);
  ReferenceLogits next = reference.forward({{7}}, &cache, 3);  // [1, 1, 16]
  double diff = 0;
  for (std::size_t c = 0; c < 16; ++c)
    diff = std::max(diff, std::fabs(next.at(0, 0, c) - numpy_logits.at(0, 3, c)));
  std::printf("cache holds %zu positions; incremental == full (< 1e-12): %s\n",
              cache.length(), diff < 1e-12 ? "yes" : "no");
  // doc:end cache

  // doc:begin grouped
  model.attention = Attention::grouped;  // fold Q instead of repeating K and V
  ReferenceModel grouped(model, Attention::grouped);
  std::printf("grouped: max |engine - reference| < 1e-12: %s\n",
              max_difference(model.forward(tokens), grouped.forward(tokens)) < 1e-12
                  ? "yes"
                  : "no");
  // doc:end grouped

  return 0;
}
