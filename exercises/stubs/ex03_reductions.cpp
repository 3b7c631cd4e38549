// ex03_reductions.cpp: Exercise 3, the backward of mean and max along one axis.
// Task, shapes and hints: docs/exercises/ex03-reductions.md. Grade it with
//   ctest --test-dir build -L ex03      (or build/exercises/glassllm_exercises 3)
#include "exercises/exercises.h"

namespace glassllm::exercises {

namespace {

// The axis as a non-negative number; throws naming the op if out of range.
int normalise_axis(const char* op, const Tensor& x, int axis) {
  int n = int(x.ndim());
  if (axis < -n || axis >= n)
    throw std::invalid_argument(std::string(op) + ": axis " + std::to_string(axis) +
                                " is out of range for shape " + shape_str(x.shape()));
  return axis < 0 ? axis + n : axis;
}

}  // namespace

// doc:begin task
Tensor my_mean(const Tensor& x, int axis, bool keepdims) {
  int ax = normalise_axis("my_mean", x, axis);
  return custom_op(
      "my_mean", {x},
      [=](const std::vector<Tensor>& in) { return mean(in[0], {ax}, keepdims); },
      [=](const std::vector<Tensor>& in, const Tensor& out,
          const Tensor& dout) -> std::vector<Tensor> {
        // TODO(exercise 3): return {dx}, x's shape. dout lacks axis `ax`
        // unless keepdims: unsqueeze(dout, ax) puts it back with length 1,
        // and broadcasting (e.g. zeros_like(x) + ...) copies it along the axis.
        throw NotImplemented(3);
      });
}

Tensor my_max(const Tensor& x, int axis, bool keepdims) {
  int ax = normalise_axis("my_max", x, axis);
  return custom_op(
      "my_max", {x},
      [=](const std::vector<Tensor>& in) { return max(in[0], ax, keepdims); },
      [=](const std::vector<Tensor>& in, const Tensor& out,
          const Tensor& dout) -> std::vector<Tensor> {
        // TODO(exercise 3): return {dx}: dout goes to the entries equal to the
        // max (split equally between ties), 0 elsewhere. where(c, a, b) picks
        // a where c is nonzero: x - max is exactly 0 at the max.
        throw NotImplemented(3);
      });
}
// doc:end task

}  // namespace glassllm::exercises
