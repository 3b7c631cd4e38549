// tensor_views.cpp: how tensors print, and which shape ops share memory.
// Quoted by docs/01-tensors-and-broadcasting.md and docs/pitfalls.md.
#include <iostream>

#include "glassllm/glassllm.h"

using namespace glassllm;

int main() {
  // doc:begin printing
  // str() is NumPy's str(), repr() its repr() with the dtype spelled out.
  Tensor t = tensor({{0.5, -1}, {2, 0.125}});
  std::cout << t << "\n" << t.repr() << "\n";
  std::cout << scalar(2.5, DType::float64).repr() << "\n";  // 0-d: shape ()
  // Over 1000 elements, NumPy (and GlassLM) show 3 items at each edge.
  std::cout << arange(1001) << "\n";
  // doc:end printing

  // doc:begin views
  // reshape is a view: a new Tensor over the SAME elements (no copy).
  Tensor x = arange(6);                                  // (6,)  [0 1 2 3 4 5]
  Tensor m = reshape(x, {2, 3});                         // (2,3) sharing x's memory
  m.mutable_data<float>()[0] = 100.0f;                   // write through m ...
  std::cout << "x after writing m[0,0]: " << x << "\n";  // ... and x sees it

  // permute (and transpose) write a new contiguous array: a copy.
  Tensor p = permute(m, {1, 0});                          // (3,2)
  p.mutable_data<float>()[1] = -1.0f;                     // p[0,1] is m[1,0]
  std::cout << "m after writing p[0,1]:\n" << m << "\n";  // m is unchanged
  // doc:end views
  return 0;
}
