// ex03_reductions.cpp (reference solution): the backward of mean and max
// along one axis. Exercise page: docs/exercises/ex03-reductions.md.
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

// doc:begin solution
Tensor my_mean(const Tensor& x, int axis, bool keepdims) {
  int ax = normalise_axis("my_mean", x, axis);
  return custom_op(
      "my_mean", {x},
      [=](const std::vector<Tensor>& in) { return mean(in[0], {ax}, keepdims); },
      [=](const std::vector<Tensor>& in, const Tensor& out, const Tensor& dout) {
        // Every entry along the axis counts 1/n: dx = dout / n, copied along
        // the axis. Put the reduced axis back (length 1) and let broadcasting copy.
        Tensor g = keepdims ? dout : unsqueeze(dout, ax);
        double n = double(in[0].dim(ax));
        return std::vector<Tensor>{zeros_like(in[0]) + g / n};
      });
}

Tensor my_max(const Tensor& x, int axis, bool keepdims) {
  int ax = normalise_axis("my_max", x, axis);
  return custom_op(
      "my_max", {x},
      [=](const std::vector<Tensor>& in) { return max(in[0], ax, keepdims); },
      [=](const std::vector<Tensor>& in, const Tensor& out, const Tensor& dout) {
        const Tensor& x = in[0];
        Tensor m = keepdims ? out : unsqueeze(out, ax);
        Tensor g = keepdims ? dout : unsqueeze(dout, ax);
        // 1 where x equals its max (x - m is exactly 0 there), else 0.
        Tensor is_max = where(x - m, scalar(0.0, x.dtype()), scalar(1.0, x.dtype()));
        // Ties share the gradient equally.
        Tensor count = sum(is_max, {ax}, /*keepdims=*/true);
        return std::vector<Tensor>{is_max / count * g};
      });
}
// doc:end solution

}  // namespace glassllm::exercises
