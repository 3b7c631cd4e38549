// causal_attention.cpp: one head's causal attention computed by hand with the
// engine's ops, the same rule with a cache's absolute positions, and the
// property the rule buys: a later token cannot change an earlier logit.
// Quoted by docs/06-causal-attention.md.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

#include "glassllm/engine/ops.h"
#include "glassllm/fast/blas.h"
#include "glassllm/model/model.h"

using namespace glassllm;

namespace {

double max_abs_diff(const Tensor& a, const Tensor& b) {
  std::vector<double> x = a.to_vector(), y = b.to_vector();
  double d = 0;
  for (std::size_t i = 0; i < x.size(); ++i) d = std::max(d, std::fabs(x[i] - y[i]));
  return d;
}

// Prints a [1, 1, R, m] tensor as R rows, with each row's sum.
void print_probs(const Tensor& p) {
  const std::size_t R = p.dim(2), m = p.dim(3);
  for (std::size_t r = 0; r < R; ++r) {
    double row_sum = 0;
    std::printf("  ");
    for (std::size_t j = 0; j < m; ++j) {
      double v = p.at({0, 0, r, j});
      row_sum += v;
      std::printf(v == 0 ? "     0 " : "%.4f ", v);
    }
    std::printf("  sum %.6f\n", row_sum);
  }
}

}  // namespace

int main() {
  set_blas_threads(1);
  no_grad guard;

  // doc:begin probs
  // One head of a 5-token prompt: q and k are [B, H, T, hd] = [1, 1, 5, 8].
  const std::size_t T = 5, hd = 8;
  Tensor q = randn({1, 1, T, hd}, 1, DType::float64);
  Tensor k = randn({1, 1, T, hd}, 2, DType::float64);
  Tensor scores = matmul_t(q, k) / std::sqrt(double(hd));    // [1, 1, 5, 5]
  Tensor probs = causal_softmax(scores, /*query_start=*/0);  // keys from position 0
  std::printf(
      "probs = causal_softmax(q k^T / sqrt(8)), rows = queries, columns = keys:\n");
  print_probs(probs);
  // doc:end probs

  // doc:begin masked_fill
  // The same probabilities the long way: build the mask (1 above the
  // diagonal, key j > query t), fill those scores with -inf, softmax.
  Tensor hidden = zeros({T, T}, DType::float64);
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t j = t + 1; j < T; ++j) hidden.mutable_data<double>()[t * T + j] = 1;
  Tensor probs2 =
      softmax(masked_fill(scores, hidden, -std::numeric_limits<double>::infinity()));
  double diff = max_abs_diff(probs, probs2);
  bool zeros_agree = true;  // every hidden entry is exactly 0 in both
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t j = t + 1; j < T; ++j)
      zeros_agree =
          zeros_agree && probs.at({0, 0, t, j}) == 0 && probs2.at({0, 0, t, j}) == 0;
  std::printf(
      "softmax(masked_fill(scores, mask, -inf)): max difference %.1e,\n"
      "  hidden entries exactly 0 in both: %s\n",
      diff, zeros_agree ? "yes" : "no");
  // doc:end masked_fill

  // doc:begin positions
  // With a cache: 3 positions are cached (keys at 0, 1, 2) and 2 new tokens
  // arrive at positions 3 and 4. The new queries' scores are [1, 1, 2, 5];
  // query 0 sits at position 3 and sees keys 0..3, query 1 (position 4) all 5.
  Tensor q_new = slice(q, 2, 3, 5);  // [1, 1, 2, 8]: the queries at positions 3, 4
  Tensor tail = causal_softmax(matmul_t(q_new, k) / std::sqrt(double(hd)),
                               /*query_start=*/3, /*key_start=*/0);
  std::printf("queries at positions 3 and 4 against the keys at 0..4:\n");
  print_probs(tail);
  // doc:end positions

  // doc:begin later_token
  // A tiny model; two prompts that differ only in their last token.
  Config cfg;
  cfg.vocab_size = 16;
  cfg.d_model = 16;
  cfg.n_layers = 2;
  cfg.n_heads = 2;
  cfg.n_kv_heads = 1;
  cfg.d_ff = 32;
  cfg.max_len = 8;
  GlassLM model(cfg, 0);                      // float32
  Tensor a = model.forward({3, 1, 4, 1, 5});  // [1, 5, 16]
  Tensor b = model.forward({3, 1, 4, 1, 9});
  const std::size_t V = cfg.vocab_size, row_bytes = V * sizeof(float);
  for (std::size_t t = 0; t < T; ++t) {
    bool equal =
        std::memcmp(a.data<float>() + t * V, b.data<float>() + t * V, row_bytes) == 0;
    std::printf("logits at position %zu: %s\n", t, equal ? "bit-identical" : "different");
  }
  // doc:end later_token
  return 0;
}
