// check.h: small helpers the tests share. Expected values are always written
// out in the test itself; these only compare and print.
#pragma once

#include <doctest/doctest.h>

#include <set>

#include <cmath>
#include <string>
#include <vector>

#include "glassllm/custom_op.h"
#include "glassllm/gradcheck.h"
#include "glassllm/ops.h"

namespace glassllm::test {

/// Checks shape and every value (row-major) within `tol`, printing the first
/// mismatch with its flat index.
inline void check_tensor(const Tensor& t, const Shape& shape,
                         const std::vector<double>& expected, double tol = 1e-6) {
  REQUIRE(t.defined());
  CAPTURE(shape_str(t.shape()));
  REQUIRE(t.shape() == shape);
  std::vector<double> got = t.to_vector();
  REQUIRE(got.size() == expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CAPTURE(got[i]);
    CAPTURE(expected[i]);
    if (std::isinf(expected[i])) {
      CHECK(got[i] == expected[i]);
    } else {
      CHECK(std::fabs(got[i] - expected[i]) <= tol);
    }
  }
}

/// The largest |a - b| over two tensors of one shape.
inline double max_abs_diff(const Tensor& a, const Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  std::vector<double> x = a.to_vector(), y = b.to_vector();
  double m = 0;
  for (std::size_t i = 0; i < x.size(); ++i) m = std::max(m, std::fabs(x[i] - y[i]));
  return m;
}

}  // namespace glassllm::test
