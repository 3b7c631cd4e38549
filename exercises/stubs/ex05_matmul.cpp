// ex05_matmul.cpp: Exercise 5, the backward of batched matmul.
// Task, shapes and hints: docs/exercises/ex05-matmul.md. Grade it with
//   ctest --test-dir build -L ex05      (or build/exercises/glassllm_exercises 5)
#include "exercises/exercises.h"

namespace glassllm::exercises {

// doc:begin task
Tensor my_matmul(const Tensor& a, const Tensor& b) {
  if (a.ndim() < 2 || b.ndim() < 2)
    throw std::invalid_argument("my_matmul: both operands need at least 2 axes, got " +
                                shape_str(a.shape()) + " and " + shape_str(b.shape()));
  return custom_op(
      "my_matmul", {a, b},
      [](const std::vector<Tensor>& in) { return matmul(in[0], in[1]); },
      [](const std::vector<Tensor>& in, const Tensor& out,
         const Tensor& dout) -> std::vector<Tensor> {
        // TODO(exercise 5): return {da, db}. a [..., n, k], b [..., k, m],
        // dout [..., n, m]. Work out da[n, k] and db[k, m] for one batch entry,
        // write them as matmuls (transpose(t, -2, -1) swaps the last two
        // axes), then sum broadcast batch axes back (sum_to_shape, exercise 2).
        throw NotImplemented(5);
      });
}
// doc:end task

}  // namespace glassllm::exercises
