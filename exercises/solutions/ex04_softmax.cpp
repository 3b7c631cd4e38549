// ex04_softmax.cpp (reference solution): the backward of softmax from its
// formula. Exercise page: docs/exercises/ex04-softmax.md.
#include "exercises/exercises.h"

namespace glassllm::exercises {

// doc:begin solution
Tensor my_softmax(const Tensor& x, int axis) {
  return custom_op(
      "my_softmax", {x},
      [axis](const std::vector<Tensor>& in) { return softmax(in[0], axis); },
      [axis](const std::vector<Tensor>& in, const Tensor& y, const Tensor& dout) {
        // dy_i/dx_j = y_i (delta_ij - y_j), so
        // dx_j = sum_i dout_i y_i (delta_ij - y_j) = y_j (dout_j - sum_i dout_i y_i).
        // The backward needs only the output y, which custom_op keeps for us.
        Tensor dot = sum(dout * y, {axis}, /*keepdims=*/true);
        return std::vector<Tensor>{y * (dout - dot)};
      });
}
// doc:end solution

}  // namespace glassllm::exercises
