// ex06_repeat_kv.cpp (reference solution): the backward of repeat_kv sums the
// gradients of the copies. Exercise page: docs/exercises/ex06-repeat-kv.md.
#include "exercises/exercises.h"

namespace glassllm::exercises {

// doc:begin solution
Tensor my_repeat_kv(const Tensor& x, std::size_t n_rep) {
  return custom_op(
      "my_repeat_kv", {x},
      [n_rep](const std::vector<Tensor>& in) { return repeat_kv(in[0], n_rep); },
      [n_rep](const std::vector<Tensor>& in, const Tensor& out, const Tensor& dout) {
        const Shape& s = in[0].shape();  // [B, Hkv, T, D]
        auto i = [](std::size_t v) { return std::int64_t(v); };
        // Output head i*n_rep + r is copy r of head i, and heads of one group
        // are neighbours, so this reshape moves no element:
        // [B, Hkv*n_rep, T, D] -> [B, Hkv, n_rep, T, D]
        Tensor g = reshape(dout, {i(s[0]), i(s[1]), i(n_rep), i(s[2]), i(s[3])});
        // Each copy sent its own gradient back: add them up.
        return std::vector<Tensor>{sum(g, {2})};  // -> [B, Hkv, T, D]
      });
}
// doc:end solution

}  // namespace glassllm::exercises
