// naive_matmul.cpp: np.matmul as the definition writes it. See
// include/glassllm/engine/naive_matmul.h; the fast version is
// ops_matmul.cpp over glassllm/fast/blas.cpp.
#include "glassllm/engine/naive_matmul.h"

#include <stdexcept>
#include <string>
#include <vector>

#include "glassllm/engine/ops.h"

namespace glassllm {

namespace {

// Which matrix of an operand with batch shape `own` (shorter than, or
// broadcast against, `batch`) the i-th matrix of the result reads: unravel i
// over `batch`, then ravel it back over `own`, using index 0 along an axis
// where `own` has length 1 or no axis at all.
std::size_t operand_matrix(std::size_t i, const Shape& batch, const Shape& own) {
  std::size_t index = 0, stride = 1;
  for (std::size_t d = batch.size(); d-- > 0;) {
    std::size_t position = i % batch[d];
    i /= batch[d];
    std::size_t lead = batch.size() - own.size();
    if (d < lead) continue;  // an axis `own` does not have
    std::size_t length = own[d - lead];
    index += (length == 1 ? 0 : position) * stride;
    stride *= length;
  }
  return index;
}

}  // namespace

Tensor naive_matmul(const Tensor& a, const Tensor& b) {
  std::string shapes = shape_str(a.shape()) + " and " + shape_str(b.shape());
  if (a.dtype() != b.dtype() || a.ndim() == 0 || b.ndim() == 0)
    throw std::invalid_argument("naive_matmul: " + std::string(dtype_name(a.dtype())) +
                                " " + shape_str(a.shape()) + " and " +
                                dtype_name(b.dtype()) + " " + shape_str(b.shape()) +
                                ": need one dtype and at least 1 axis each");
  // [*batch_a, n, k] @ [*batch_b, k, m]; a 1-D a is one row, a 1-D b one column.
  Shape as = a.ndim() == 1 ? Shape{1, a.dim(0)} : a.shape();
  Shape bs = b.ndim() == 1 ? Shape{b.dim(0), 1} : b.shape();
  std::size_t n = as[as.size() - 2], k = as.back(), m = bs.back();
  if (bs[bs.size() - 2] != k)
    throw std::invalid_argument("naive_matmul: shapes " + shapes +
                                " are not aligned: " + std::to_string(k) +
                                " != " + std::to_string(bs[bs.size() - 2]));
  Shape batch_a(as.begin(), as.end() - 2), batch_b(bs.begin(), bs.end() - 2);
  Shape batch = broadcast_shapes(batch_a, batch_b, "naive_matmul");
  Shape out_shape = batch;  // [*batch, n, m] without the axes added for 1-D operands
  if (a.ndim() > 1) out_shape.push_back(n);
  if (b.ndim() > 1) out_shape.push_back(m);

  // doc:begin naive_matmul
  std::vector<double> A = a.to_vector(), B = b.to_vector();  // row-major
  std::vector<double> C(shape_numel(batch) * n * m);
  for (std::size_t i = 0; i < shape_numel(batch); ++i) {
    const double* Ai = A.data() + operand_matrix(i, batch, batch_a) * n * k;  // [n, k]
    const double* Bi = B.data() + operand_matrix(i, batch, batch_b) * k * m;  // [k, m]
    double* Ci = C.data() + i * n * m;                                        // [n, m]
    for (std::size_t row = 0; row < n; ++row)
      for (std::size_t col = 0; col < m; ++col) {
        double sum = 0;
        for (std::size_t j = 0; j < k; ++j) sum += Ai[row * k + j] * Bi[j * m + col];
        Ci[row * m + col] = sum;
      }
  }
  return from_vector(C, out_shape, a.dtype());
  // doc:end naive_matmul
}

}  // namespace glassllm
