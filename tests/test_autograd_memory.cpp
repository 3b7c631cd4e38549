// Tests for the memory behind gradients (glassllm/engine/autograd.cpp):
// every grad() owns its elements, and a tensor an op saved for its backward
// may not be written before backward() (the version counter), as in PyTorch.
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

// y = x * x saves x: dy/dx = 2x. Writing x[0] = 10 before backward would
// give 20 instead of 2; PyTorch raises "one of the variables needed for
// gradient computation has been modified by an inplace operation".
TEST_CASE("writing a saved input after the forward makes backward refuse") {
  Tensor x = tensor({1, 2}).requires_grad_();
  Tensor y = sum(x * x);
  x.mutable_data<float>()[0] = 10;
  CHECK_THROWS_WITH_AS(y.backward(),
                       "backward: input 0 of 'mul' (a leaf (2,) float32) was written "
                       "(mutable_data) after 'mul' saved it for backward: version 1, "
                       "saved at version 0; run the forward again after the write, or "
                       "write into a copy",
                       std::invalid_argument);
  // A fresh forward after the write is fine: d sum(x*x)/dx = 2x = [20, 4].
  Tensor again = sum(x * x);
  again.backward();
  check_tensor(x.grad(), {2}, {20, 4}, 0);
}

TEST_CASE("writing a saved output, or through a view of a saved input, is caught too") {
  Tensor x = tensor({0, 1}).requires_grad_();
  Tensor e = exp(x);  // exp's backward reuses its output
  e.mutable_data<float>()[0] = 3;
  CHECK_THROWS_WITH_AS(sum(e).backward(), doctest::Contains("the output of 'exp' (2,)"),
                       std::invalid_argument);

  Tensor w = tensor({1, 2}).requires_grad_();
  Tensor loss = sum(w * w);
  Tensor view = w.detach();  // shares w's storage, and so its version
  view.mutable_data<float>()[1] = 5;
  CHECK_THROWS_WITH_AS(loss.backward(), doctest::Contains("input 0 of 'mul'"),
                       std::invalid_argument);
}

// add's backward needs only shapes, so PyTorch allows the write; so do we.
TEST_CASE("writing a tensor whose values no backward reads is allowed") {
  Tensor a = tensor({1, 2}).requires_grad_();
  Tensor b = tensor({3, 4}).requires_grad_();
  Tensor s = a + b;
  a.mutable_data<float>()[0] = 100;
  s.mutable_data<float>()[0] = 100;
  sum(s).backward();
  check_tensor(a.grad(), {2}, {1, 1}, 0);
  check_tensor(b.grad(), {2}, {1, 1}, 0);
}
