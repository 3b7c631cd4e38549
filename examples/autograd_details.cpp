// autograd_details.cpp: the rest of the autograd API - a diamond-shaped
// graph, backward with an explicit upstream gradient, the backward of
// broadcasting, detach, retain_grad, gradient accumulation, gradients that
// own their memory, and the version counter that guards saved tensors.
// Quoted by docs/02-autograd.md.
#include <iostream>

#include "glassllm/glassllm.h"

using namespace glassllm;

int main() {
  // doc:begin diamond
  // a = 2x and b = 3x both depend on x, and L = a * b = 6x^2.
  // dL/dx = dL/da * da/dx + dL/db * db/dx = b * 2 + a * 3 = 12x = 24 at x = 2.
  Tensor x = scalar(2.0, DType::float64).requires_grad_();
  Tensor a = x * 2.0;
  Tensor b = x * 3.0;
  Tensor L = a * b;
  L.backward();
  std::cout << "L = " << L.item() << ", dL/dx = " << x.grad().item() << "\n";
  // doc:end diamond

  // doc:begin upstream
  // backward() needs a one-element output. For any other output, pass the
  // gradient of the loss with respect to it (dout, same shape): backward
  // then computes the vector-Jacobian product dout^T J.
  Tensor v = tensor({1, 2, 3}).requires_grad_();  // (3,)
  Tensor y = v * v;                               // (3,), dy_i/dv_i = 2 v_i
  y.backward(tensor({1, 0, 10}));                 // dout (3,)
  std::cout << "dv = " << v.grad() << "\n";       // dout * 2v
  try {
    y.backward();
  } catch (const std::invalid_argument& e) {
    std::cout << e.what() << "\n";
  }
  // doc:end upstream

  // doc:begin broadcast_backward
  // bias (3,) is broadcast over the 2 rows of h (2,3): each bias element
  // is used twice, so its gradient is the sum over the rows.
  Tensor h = tensor({{1, 2, 3}, {4, 5, 6}}).requires_grad_();  // (2,3)
  Tensor bias = tensor({0, 0, 0}).requires_grad_();            // (3,)
  sum((h + bias) * h).backward();  // d/dbias = h summed over axis 0
  std::cout << "dbias = " << bias.grad() << "\n";
  // That sum is sum_to_shape, the helper every binary op's backward uses:
  std::cout << "sum_to_shape(h, (3,)) = " << sum_to_shape(h, {3}) << "\n";
  std::cout << "sum_to_shape(h, (2,1)) =\n" << sum_to_shape(h, {2, 1}) << "\n";
  // doc:end broadcast_backward

  // doc:begin detach
  // detach() gives a leaf that shares the data but is cut from the graph:
  // no gradient flows through it.
  Tensor w = tensor({1, 2}).requires_grad_();
  Tensor frozen = (w * 3.0).detach();
  std::cout << std::boolalpha << "frozen: requires_grad " << frozen.requires_grad()
            << ", is_leaf " << frozen.is_leaf() << "\n";
  sum(w * frozen).backward();  // frozen counts as a constant [3, 6]
  std::cout << "dw = " << w.grad() << "\n";
  // doc:end detach

  // doc:begin retain_grad
  // Only leaves keep their gradient; ask an intermediate tensor to keep its.
  Tensor p = tensor({1, 2}).requires_grad_();
  Tensor q = p * p;  // not a leaf: made by "mul"
  Tensor r = p * p;
  r.retain_grad();
  sum(q * 3.0 + r * 5.0).backward();
  std::cout << "q.grad() defined: " << q.grad().defined() << "\n";
  std::cout << "r.grad() = " << r.grad() << "\n";
  // doc:end retain_grad

  // doc:begin zero_grad
  // Gradients accumulate across backward() calls until zero_grad().
  Tensor c = scalar(1.0).requires_grad_();
  Tensor loss = c * 4.0;
  loss.backward();
  std::cout << "after one backward:  " << c.grad().item() << "\n";
  loss.backward();  // the graph is kept: this works, and adds
  std::cout << "after two backwards: " << c.grad().item() << "\n";
  c.zero_grad();
  (c * 4.0).backward();
  std::cout << "after zero_grad and one more: " << c.grad().item() << "\n";
  // doc:end zero_grad

  // doc:begin own_gradients
  // add's backward hands one dout to both inputs, and here that dout is the
  // seed; still every grad() is a tensor of its own, as in PyTorch.
  Tensor s = tensor({1, 2}).requires_grad_();
  Tensor t = tensor({3, 4}).requires_grad_();
  Tensor seed = tensor({1, 1});
  (s + t).backward(seed);
  s.grad().mutable_data<float>()[0] = 0;  // clip one gradient by hand
  std::cout << "s.grad() = " << s.grad() << ", t.grad() = " << t.grad()
            << ", seed = " << seed << "\n";
  // doc:end own_gradients

  // doc:begin written_after_forward
  // u * u saves u for its backward (d(u*u)/du = 2u). A write into u after
  // the forward would change that gradient silently, so backward refuses.
  Tensor u = tensor({1, 2}).requires_grad_();
  Tensor squares = u * u;
  u.mutable_data<float>()[0] = 10;  // a write: u's version goes from 0 to 1
  try {
    sum(squares).backward();
  } catch (const std::invalid_argument& e) {
    std::cout << e.what() << "\n";
  }
  // doc:end written_after_forward
  return 0;
}
