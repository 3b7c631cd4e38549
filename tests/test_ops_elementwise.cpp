// Tests for the elementwise ops of ops.h (ops_elementwise.cpp): values worked
// out by hand, NumPy broadcasting, derivatives, and error messages.
#include <cmath>

#include "check.h"

using namespace glassllm;
using glassllm::test::check_tensor;

TEST_CASE("binary ops compute elementwise values in both dtypes") {
  for (DType dt : {DType::float32, DType::float64}) {
    CAPTURE(dtype_name(dt));
    Tensor a = tensor({1, 2, 3}, dt), b = tensor({4, 5, 6}, dt);
    check_tensor(a + b, {3}, {5, 7, 9});
    check_tensor(a - b, {3}, {-3, -3, -3});
    check_tensor(a * b, {3}, {4, 10, 18});
    check_tensor(a / b, {3}, {0.25, 0.4, 0.5});
    check_tensor(pow(a, b), {3}, {1, 32, 729});
    check_tensor(pow(a, 2.0), {3}, {1, 4, 9});
    check_tensor(2.0 - a, {3}, {1, 0, -1});
    check_tensor(6.0 / a, {3}, {6, 3, 2});
    check_tensor(-a, {3}, {-1, -2, -3});
    CHECK((a + b).dtype() == dt);
    CHECK((a * 0.5).dtype() == dt);  // a double literal takes the tensor's dtype
  }
}

TEST_CASE("broadcasting follows NumPy: align right, stretch length-1 axes") {
  // (2,1) + (3,) -> (2,3): [[10],[20]] + [1,2,3]
  Tensor col = tensor({{10}, {20}}), row = tensor({1, 2, 3});
  check_tensor(col + row, {2, 3}, {11, 12, 13, 21, 22, 23});
  // (2,1,3) * (4,1) -> (2,4,3)
  CHECK(broadcast_shapes({2, 1, 3}, {4, 1}) == Shape{2, 4, 3});
  CHECK((ones({2, 1, 3}) * ones({4, 1})).shape() == Shape{2, 4, 3});
  // A 0-d tensor broadcasts against anything.
  check_tensor(tensor({{1, 2}}) * scalar(3), {1, 2}, {3, 6});
  // Middle-axis broadcast: (2,3,2) - (3,1)
  Tensor x = reshape(arange(12), {2, 3, 2});
  Tensor m = tensor({{0}, {100}, {200}});
  check_tensor(x - m, {2, 3, 2},
               {0, 1, -98, -97, -196, -195, 6, 7, -92, -91, -190, -189});
}

