// blas_backend.h (private): what each matrix-product backend provides to
// blas.cpp. Exactly one of glassllm/fast/backends/{openblas,system,builtin}.cpp
// is compiled, as -DGLASSLLM_BLAS chose at configure time (CMakeLists.txt).
// Sizes are already checked and nonzero when these are called. Standard
// headers only.
#pragma once

#include <cstddef>

#include "glassllm/fast/blas.h"

namespace glassllm::backend {

/// Describes the backend (BlasInfo's fields; blas.cpp fills in threads).
BlasInfo info();

/// True if the library spreads each product over its own threads (the
/// system backend); blas.cpp then passes products whole. Otherwise (openblas,
/// builtin) the backend computes on the calling thread and blas.cpp splits
/// products over GlassLM's pool (pool.h).
bool threads_itself();

/// C = alpha * op(A) op(B) + beta * C, row-major, as glassllm::gemm.
template <class T>
void gemm(bool trans_a, bool trans_b, std::size_t M, std::size_t N, std::size_t K,
          T alpha, const T* A, std::size_t lda, const T* B, std::size_t ldb, T beta, T* C,
          std::size_t ldc);

/// y = alpha * op(A) x + beta * y (y contiguous), A row-major [rows, cols].
template <class T>
void gemv(bool trans, std::size_t rows, std::size_t cols, T alpha, const T* A,
          std::size_t lda, const T* x, std::size_t incx, T beta, T* y);

// Each backend file ends with GLASSLLM_BACKEND_INSTANCES(float) and
// GLASSLLM_BACKEND_INSTANCES(double): the versions of its gemm and gemv that
// blas.cpp calls, compiled where their templates are defined.
#define GLASSLLM_BACKEND_INSTANCES(T)                                                   \
  template void gemm<T>(bool, bool, std::size_t, std::size_t, std::size_t, T, const T*, \
                        std::size_t, const T*, std::size_t, T, T*, std::size_t);        \
  template void gemv<T>(bool, std::size_t, std::size_t, T, const T*, std::size_t,       \
                        const T*, std::size_t, T, T*);

}  // namespace glassllm::backend
