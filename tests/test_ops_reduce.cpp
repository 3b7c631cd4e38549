// Tests for sum, mean and max (ops_reduce.cpp).
#include "check.h"

using namespace glassllm;
using glassllm::test::check_tensor;

TEST_CASE("sum and mean reduce the named axes, keeping them on request") {
  for (DType dt : {DType::float32, DType::float64}) {
    CAPTURE(dtype_name(dt));
    // x = [[0,1,2],[3,4,5]]
    Tensor x = reshape(arange(6, dt), {2, 3});
    check_tensor(sum(x), {}, {15});
    check_tensor(sum(x, {0}), {3}, {3, 5, 7});
    check_tensor(sum(x, {1}, true), {2, 1}, {3, 12});
    check_tensor(sum(x, {-1}), {2}, {3, 12});
    check_tensor(mean(x, {1}), {2}, {1, 4});
    check_tensor(mean(x), {}, {2.5});
    check_tensor(mean(x, {0}, true), {1, 3}, {1.5, 2.5, 3.5});
    CHECK(sum(x).dtype() == dt);
  }
  // Three axes, reducing the outer two: x[i,j,k] = 4*(3i+j)+k... sums over i, j of
  // (2,3,4)
  Tensor y = reshape(arange(24), {2, 3, 4});
  // k-th sum = sum over 6 rows of (4*r + k) = 4*(0+...+5) + 6k = 60 + 6k
  check_tensor(sum(y, {0, 1}), {4}, {60, 66, 72, 78});
}

TEST_CASE("max takes the largest value along an axis") {
  Tensor x = tensor({{1, 5, 2}, {7, 0, 7}});
  check_tensor(max(x, 1), {2}, {5, 7});
  check_tensor(max(x, 0, true), {1, 3}, {7, 5, 7});
  check_tensor(max(x), {}, {7});
}

TEST_CASE("reduction backward spreads the gradient back over the reduced axes") {
  Tensor x = reshape(arange(6, DType::float64), {2, 3}).requires_grad_();
  SUBCASE("sum: every element gets dout of its row") {
    sum(x, {1}).backward(tensor({1, 10}, DType::float64));
    check_tensor(x.grad(), {2, 3}, {1, 1, 1, 10, 10, 10});
  }
  SUBCASE("mean: every element gets dout / count") {
    mean(x, {0}).backward(tensor({3, 6, 9}, DType::float64));
    check_tensor(x.grad(), {2, 3}, {1.5, 3, 4.5, 1.5, 3, 4.5});
  }
  SUBCASE("max: only the maximum gets dout") {
    max(x, 1).backward(tensor({1, 2}, DType::float64));
    check_tensor(x.grad(), {2, 3}, {0, 0, 1, 0, 0, 2});
  }
}

TEST_CASE("max splits the gradient equally between tied maxima") {
  Tensor x = tensor({{7, 0, 7}}, DType::float64).requires_grad_();
  max(x, 1).backward(tensor({1}, DType::float64));
  check_tensor(x.grad(), {1, 3}, {0.5, 0, 0.5});
}

TEST_CASE("bad axes are errors naming the op, the axis and the shape") {
  Tensor x = ones({2, 3});
  CHECK_THROWS_WITH_AS(sum(x, {2}),
                       doctest::Contains("sum: axis 2 is out of range for shape (2,3)"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(mean(x, {-3}),
                       doctest::Contains("mean: axis -3 is out of range for shape (2,3)"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(sum(x, {1, -1}),
                       doctest::Contains("sum: axis -1 is repeated for shape (2,3)"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(max(ones({2, 0}), 1),
                       doctest::Contains("max: cannot reduce axis 1 of length 0"),
                       std::invalid_argument);
}

TEST_CASE("reshape is a view with an inferred axis and a clear error") {
  Tensor x = arange(6);
  Tensor y = reshape(x, {2, -1});
  CHECK(y.shape() == Shape{2, 3});
  CHECK(y.data<float>() == x.data<float>());  // no element moved
  CHECK(unsqueeze(x, 0).shape() == Shape{1, 6});
  CHECK(squeeze(unsqueeze(x, -1), 1).shape() == Shape{6});
  CHECK_THROWS_WITH_AS(
      reshape(ones({2, 3}), {4, 2}),
      doctest::Contains(
          "reshape: cannot reshape (2,3) (6 elements) into (4,2) (8 elements)"),
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(reshape(ones({2, 3}), {-1, -1}),
                       doctest::Contains("only one axis may be -1"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      squeeze(ones({2, 3}), 0),
      doctest::Contains("squeeze: axis 0 of shape (2,3) has length 2, not 1"),
      std::invalid_argument);
  // Backward of a view reshapes the gradient back.
  Tensor w = ones({2, 3}).requires_grad_();
  sum(reshape(w, {6}) * arange(6)).backward();
  check_tensor(w.grad(), {2, 3}, {0, 1, 2, 3, 4, 5});
}
