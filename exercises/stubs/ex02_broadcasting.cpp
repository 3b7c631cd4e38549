// ex02_broadcasting.cpp: Exercise 2, the backward of broadcasting: summing a
// gradient back to an input's shape.
// Task, shapes and hints: docs/exercises/ex02-broadcasting.md. Grade it with
//   ctest --test-dir build -L ex02      (or build/exercises/glassllm_exercises 2)
// Write it with sum() (ops.h), not with the engine's sum_to_shape: that one
// is what you are rebuilding.
#include "exercises/exercises.h"

namespace glassllm::exercises {

// doc:begin task
Tensor my_sum_to_shape(const Tensor& g, const Shape& shape) {
  // TODO(exercise 2): g has the broadcast shape; return the sum of g over
  //  1. the leading axes that `shape` does not have (sum them away), then
  //  2. the axes where `shape` has length 1 but g does not (keepdims=true).
  // Beware: sum(x, {}) sums every axis; skip a step whose axis list is empty.
  throw NotImplemented(2);
}

Tensor my_mul_broadcast(const Tensor& a, const Tensor& b) {
  return custom_op(
      "my_mul_broadcast", {a, b},
      [](const std::vector<Tensor>& in) { return mul(in[0], in[1]); },
      [](const std::vector<Tensor>& in, const Tensor& out,
         const Tensor& dout) -> std::vector<Tensor> {
        // TODO(exercise 2): dout has the broadcast shape. Return {da, db},
        // each of its input's own shape (use my_sum_to_shape).
        throw NotImplemented(2);
      });
}
// doc:end task

}  // namespace glassllm::exercises
