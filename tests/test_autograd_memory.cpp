// Tests for the memory behind gradients (glassllm/engine/autograd.cpp):
// every grad() owns its elements, as in PyTorch.
#include <doctest/doctest.h>

#include "check.h"
#include "glassllm/engine/ops.h"

using namespace glassllm;
using glassllm::test::check_tensor;

// add's backward hands the same dout to both inputs, and that dout is the
// seed: each grad() must still be a tensor of its own.
TEST_CASE("gradients never alias each other or the seed passed to backward") {
  Tensor x = tensor({1, 2, 3}).requires_grad_();
  Tensor y = tensor({4, 5, 6}).requires_grad_();
  Tensor seed = tensor({1, 10, 100});
  (x + y).backward(seed);
  REQUIRE(x.grad().defined());
  CHECK_FALSE(x.grad().is(y.grad()));
  CHECK_FALSE(x.grad().is(seed));
  x.grad().mutable_data<float>()[0] = -7;  // a student clipping one gradient by hand
  check_tensor(x.grad(), {3}, {-7, 10, 100}, 0);
  check_tensor(y.grad(), {3}, {1, 10, 100}, 0);
  check_tensor(seed, {3}, {1, 10, 100}, 0);
}

TEST_CASE("a gradient through reshape does not share memory with the upstream one") {
  Tensor x = tensor({{1, 2}, {3, 4}}).requires_grad_();
  Tensor flat = reshape(x, {4});
  flat.retain_grad();
  Tensor seed = tensor({1, 2, 3, 4});
  flat.backward(seed);
  x.grad().mutable_data<float>()[3] = 0;
  check_tensor(flat.grad(), {4}, {1, 2, 3, 4}, 0);
  check_tensor(seed, {4}, {1, 2, 3, 4}, 0);
  flat.grad().mutable_data<float>()[0] = 9;
  check_tensor(x.grad(), {2, 2}, {1, 2, 3, 0}, 0);
  check_tensor(seed, {4}, {1, 2, 3, 4}, 0);
}

TEST_CASE("a leaf's gradient from backward() on the leaf itself is a copy of the seed") {
  Tensor x = tensor({1, 2}).requires_grad_();
  Tensor seed = tensor({5, 6});
  x.backward(seed);
  x.grad().mutable_data<float>()[1] = 0;
  check_tensor(seed, {2}, {5, 6}, 0);
}
