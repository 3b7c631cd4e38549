// autograd_summed_gradients.cpp: reverse-mode autograd, why gradients are
// summed, and repeat_kv's backward. Quoted by docs/02-autograd.md.
#include <iostream>

#include "glassllm/glassllm.h"

using namespace glassllm;

int main() {
  // doc:begin used_twice
  // y = x * x + x uses x three times; dy/dx = 2x + 1 = 7 at x = 3.
  Tensor x = scalar(3.0, DType::float64).requires_grad_();
  Tensor y = x * x + x;
  y.backward();
  std::cout << "y = " << y.item() << ", dy/dx = " << x.grad().item() << "\n";
  // doc:end used_twice

  // doc:begin graph
  // The graph backward() walks: each node knows its op and its parents.
  std::cout << "y.op() = " << y.op() << ", its parents: " << y.parents()[0].op()
            << " and " << (y.parents()[1].is(x) ? "x itself" : "?") << "\n";
  // doc:end graph

  // doc:begin repeat_kv
  // One K/V head holding two positions with head dim 2: [[1,2],[3,4]],
  // shared by two query heads. repeat_kv copies it to heads [0, 0].
  Tensor kv = tensor({{{{1, 2}, {3, 4}}}}).requires_grad_();  // [B=1, Hkv=1, T=2, D=2]
  Tensor repeated = repeat_kv(kv, 2);                         // [1, 2, 2, 2]
  std::cout << "repeated shape " << shape_str(repeated.shape()) << "\n"
            << repeated << "\n";
  sum(repeated).backward();
  // Each element was used by both copies, so its gradient is 1 + 1.
  std::cout << "gradient of kv:\n" << kv.grad() << "\n";
  // doc:end repeat_kv

  // doc:begin no_grad
  Tensor w = ones({2}).requires_grad_();
  {
    no_grad guard;  // inference: no graph is recorded
    Tensor out = w * 2.0;
    std::cout << std::boolalpha
              << "under no_grad: requires_grad = " << out.requires_grad() << "\n";
  }
  std::cout << "after it:      requires_grad = " << (w * 2.0).requires_grad() << "\n";
  // doc:end no_grad
  return 0;
}
