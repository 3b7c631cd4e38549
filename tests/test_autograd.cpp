// Tests for autograd (tensor.h: backward, grad, zero_grad, detach, retain_grad).
#include "check.h"

using namespace glassllm;
using glassllm::test::check_tensor;

TEST_CASE("a tensor used twice receives the sum of both gradients") {
  // y = x*x + x: dy/dx = 2x + 1 = 7 at x = 3. Each use contributes its part.
  Tensor x = scalar(3.0, DType::float64).requires_grad_();
  Tensor y = x * x + x;
  y.backward();
  CHECK(x.grad().item() == 7.0);
}

TEST_CASE("gradients flow through a diamond-shaped graph exactly once per path") {
  // a = 2x, b = 3x, y = a*b = 6x^2: dy/dx = 12x = 24 at x = 2.
  Tensor x = scalar(2.0, DType::float64).requires_grad_();
  Tensor a = x * 2.0, b = x * 3.0;
  (a * b).backward();
  CHECK(x.grad().item() == 24.0);
}

TEST_CASE("backward accumulates into leaves across calls until zero_grad") {
  Tensor w = tensor({1, 2}).requires_grad_();
  sum(w * 3.0).backward();
  sum(w * 3.0).backward();
  check_tensor(w.grad(), {2}, {6, 6});
  w.zero_grad();
  CHECK_FALSE(w.grad().defined());
  sum(w).backward();
  check_tensor(w.grad(), {2}, {1, 1});
}

TEST_CASE(
    "backward with an explicit upstream gradient computes a vector-Jacobian product") {
  // y = 2x elementwise, dout = [1, 10, 100] -> dx = [2, 20, 200].
  Tensor x = tensor({1, 1, 1}).requires_grad_();
  Tensor y = x * 2.0;
  y.backward(tensor({1, 10, 100}));
  check_tensor(x.grad(), {3}, {2, 20, 200});
}

TEST_CASE("backward refuses what it cannot do, saying why") {
  Tensor x = tensor({1, 2}).requires_grad_();
  Tensor y = x * 2.0;
  CHECK_THROWS_WITH_AS(y.backward(),
                       doctest::Contains("output of shape (2,) is not a scalar"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      y.backward(tensor({1, 2, 3})),
      doctest::Contains(
          "upstream gradient (3,) float32 does not match the output (2,) float32"),
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(sum(tensor({1, 2})).backward(),
                       doctest::Contains("does not require grad"), std::invalid_argument);
}

TEST_CASE("intermediate gradients are freed unless retain_grad is asked for") {
  Tensor x = tensor({1, 2}).requires_grad_();
  Tensor h = x * 3.0, k = x * 4.0;
  k.retain_grad();
  sum(h * k).backward();
  CHECK_FALSE(h.grad().defined());
  // d/dk sum(h*k) = h = 3x
  check_tensor(k.grad(), {2}, {3, 6});
  // d/dx sum(12 x^2) = 24 x
  check_tensor(x.grad(), {2}, {24, 48});
}

TEST_CASE("detach shares the data but cuts the graph") {
  Tensor x = tensor({1, 2}).requires_grad_();
  Tensor y = x * 2.0;
  Tensor d = y.detach();
  CHECK_FALSE(d.requires_grad());
  CHECK(d.is_leaf());
  CHECK(d.data<float>() == y.data<float>());  // same memory
  Tensor z = sum(d * x);                      // only the x path carries a gradient
  z.backward();
  check_tensor(x.grad(), {2}, {2, 4});
}

TEST_CASE("every recorded node knows its op's name and its parents") {
  Tensor a = ones({2}).requires_grad_(), b = ones({2});
  Tensor c = a * b;
  CHECK(c.op() == "mul");
  REQUIRE(c.parents().size() == 2);
  CHECK(c.parents()[0].is(a));
  CHECK(c.parents()[1].is(b));
  CHECK(a.is_leaf());
  CHECK_FALSE(c.is_leaf());
  CHECK(exp(c).op() == "exp");
}

TEST_CASE("a long chain of ops does not overflow the stack in backward") {
  Tensor x = scalar(1.0, DType::float64).requires_grad_();
  Tensor y = x;
  for (int i = 0; i < 20000; ++i) y = y + 0.0;
  y.backward();
  CHECK(x.grad().item() == 1.0);
}
