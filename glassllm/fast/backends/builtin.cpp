// backends/builtin.cpp: -DGLASSLLM_BLAS=builtin. Every product runs in
// gemm_builtin.cpp, GlassLM's own C++ GEMM: no library is linked or opened.
// This is the backend of systems without a BLAS (WebAssembly) and of CI's
// portable configuration.
#include "glassllm/fast/blas_backend.h"
#include "glassllm/fast/blas_internal.h"

namespace glassllm::backend {

namespace {

const char* vector_width() {
#if defined(__AVX512F__)
  return "AVX-512";
#elif defined(__AVX__)
  return "AVX";
#elif defined(__SSE2__)
  return "SSE2";
#elif defined(__ARM_NEON)
  return "NEON";
#elif defined(__wasm_simd128__)
  return "WebAssembly SIMD";
#else
  return "scalar";
#endif
}

}  // namespace

BlasInfo info() {
  BlasInfo i;
  i.backend = "builtin";
  i.library = "none (glassllm/fast/gemm_builtin.cpp)";
  i.core = std::string("C++ micro-kernel, compiled for ") + vector_width();
  i.config = "packing, cache blocking, register tiles; no BLAS library";
  return i;
}

bool threads_itself() {
  return false;
}

template <class T>
void gemm(bool trans_a, bool trans_b, std::size_t M, std::size_t N, std::size_t K,
          T alpha, const T* A, std::size_t lda, const T* B, std::size_t ldb, T beta, T* C,
          std::size_t ldc) {
  builtin_gemm<T>(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, 1);
}

template <class T>
void gemv(bool trans, std::size_t rows, std::size_t cols, T alpha, const T* A,
          std::size_t lda, const T* x, std::size_t incx, T beta, T* y) {
  builtin_gemv<T>(trans, rows, cols, alpha, A, lda, x, std::ptrdiff_t(incx), beta, y, 1);
}

GLASSLLM_BACKEND_INSTANCES(float)
GLASSLLM_BACKEND_INSTANCES(double)

}  // namespace glassllm::backend
