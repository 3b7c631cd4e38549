// kv_cache_walkthrough.cpp: prefill a prompt into the K/V cache, decode one
// more token through it, and compare that token's logits with a full forward
// over the whole sequence. Quoted by the docs' page on heads, GQA and the
// K/V cache.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "glassllm/model/model.h"

using namespace glassllm;

int main() {
  // doc:begin model
  // A tiny model so that the example runs instantly: 2 query heads share
  // 1 K/V head (GQA), head_dim = 8 / 2 = 4. float64, so that the only
  // difference left between the two paths is rounding.
  Config cfg;
  cfg.vocab_size = 16;
  cfg.d_model = 8;
  cfg.n_layers = 1;
  cfg.n_heads = 2;
  cfg.n_kv_heads = 1;
  cfg.max_len = 8;
  GlassLM model(cfg, 0, DType::float64);
  // doc:end model

  // doc:begin decode
  no_grad guard;  // inference: record no graph
  Cache cache = model.new_cache();
  model.forward({4, 5, 6}, &cache);  // prefill: positions 0..2 enter the cache
  // One new token at position 3; start must equal the cache's length (3).
  Tensor step = model.forward({7}, &cache, 3);  // [1, 1, 16]
  Tensor full = model.forward({4, 5, 6, 7});    // [1, 4, 16], no cache
  // doc:end decode

  // doc:begin compare
  // The cache keeps Hkv = 1 head of K (after RoPE) for 4 positions: [B, Hkv, m, hd].
  std::printf("%s\n", shape_str(cache[0].k().shape()).c_str());
  // The last row of each: the logits that predict the token after 7.
  const double* incremental = step.data<double>();                    // row 0 of 1
  const double* complete = full.data<double>() + 3 * cfg.vocab_size;  // row 3 of 4
  double max_diff = 0;
  bool close = true;  // np.allclose(incremental, complete, atol=1e-7)
  for (std::size_t i = 0; i < cfg.vocab_size; ++i) {
    double d = std::fabs(incremental[i] - complete[i]);
    max_diff = std::max(max_diff, d);
    close = close && d <= 1e-7 + 1e-5 * std::fabs(complete[i]);
  }
  std::printf("%s\n", close ? "True" : "False");
  std::printf("max difference: %.2e\n", max_diff);
  // doc:end compare
  return 0;
}
