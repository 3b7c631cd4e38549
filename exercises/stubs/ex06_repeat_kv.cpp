// ex06_repeat_kv.cpp: Exercise 6, the backward of repeat_kv: the summed copies.
// Task, shapes and hints: docs/exercises/ex06-repeat-kv.md. Grade it with
//   ctest --test-dir build -L ex06      (or build/exercises/glassllm_exercises 6)
#include "exercises/exercises.h"

namespace glassllm::exercises {

// doc:begin task
Tensor my_repeat_kv(const Tensor& x, std::size_t n_rep) {
  return custom_op(
      "my_repeat_kv", {x},
      [n_rep](const std::vector<Tensor>& in) { return repeat_kv(in[0], n_rep); },
      [n_rep](const std::vector<Tensor>& in, const Tensor& out,
              const Tensor& dout) -> std::vector<Tensor> {
        // TODO(exercise 6): return {dx}, x's shape [B, Hkv, T, D]. dout is
        // [B, Hkv*n_rep, T, D]; output head h is a copy of head h / n_rep.
        // Every copy sends a gradient back. (reshape to 5 axes, then sum.)
        throw NotImplemented(6);
      });
}
// doc:end task

}  // namespace glassllm::exercises
