// blas_internal.h (private): GlassLM's own implementation of the matrix
// products that include/glassllm/fast/kernels.h declares. gemm() is
// implemented in blas.cpp over the backend chosen at configure time
// (-DGLASSLLM_BLAS, see glassllm/fast/backends/); builtin_gemm() and its
// neighbours in gemm_builtin.cpp, compiled in every configuration. Used by
// the backends, the benchmark and the tests. Standard headers only.
#pragma once

#include <cstddef>

#include "glassllm/fast/kernels.h"  // gemm, gemm_batch, kTaskFlops

namespace glassllm {

/// The built-in GEMM (gemm_builtin.cpp): the same contract as gemm(), in
/// plain C++ (packing, cache blocking, a register-tiled micro-kernel), on up
/// to `threads` threads. Results do not depend on the thread count.
template <class T>
void builtin_gemm(bool trans_a, bool trans_b, std::size_t M, std::size_t N, std::size_t K,
                  T alpha, const T* A, std::size_t lda, const T* B, std::size_t ldb,
                  T beta, T* C, std::size_t ldc, int threads);

/// y = alpha * op(A) x + beta * y, A row-major [rows, cols] with row length
/// lda, op(A) = A^T when trans. x and y are strided by incx, incy (element i
/// at x[i * incx]; the caller points at element 0, also for negative steps).
template <class T>
void builtin_gemv(bool trans, std::size_t rows, std::size_t cols, T alpha, const T* A,
                  std::size_t lda, const T* x, std::ptrdiff_t incx, T beta, T* y,
                  std::ptrdiff_t incy);

/// sum_i x[i * incx] * y[i * incy] over n elements.
template <class T>
T builtin_dot(std::size_t n, const T* x, std::ptrdiff_t incx, const T* y,
              std::ptrdiff_t incy);

/// The threads a product may use by default: GLASSLLM_THREADS if set, else
/// every core this process may use (blas.cpp). Throws std::invalid_argument
/// naming the variable for a value that is not a whole number >= 1.
int default_blas_threads();

}  // namespace glassllm
