// naive_matmul.h: the matrix product written as the three loops of its
// definition, C[i, j] = sum_k A[i, k] * B[k, j]. Standard headers only.
//
// matmul (ops.h) computes the same thing through a BLAS GEMM
// (glassllm/fast/blas.cpp): blocked, vectorised, threaded, and hundreds of
// times faster on the model's shapes, but not something you can check by
// reading it. This one you can. The tests use it as the reference that
// matmul, matmul_t and linear must match (tests/test_ops_matmul.cpp), and
// docs/01-tensors-and-broadcasting.md shows the two side by side.
#pragma once

#include "glassllm/engine/tensor.h"

namespace glassllm {

/// np.matmul by three loops: [..., n, k] @ [..., k, m] -> [..., n, m], batch
/// axes broadcast, a 1-D operand promoted to a matrix and the added axis
/// removed again, exactly as matmul(); bad shapes or mixed dtypes throw
/// std::invalid_argument naming naive_matmul and both shapes. Each sum is
/// accumulated in double and rounded once to the inputs' dtype, so in float32
/// it is the more exact of the two. No gradient is recorded.
///   Tensor c = naive_matmul(a, b);   // == matmul(a, b) up to rounding
Tensor naive_matmul(const Tensor& a, const Tensor& b);

}  // namespace glassllm
