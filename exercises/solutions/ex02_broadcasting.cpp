// ex02_broadcasting.cpp (reference solution): summing a gradient back to an
// input's shape. Exercise page: docs/exercises/ex02-broadcasting.md.
#include "exercises/exercises.h"

namespace glassllm::exercises {

// doc:begin solution
Tensor my_sum_to_shape(const Tensor& g, const Shape& shape) {
  const Shape& gs = g.shape();
  if (shape.size() > gs.size())
    throw std::invalid_argument("my_sum_to_shape: " + shape_str(shape) +
                                " has more axes than the gradient " + shape_str(gs));
  // Broadcasting first prepends axes of length 1, so shape's axis i lines up
  // with g's axis lead + i.
  const std::size_t lead = gs.size() - shape.size();
  for (std::size_t i = 0; i < shape.size(); ++i)
    if (shape[i] != 1 && shape[i] != gs[lead + i])
      throw std::invalid_argument("my_sum_to_shape: " + shape_str(shape) +
                                  " does not broadcast to " + shape_str(gs));
  // 1. The prepended axes: the input had none, sum them away.
  Tensor r = g;
  std::vector<int> leading;
  for (std::size_t i = 0; i < lead; ++i) leading.push_back(int(i));
  if (!leading.empty()) r = sum(r, leading);  // careful: sum(r, {}) sums every axis
  // 2. Axes where the input had length 1 and was stretched: sum, keep as 1.
  std::vector<int> stretched;
  for (std::size_t i = 0; i < shape.size(); ++i)
    if (shape[i] == 1 && r.shape()[i] != 1) stretched.push_back(int(i));
  if (!stretched.empty()) r = sum(r, stretched, /*keepdims=*/true);
  return r;
}

Tensor my_mul_broadcast(const Tensor& a, const Tensor& b) {
  return custom_op(
      "my_mul_broadcast", {a, b},
      [](const std::vector<Tensor>& in) { return mul(in[0], in[1]); },
      [](const std::vector<Tensor>& in, const Tensor& out, const Tensor& dout) {
        // dout has the broadcast shape; each input gets its own shape back.
        return std::vector<Tensor>{my_sum_to_shape(dout * in[1], in[0].shape()),
                                   my_sum_to_shape(dout * in[0], in[1].shape())};
      });
}
// doc:end solution

}  // namespace glassllm::exercises
