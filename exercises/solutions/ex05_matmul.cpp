// ex05_matmul.cpp (reference solution): the backward of batched matmul with
// broadcast batch axes. Exercise page: docs/exercises/ex05-matmul.md.
#include "exercises/exercises.h"

namespace glassllm::exercises {

// doc:begin solution
Tensor my_matmul(const Tensor& a, const Tensor& b) {
  if (a.ndim() < 2 || b.ndim() < 2)
    throw std::invalid_argument("my_matmul: both operands need at least 2 axes, got " +
                                shape_str(a.shape()) + " and " + shape_str(b.shape()));
  return custom_op(
      "my_matmul", {a, b},
      [](const std::vector<Tensor>& in) { return matmul(in[0], in[1]); },
      [](const std::vector<Tensor>& in, const Tensor& out, const Tensor& dout) {
        const Tensor &a = in[0], &b = in[1];
        // out[n, m] = sum_k a[n, k] b[k, m], per batch entry:
        //   da = dout @ b^T   [.., n, m] @ [.., m, k] -> [.., n, k]
        //   db = a^T @ dout   [.., k, n] @ [.., n, m] -> [.., k, m]
        // A batch axis that was broadcast is summed back (exercise 2).
        Tensor da = matmul(dout, transpose(b, -2, -1));
        Tensor db = matmul(transpose(a, -2, -1), dout);
        return std::vector<Tensor>{sum_to_shape(da, a.shape()),
                                   sum_to_shape(db, b.shape())};
      });
}
// doc:end solution

}  // namespace glassllm::exercises
