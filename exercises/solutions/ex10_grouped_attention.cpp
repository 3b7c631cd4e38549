// ex10_grouped_attention.cpp (reference solution): grouped-query attention
// without copying K or V. Exercise page: docs/exercises/ex10-grouped-attention.md.
#include <cmath>
#include <limits>

#include "exercises/exercises.h"

namespace glassllm::exercises {

// doc:begin solution
Tensor my_grouped_attention(const Tensor& q, const Tensor& keys, const Tensor& values,
                            std::size_t query_start, std::size_t key_start) {
  const std::size_t B = q.dim(0), H = q.dim(1), T = q.dim(2), hd = q.dim(3);
  const std::size_t Hkv = keys.dim(1), m = keys.dim(2), G = H / Hkv;
  auto i = [](std::size_t v) { return std::int64_t(v); };
  // Heads i*G .. i*G+G-1 share K/V head i and sit next to each other in q, so
  // [B, H, T, hd] -> [B, Hkv, G*T, hd] moves no element: row g*T + t of group
  // i is query t of head i*G + g.
  Tensor q_grouped = reshape(q, {i(B), i(Hkv), i(G * T), i(hd)});
  // [B, Hkv, G*T, hd] @ [B, Hkv, m, hd]^T -> [B, Hkv, G*T, m]
  Tensor scores = matmul_t(q_grouped, keys) * (1.0 / std::sqrt(double(hd)));
  // The causal mask, [G*T, m]: row r is query t = r % T, at position
  // query_start + t; key j is at key_start + j; hidden iff the key is later.
  std::vector<double> hidden(G * T * m);
  for (std::size_t r = 0; r < G * T; ++r)
    for (std::size_t j = 0; j < m; ++j)
      hidden[r * m + j] = key_start + j > query_start + r % T ? 1.0 : 0.0;
  Tensor mask = from_vector(hidden, {G * T, m}, q.dtype());
  // -inf before the softmax: hidden keys get probability exactly 0.
  Tensor probs =
      softmax(masked_fill(scores, mask, -std::numeric_limits<double>::infinity()), -1);
  // [B, Hkv, G*T, m] @ [B, Hkv, m, hd] -> [B, Hkv, G*T, hd] -> [B, H, T, hd]
  return reshape(matmul(probs, values), {i(B), i(H), i(T), i(hd)});
}
// doc:end solution

}  // namespace glassllm::exercises
