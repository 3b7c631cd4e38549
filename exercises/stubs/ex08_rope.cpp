// ex08_rope.cpp: Exercise 8, the backward of the rotary position embedding.
// Task, shapes and hints: docs/exercises/ex08-rope.md. Grade it with
//   ctest --test-dir build -L ex08      (or build/exercises/glassllm_exercises 8)
#include <cmath>

#include "exercises/exercises.h"

namespace glassllm::exercises {

// doc:begin task
Tensor my_rope(const Tensor& x, std::size_t start, double theta) {
  return custom_op(
      "my_rope", {x},
      [=](const std::vector<Tensor>& in) { return rope(in[0], start, theta); },
      [=](const std::vector<Tensor>& in, const Tensor& out,
          const Tensor& dout) -> std::vector<Tensor> {
        // TODO(exercise 8): return {dx}, x's shape [..., T, hd].
        // 1. Build cos and sin, [T, hd] (from_vector): angle(p, i) =
        //    p * theta^(-2i/hd) for i < hd/2, p = start + t; columns i and
        //    i + hd/2 share the angle.
        // 2. Write y's two halves in terms of x's halves, differentiate, and
        //    assemble dx with slice(), concat() and neg().
        throw NotImplemented(8);
      });
}
// doc:end task

}  // namespace glassllm::exercises
