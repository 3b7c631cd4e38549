// ex04_softmax.cpp: Exercise 4, the backward of softmax from its formula.
// Task, shapes and hints: docs/exercises/ex04-softmax.md. Grade it with
//   ctest --test-dir build -L ex04      (or build/exercises/glassllm_exercises 4)
#include "exercises/exercises.h"

namespace glassllm::exercises {

// doc:begin task
Tensor my_softmax(const Tensor& x, int axis) {
  return custom_op(
      "my_softmax", {x},
      [axis](const std::vector<Tensor>& in) { return softmax(in[0], axis); },
      [axis](const std::vector<Tensor>& in, const Tensor& y,
             const Tensor& dout) -> std::vector<Tensor> {
        // TODO(exercise 4): return {dx}. Derive dy_i/dx_j for y = softmax(x),
        // then contract it with dout. Only y (the output) is needed; use
        // mul, sub and sum(..., {axis}, true), not softmax's own backward.
        throw NotImplemented(4);
      });
}
// doc:end task

}  // namespace glassllm::exercises
