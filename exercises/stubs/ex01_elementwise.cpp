// ex01_elementwise.cpp: Exercise 1, the backward of mul, exp and silu.
// Task, shapes and hints: docs/exercises/ex01-elementwise.md. Grade it with
//   ctest --test-dir build -L ex01      (or build/exercises/glassllm_exercises 1)
// Each op is a custom_op (custom_op.h): the forward is given, and you write
// the backward. It receives the inputs, the forward's output and dout (the
// gradient of the loss w.r.t. that output) and returns one gradient per
// input, of that input's shape.
#include "exercises/exercises.h"

namespace glassllm::exercises {

// doc:begin task
Tensor my_mul(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape())
    throw std::invalid_argument("my_mul: shapes " + shape_str(a.shape()) + " and " +
                                shape_str(b.shape()) +
                                " differ; broadcasting is exercise 2 (my_mul_broadcast)");
  return custom_op(
      "my_mul", {a, b}, [](const std::vector<Tensor>& in) { return mul(in[0], in[1]); },
      [](const std::vector<Tensor>& in, const Tensor& out,
         const Tensor& dout) -> std::vector<Tensor> {
        // TODO(exercise 1): return {da, db}, with d(a*b)/da = b, d(a*b)/db = a.
        throw NotImplemented(1);
      });
}

Tensor my_exp(const Tensor& x) {
  return custom_op(
      "my_exp", {x}, [](const std::vector<Tensor>& in) { return exp(in[0]); },
      [](const std::vector<Tensor>& in, const Tensor& out,
         const Tensor& dout) -> std::vector<Tensor> {
        // TODO(exercise 1): return {dx}; d e^x / dx = e^x, which is `out`.
        throw NotImplemented(1);
      });
}

Tensor my_silu(const Tensor& x) {
  return custom_op(
      "my_silu", {x}, [](const std::vector<Tensor>& in) { return silu(in[0]); },
      [](const std::vector<Tensor>& in, const Tensor& out,
         const Tensor& dout) -> std::vector<Tensor> {
        // TODO(exercise 1): return {dx}; silu(x) = x * sigmoid(x). Derive
        // d silu / dx (sigmoid' = sigmoid * (1 - sigmoid)).
        throw NotImplemented(1);
      });
}
// doc:end task

}  // namespace glassllm::exercises
