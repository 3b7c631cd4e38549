// matmul_two_ways.cpp: the matrix product by its definition (naive_matmul,
// three loops) and by BLAS (matmul, one GEMM per matrix), on a product you
// can check by hand and on one of the model's shapes. Quoted by
// docs/01-tensors-and-broadcasting.md.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "glassllm/engine/naive_matmul.h"
#include "glassllm/engine/ops.h"

using namespace glassllm;

int main() {
  // doc:begin small
  Tensor a = tensor({{1, 2, 3}, {4, 5, 6}});       // (2,3)
  Tensor b = tensor({{7, 8}, {9, 10}, {11, 12}});  // (3,2)
  std::cout << "naive_matmul(a, b) =\n" << naive_matmul(a, b) << "\n";
  std::cout << "matmul(a, b) =\n" << matmul(a, b) << "\n";
  // doc:end small

  // doc:begin model_shape
  // A batch of 8 sequences of 64 tokens through one projection of the
  // default model: [8, 64, 128] @ [128, 384], float32.
  Tensor x = randn({8, 64, 128}, 1), w = randn({128, 384}, 2) * 0.1;
  std::vector<double> fast = matmul(x, w).to_vector();
  std::vector<double> slow = naive_matmul(x, w).to_vector();
  double gap = 0, largest = 0;
  for (std::size_t i = 0; i < fast.size(); ++i) {
    gap = std::max(gap, std::fabs(fast[i] - slow[i]));
    largest = std::max(largest, std::fabs(slow[i]));
  }
  std::printf(
      "%zu products of length 128; largest |value| above 1: %s; "
      "max |matmul - naive_matmul| < 1e-5: %s\n",
      fast.size(), largest > 1 ? "yes" : "no", gap < 1e-5 ? "yes" : "no");
  // doc:end model_shape
  return 0;
}
