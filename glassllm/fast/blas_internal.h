// blas_internal.h (private): the one matrix-product primitive of the engine.
// Implemented in blas.cpp over OpenBLAS; used by ops_matmul.cpp and the
// benchmark. Standard headers only.
#pragma once

#include <cstddef>

namespace glassllm {

/// C = alpha * op(A) @ op(B) + beta * C, all row-major, where op(A) is A or
/// A^T as trans_a says. op(A) is [M, K], op(B) is [K, N], C is [M, N].
/// lda, ldb, ldc are the row lengths of A, B, C as stored (so A stored [K, M]
/// with trans_a has lda >= M). Defined for float and double. With K == 0 the
/// product is empty and C becomes beta * C.
template <class T>
void gemm(bool trans_a, bool trans_b, std::size_t M, std::size_t N, std::size_t K,
          T alpha, const T* A, std::size_t lda, const T* B, std::size_t ldb, T beta, T* C,
          std::size_t ldc);

}  // namespace glassllm
