// pitfalls.cpp: behaviours that surprise newcomers, each shown by running it.
// Quoted by docs/pitfalls.md.
#include <cmath>
#include <iostream>

#include "glassllm/glassllm.h"

using namespace glassllm;

int main() {
  // doc:begin braces
  // Every brace level is one axis, as in np.array: no ambiguity.
  std::cout << shape_str(tensor({{1}, {2}}).shape()) << " "  // a column
            << shape_str(tensor({{1, 2}}).shape()) << " "    // a row
            << shape_str(tensor({1, 2}).shape()) << " "      // a vector
            << shape_str(tensor(5).shape()) << "\n";         // a scalar
  // doc:end braces

  // doc:begin literal_dtype
  // A plain double takes the tensor's dtype: float32 stays float32.
  Tensor h = tensor({1, 2});  // float32
  std::cout << dtype_name((h * 0.1).dtype()) << " "
            << dtype_name((h * scalar(0.1)).dtype()) << "\n";
  // doc:end literal_dtype

  // doc:begin mixing
  // Two tensors of different dtypes never mix: convert one yourself.
  Tensor d = tensor({1, 2}, DType::float64);
  try {
    Tensor bad = h + d;
  } catch (const std::invalid_argument& e) {
    std::cout << e.what() << "\n";
  }
  Tensor ok = from_vector(h.to_vector(), h.shape(), DType::float64) + d;
  std::cout << ok.repr() << "\n";
  // doc:end mixing

  // doc:begin softmax_inf
  // A row whose every entry is -inf has no finite maximum: exp(-inf - -inf)
  // is exp(nan), so the row is nan, as in NumPy. Keep one key unmasked.
  Tensor scores = tensor({{0, -INFINITY}, {-INFINITY, -INFINITY}});
  std::cout << softmax(scores, -1) << "\n";
  // doc:end softmax_inf
  return 0;
}
