// ex07_rmsnorm.cpp: Exercise 7, the backward of RMSNorm.
// Task, shapes and hints: docs/exercises/ex07-rmsnorm.md. Grade it with
//   ctest --test-dir build -L ex07      (or build/exercises/glassllm_exercises 7)
#include "exercises/exercises.h"

namespace glassllm::exercises {

// doc:begin task
Tensor my_rmsnorm(const Tensor& x, double eps) {
  return custom_op(
      "my_rmsnorm", {x},
      [eps](const std::vector<Tensor>& in) { return rmsnorm(in[0], eps); },
      [eps](const std::vector<Tensor>& in, const Tensor& y,
            const Tensor& dout) -> std::vector<Tensor> {
        // TODO(exercise 7): return {dx}, x's shape [..., D]. y = x * r with
        // r = (mean(x^2, last axis) + eps)^(-1/2): r depends on every x_j of
        // its row. Recompute r from x (rsqrt, mean(..., {-1}, true)).
        throw NotImplemented(7);
      });
}
// doc:end task

}  // namespace glassllm::exercises
