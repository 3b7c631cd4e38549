// ex07_rmsnorm.cpp (reference solution): the backward of RMSNorm.
// Exercise page: docs/exercises/ex07-rmsnorm.md.
#include "exercises/exercises.h"

namespace glassllm::exercises {

// doc:begin solution
Tensor my_rmsnorm(const Tensor& x, double eps) {
  return custom_op(
      "my_rmsnorm", {x},
      [eps](const std::vector<Tensor>& in) { return rmsnorm(in[0], eps); },
      [eps](const std::vector<Tensor>& in, const Tensor& y, const Tensor& dout) {
        const Tensor& x = in[0];
        // r = (mean(x^2) + eps)^(-1/2), dr/dx_j = -r^3 x_j / D, y = x r:
        // dx_j = r dout_j - r^3 x_j / D * sum_i dout_i x_i
        //      = r (dout_j - y_j * mean_i(dout_i y_i))
        Tensor r = rsqrt(mean(x * x, {-1}, true) + eps);  // [..., 1]
        return std::vector<Tensor>{r * (dout - y * mean(dout * y, {-1}, true))};
      });
}
// doc:end solution

}  // namespace glassllm::exercises
