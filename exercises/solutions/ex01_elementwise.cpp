// ex01_elementwise.cpp (reference solution): the backward of mul, exp and
// silu, written as custom ops. Exercise page: docs/exercises/ex01-elementwise.md.
#include "exercises/exercises.h"

namespace glassllm::exercises {

// doc:begin solution
Tensor my_mul(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape())
    throw std::invalid_argument("my_mul: shapes " + shape_str(a.shape()) + " and " +
                                shape_str(b.shape()) +
                                " differ; broadcasting is exercise 2 (my_mul_broadcast)");
  return custom_op(
      "my_mul", {a, b}, [](const std::vector<Tensor>& in) { return mul(in[0], in[1]); },
      [](const std::vector<Tensor>& in, const Tensor& out, const Tensor& dout) {
        // d(a*b)/da = b, d(a*b)/db = a, each times the upstream gradient
        return std::vector<Tensor>{dout * in[1], dout * in[0]};
      });
}

Tensor my_exp(const Tensor& x) {
  return custom_op(
      "my_exp", {x}, [](const std::vector<Tensor>& in) { return exp(in[0]); },
      [](const std::vector<Tensor>& in, const Tensor& out, const Tensor& dout) {
        // d e^x / dx = e^x: the forward's output, saved by custom_op
        return std::vector<Tensor>{dout * out};
      });
}

Tensor my_silu(const Tensor& x) {
  return custom_op(
      "my_silu", {x}, [](const std::vector<Tensor>& in) { return silu(in[0]); },
      [](const std::vector<Tensor>& in, const Tensor& out, const Tensor& dout) {
        // silu = x s, s = sigmoid(x), s' = s (1 - s):
        // d/dx = s + x s (1 - s) = s (1 + x (1 - s))
        Tensor s = sigmoid(in[0]);
        return std::vector<Tensor>{dout * s * (1.0 + in[0] * (1.0 - s))};
      });
}
// doc:end solution

}  // namespace glassllm::exercises
