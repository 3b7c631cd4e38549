// ex10_grouped_attention.cpp: Exercise 10, grouped-query attention without
// copying K or V.
// Task, shapes and hints: docs/exercises/ex10-grouped-attention.md. Grade it with
//   ctest --test-dir build -L ex10      (or build/exercises/glassllm_exercises 10)
// The grader installs your function as GlassLM::custom_attention (model.h)
// and compares the model's logits and gradients with the repeat_kv path.
#include <cmath>
#include <limits>

#include "exercises/exercises.h"

namespace glassllm::exercises {

// doc:begin task
Tensor my_grouped_attention(const Tensor& q, const Tensor& keys, const Tensor& values,
                            std::size_t query_start, std::size_t key_start) {
  // TODO(exercise 10): q [B, H, T, hd], keys and values [B, Hkv, m, hd] ->
  // out [B, H, T, hd], built from ops (so the engine differentiates it),
  // never calling repeat_kv:
  //  1. reshape q to [B, Hkv, G*T, hd] (G = H / Hkv; why does no element move?)
  //  2. scores = q k^T / sqrt(hd) (matmul_t)
  //  3. hide key j from row r iff key_start + j > query_start + (r % T):
  //     a [G*T, m] mask (from_vector), masked_fill with -infinity, softmax
  //  4. @ values, reshape back to [B, H, T, hd]
  throw NotImplemented(10);
}
// doc:end task

}  // namespace glassllm::exercises
