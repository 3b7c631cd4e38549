// tensors_and_broadcasting.cpp: making tensors, reading their shapes and
// dtypes, and NumPy's broadcasting rule. Quoted by
// docs/01-tensors-and-broadcasting.md.
#include <iostream>

#include "glassllm/glassllm.h"

using namespace glassllm;

int main() {
  // doc:begin create
  Tensor a = tensor({{1, 2, 3}, {4, 5, 6}});  // float32 by default
  Tensor b = arange(3, DType::float64);       // [0, 1, 2] in float64
  Tensor z = zeros({2, 3, 4});
  std::cout << a << "\n";
  std::cout << "shape " << shape_str(a.shape()) << ", ndim " << a.ndim() << ", size "
            << a.size() << ", dtype " << dtype_name(a.dtype()) << ", nbytes "
            << a.nbytes() << "\n";
  std::cout << b.repr() << "\n";
  std::cout << "z has shape " << shape_str(z.shape()) << "\n";
  // doc:end create

  // doc:begin broadcast
  // (2,3) + (3,): the row is added to every row of `a`.
  Tensor row = tensor({10, 20, 30});
  std::cout << a + row << "\n";
  // (2,1) * (1,3) -> (2,3): a column times a row is an outer product.
  Tensor col = tensor({{1}, {2}});
  Tensor r = tensor({{1, 10, 100}});
  std::cout << col * r << "\n";
  // A plain number takes the tensor's dtype.
  std::cout << (a * 0.5) << "\n";
  // doc:end broadcast

  // doc:begin errors
  try {
    Tensor bad = a + tensor({1, 2});  // (2,3) and (2,): 3 != 2
  } catch (const std::invalid_argument& e) {
    std::cout << e.what() << "\n";
  }
  try {
    Tensor bad = a + b;  // float32 + float64
  } catch (const std::invalid_argument& e) {
    std::cout << e.what() << "\n";
  }
  try {
    Tensor bad = matmul(ones({2, 3}), ones({4, 5}));
  } catch (const std::invalid_argument& e) {
    std::cout << e.what() << "\n";
  }
  // doc:end errors
  return 0;
}
