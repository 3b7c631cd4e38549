// few_rows.h (private): products of 1 to 8 rows that read B once, in place
// (few_rows.cpp). Speed only: blas.cpp's gemm() sends a decode step's
// products here instead of to the BLAS library, which would first pack
// (copy) all of B -- the very copy the grouped K/V path exists to avoid.
#pragma once

#include <cstddef>

namespace glassllm {

/// C = alpha * A @ op(B) + beta * C for M = 1..8 rows of A [M, K], with
/// op(B) = B^T for B [N, K] when trans_b, else B [K, N]; row-major with row
/// lengths lda, ldb, ldc. Each row of C is computed the same way whatever M,
/// so a row gives the same bits alone or among others. Defined for float and
/// double; one call is one task of the pool.
template <class T>
void few_rows_task(bool trans_b, std::size_t M, std::size_t N, std::size_t K, T alpha,
                   const T* A, std::size_t lda, const T* B, std::size_t ldb, T beta, T* C,
                   std::size_t ldc);

}  // namespace glassllm
