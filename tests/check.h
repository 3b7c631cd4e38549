// check.h: small helpers the tests share. Expected values are always written
// out in the test itself; these only compare and print.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "glassllm/engine/custom_op.h"
#include "glassllm/engine/gradcheck.h"
#include "glassllm/engine/ops.h"
#include "glassllm/fast/blas.h"

namespace glassllm::test {

/// Both floating-point types, for tests that run once per dtype.
inline constexpr DType kDtypes[] = {DType::float32, DType::float64};

/// Runs the products on `n` threads until the end of the scope, then puts the
/// thread count back, so a test that needs one thread leaves the default to
/// the tests run after it in the same process (blas_info's test checks it).
struct BlasThreadsForScope {
  int previous;
  explicit BlasThreadsForScope(int n) : previous(blas_info().threads) {
    set_blas_threads(n);
  }
  ~BlasThreadsForScope() {
    if (previous > 0) set_blas_threads(previous);  // 0: the system backend's own
  }
  BlasThreadsForScope(const BlasThreadsForScope&) = delete;
  BlasThreadsForScope& operator=(const BlasThreadsForScope&) = delete;
};

/// Elementwise comparison with a relative-and-absolute tolerance; tol 0 and
/// infinities mean exact equality.
inline void check_values(const Tensor& t, const std::vector<double>& expected,
                         double tol) {
  std::vector<double> got = t.to_vector();
  REQUIRE(got.size() == expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    if (tol == 0 || std::isinf(expected[i]))
      CHECK(got[i] == expected[i]);
    else
      CHECK(got[i] == doctest::Approx(expected[i]).epsilon(tol));
  }
}

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

// Central differences in float64. For L(x) = sum(f(x) * w) with a fixed
// random w, the engine's gradient (backward with dout = w) must match
//   dL/dx_i ~ (L(x + h e_i) - L(x - h e_i)) / (2h),  h = 1e-6,
// within 1e-6 + 1e-5 |numeric| (the error of the difference is ~h^2 plus
// rounding ~1e-16 / h = 1e-10).
inline void check_gradient(const std::function<Tensor(const Tensor&)>& f,
                           const Tensor& x0) {
  const Shape shape = x0.shape();
  const std::vector<double> x = x0.to_vector();
  Shape out_shape;
  {
    no_grad guard;
    out_shape = f(from_vector(x, shape, DType::float64)).shape();
  }
  const std::vector<double> w = randn(out_shape, 1234, DType::float64).to_vector();

  Tensor xt = from_vector(x, shape, DType::float64).requires_grad_();
  f(xt).backward(from_vector(w, out_shape, DType::float64));
  REQUIRE(xt.grad().defined());
  const std::vector<double> analytic = xt.grad().to_vector();

  no_grad guard;
  auto loss = [&](const std::vector<double>& v) {
    std::vector<double> y = f(from_vector(v, shape, DType::float64)).to_vector();
    double s = 0;
    for (std::size_t i = 0; i < y.size(); ++i) s += y[i] * w[i];
    return s;
  };
  const double h = 1e-6;
  for (std::size_t i = 0; i < x.size(); ++i) {
    std::vector<double> plus = x, minus = x;
    plus[i] += h;
    minus[i] -= h;
    double numeric = (loss(plus) - loss(minus)) / (2 * h);
    CAPTURE(shape_str(shape));
    CAPTURE(i);
    CAPTURE(numeric);
    CAPTURE(analytic[i]);
    CHECK(std::abs(analytic[i] - numeric) <= 1e-6 + 1e-5 * std::abs(numeric));
  }
}

}  // namespace glassllm::test