TEST_CASE("incompatible shapes and mixed dtypes are errors naming op and shapes") {
  CHECK_THROWS_WITH_AS(
      ones({2, 3}) + ones({4}),
      doctest::Contains(
          "add: shapes (2,3) and (4,) cannot be broadcast: 3 (dim 1) != 4 (dim 0)"),
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      mul(ones({2, 3}), ones({3, 3})),
      doctest::Contains("mul: shapes (2,3) and (3,3) cannot be broadcast"),
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      ones({2}) + ones({2}, DType::float64),
      doctest::Contains(
          "add: dtypes float32 (2,) and float64 (2,) differ; convert one with astype()"),
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(exp(Tensor()), doctest::Contains("exp: tensor is undefined"),
                       std::invalid_argument);
}

TEST_CASE("unary ops match their formulas") {
  Tensor x = tensor({-1, 0, 2}, DType::float64);
  check_tensor(exp(x), {3}, {std::exp(-1.0), 1, std::exp(2.0)}, 1e-12);
  check_tensor(tanh(x), {3}, {std::tanh(-1.0), 0, std::tanh(2.0)}, 1e-12);
  // sigmoid(0) = 1/2, sigmoid(-1) = 1/(1+e)
  check_tensor(sigmoid(x), {3}, {1 / (1 + std::exp(1.0)), 0.5, 1 / (1 + std::exp(-2.0))},
               1e-12);
  // silu(x) = x * sigmoid(x)
  check_tensor(silu(x), {3}, {-1 / (1 + std::exp(1.0)), 0, 2 / (1 + std::exp(-2.0))},
               1e-12);
  check_tensor(relu(x), {3}, {0, 0, 2});
  Tensor p = tensor({1, 4, 0.25}, DType::float64);
  check_tensor(log(p), {3}, {0, std::log(4.0), std::log(0.25)}, 1e-12);
  check_tensor(sqrt(p), {3}, {1, 2, 0.5}, 1e-12);
  check_tensor(rsqrt(p), {3}, {1, 0.5, 2}, 1e-12);
  // sigmoid does not overflow for large |x|
  check_tensor(sigmoid(tensor({-1000, 1000})), {2}, {0, 1});
}

TEST_CASE("binary backward: product, quotient and power rules") {
  Tensor a = tensor({1, 2}, DType::float64).requires_grad_();
  Tensor b = tensor({3, 4}, DType::float64).requires_grad_();
  SUBCASE("mul: d(ab)/da = b, d(ab)/db = a") {
    sum(a * b).backward();
    check_tensor(a.grad(), {2}, {3, 4});
    check_tensor(b.grad(), {2}, {1, 2});
  }
  SUBCASE("div: d(a/b)/da = 1/b, d(a/b)/db = -a/b^2") {
    sum(a / b).backward();
    check_tensor(a.grad(), {2}, {1.0 / 3, 0.25}, 1e-12);
    check_tensor(b.grad(), {2}, {-1.0 / 9, -2.0 / 16}, 1e-12);
  }
  SUBCASE("pow: d(a^b)/da = b a^(b-1), d(a^b)/db = a^b ln a") {
    sum(pow(a, b)).backward();
    check_tensor(a.grad(), {2}, {3, 4 * 8}, 1e-12);
    check_tensor(b.grad(), {2}, {0, 16 * std::log(2.0)}, 1e-12);
  }
  SUBCASE("sub: d(a-b)/db = -1") {
    sum(a - b).backward();
    check_tensor(a.grad(), {2}, {1, 1});
    check_tensor(b.grad(), {2}, {-1, -1});
  }
}

TEST_CASE("broadcast backward sums the gradient back to each input's shape") {
  // y = a (2,3) + b (3,): b is used by both rows, so db = column sums of dout.
  Tensor a = zeros({2, 3}).requires_grad_();
  Tensor b = zeros({3}).requires_grad_();
  (a + b).backward(tensor({{1, 2, 3}, {10, 20, 30}}));
  check_tensor(a.grad(), {2, 3}, {1, 2, 3, 10, 20, 30});
  check_tensor(b.grad(), {3}, {11, 22, 33});
  // (3,1) * (1,4): dc = row sums of dout * r, dr = column sums of dout * c
  Tensor c = tensor({{1}, {2}, {3}}).requires_grad_();
  Tensor r = tensor({{1, 1, 1, 1}}).requires_grad_();
  sum(c * r).backward();
  check_tensor(c.grad(), {3, 1}, {4, 4, 4});
  check_tensor(r.grad(), {1, 4}, {6, 6, 6, 6});
}

TEST_CASE("sum_to_shape sums leading and stretched axes") {
  Tensor g = ones({2, 3, 4});
  check_tensor(sum_to_shape(g, {3, 1}), {3, 1}, {8, 8, 8});
  check_tensor(sum_to_shape(g, {}), {}, {24});
  CHECK(sum_to_shape(g, {2, 3, 4}).is(g));
  CHECK_THROWS_WITH_AS(sum_to_shape(g, {5}), doctest::Contains("sum_to_shape"),
                       std::invalid_argument);
}

TEST_CASE("unary backward: each derivative by hand") {
  Tensor x = tensor({0.5, 2}, DType::float64).requires_grad_();
  auto grad_of = [&](Tensor (*f)(const Tensor&)) {
    x.zero_grad();
    sum(f(x)).backward();
    return x.grad();
  };
  check_tensor(grad_of(exp), {2}, {std::exp(0.5), std::exp(2.0)}, 1e-12);
  check_tensor(grad_of(log), {2}, {2, 0.5}, 1e-12);
  check_tensor(grad_of(sqrt), {2}, {0.5 / std::sqrt(0.5), 0.5 / std::sqrt(2.0)}, 1e-12);
  check_tensor(grad_of(rsqrt), {2},
               {-0.5 * std::pow(0.5, -1.5), -0.5 * std::pow(2.0, -1.5)}, 1e-12);
  double t0 = std::tanh(0.5), t1 = std::tanh(2.0);
  check_tensor(grad_of(tanh), {2}, {1 - t0 * t0, 1 - t1 * t1}, 1e-12);
  double s0 = 1 / (1 + std::exp(-0.5)), s1 = 1 / (1 + std::exp(-2.0));
  check_tensor(grad_of(sigmoid), {2}, {s0 * (1 - s0), s1 * (1 - s1)}, 1e-12);
  check_tensor(grad_of(silu), {2}, {s0 * (1 + 0.5 * (1 - s0)), s1 * (1 + 2 * (1 - s1))},
               1e-12);
  check_tensor(grad_of(neg), {2}, {-1, -1});
  Tensor y = tensor({-1, 3}).requires_grad_();
  sum(relu(y)).backward();
  check_tensor(y.grad(), {2}, {0, 1});
}

TEST_CASE("astype converts values and sends the gradient back in the input's dtype") {
  Tensor x = tensor({0.1, 1.5}, DType::float64).requires_grad_();
  Tensor y = astype(x, DType::float32);
  CHECK(y.dtype() == DType::float32);
  CHECK(y.at({0}) == double(0.1f));  // rounded to the nearest float32
  sum(y * 2.0).backward();
  CHECK(x.grad().dtype() == DType::float64);
  check_tensor(x.grad(), {2}, {2, 2});
  CHECK(astype(x, DType::float64).data<double>() == x.data<double>());  // a view
}
