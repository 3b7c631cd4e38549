// blas_internal.h (private): the one matrix-product primitive of the engine,
// and GlassLM's own implementation of it. gemm() is implemented in blas.cpp
// over the backend chosen at configure time (-DGLASSLLM_BLAS, see
// glassllm/fast/backends/); builtin_gemm() and its neighbours in
// gemm_builtin.cpp, compiled in every configuration. Used by ops_matmul.cpp
// and the benchmark. Standard headers only.
#pragma once

#include <cstddef>

namespace glassllm {

/// The least work, in floating-point operations, that the products give a
/// task of the pool: less is not worth waking a thread for
/// (blas.cpp, "splitting a product into tasks").
inline constexpr double kTaskFlops = 2e6;

/// C = alpha * op(A) @ op(B) + beta * C, all row-major, where op(A) is A or
/// A^T as trans_a says. op(A) is [M, K], op(B) is [K, N], C is [M, N].
/// lda, ldb, ldc are the row lengths of A, B, C as stored (so A stored [K, M]
/// with trans_a has lda >= M). Defined for float and double. With K == 0 the
/// product is empty and C becomes beta * C.
template <class T>
void gemm(bool trans_a, bool trans_b, std::size_t M, std::size_t N, std::size_t K,
          T alpha, const T* A, std::size_t lda, const T* B, std::size_t ldb, T beta, T* C,
          std::size_t ldc);

/// gemm() for `count` products of the same sizes: product i reads
/// A + a_offsets[i] and B + b_offsets[i] and writes C + i * c_stride. The
/// products run in parallel (one task each) when they are many and small.
template <class T>
void gemm_batch(std::size_t count, bool trans_a, bool trans_b, std::size_t M,
                std::size_t N, std::size_t K, T alpha, const T* A,
                const std::size_t* a_offsets, std::size_t lda, const T* B,
                const std::size_t* b_offsets, std::size_t ldb, T beta, T* C,
                std::size_t c_stride, std::size_t ldc);

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
