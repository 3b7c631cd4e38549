// Fixtures shared by the model tests (test_model.cpp, test_generate.cpp, and
// the tiny model of test_tracer.cpp and test_reference.cpp's kPaths): a
// tiny configuration, token sequences, and small helpers on logits.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "glassllm/model/model.h"

namespace glassllm::test::model {

constexpr DType f32 = DType::float32;
constexpr DType f64 = DType::float64;
const Attention kPaths[] = {Attention::repeat_kv, Attention::grouped};
const CacheMode kModes[] = {CacheMode::concat, CacheMode::preallocated};

// A model small enough to run every split point: 4 query heads share 2 K/V
// heads (G = 2), head_dim 4.
inline Config tiny(std::size_t max_len = 16) {
  Config c;
  c.vocab_size = 16;
  c.d_model = 16;
  c.n_layers = 2;
  c.n_heads = 4;
  c.n_kv_heads = 2;
  c.d_ff = 24;
  c.max_len = max_len;
  return c;
}

// A fixed token sequence of length n: ids in [0, vocab).
inline std::vector<std::int64_t> sequence(std::size_t n, std::size_t vocab,
                                          int salt = 0) {
  std::vector<std::int64_t> s(n);
  for (std::size_t i = 0; i < n; ++i) s[i] = std::int64_t((i * 7 + 3 + salt * 5) % vocab);
  return s;
}

// A difference as "%.3g" prints it: 2.78e-17, 0.
inline std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// Rows [from, to) of the position axis of logits [B, T, V].
inline Tensor rows(const Tensor& logits, std::size_t from, std::size_t to) {
  return slice(logits, 1, std::int64_t(from), std::int64_t(to));
}

// argmax with the lowest id on ties, over the last row of logits [1, T, V].
inline std::int64_t argmax_last(const Tensor& logits) {
  std::vector<double> z = logits.to_vector();
  std::size_t V = logits.dim(-1), base = z.size() - V, best = 0;
  for (std::size_t i = 1; i < V; ++i)
    if (z[base + i] > z[base + best]) best = i;
  return std::int64_t(best);
}

// Runs `batch` through a cache: the first `prompt` positions in one prefill,
// then one position per step, and returns the logits of every position
// concatenated along T, to compare with one full forward over the batch.
inline Tensor incremental(const GlassLM& model, const TokenBatch& batch,
                          std::size_t prompt, CacheMode mode) {
  Cache cache = model.new_cache(mode);
  TokenBatch head;
  for (const auto& row : batch) head.emplace_back(row.begin(), row.begin() + prompt);
  std::vector<Tensor> parts{model.forward(head, &cache, 0)};
  for (std::size_t t = prompt; t < batch[0].size(); ++t) {
    TokenBatch step;
    for (const auto& row : batch) step.push_back({row[t]});
    parts.push_back(model.forward(step, &cache, t));
  }
  return concat(parts, 1);
}

}  // namespace glassllm::test::model
