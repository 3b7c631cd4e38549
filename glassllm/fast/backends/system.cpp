// backends/system.cpp: -DGLASSLLM_BLAS=system. Products go to the BLAS that
// CMake's FindBLAS found (Accelerate on macOS, MKL, BLIS, FlexiBLAS,
// OpenBLAS, ...), linked at build time, through the standard CBLAS interface.
// CMake checked at configure time that the library exports cblas_sgemm.
//
// The library's own header is not included (its name differs between
// vendors: cblas.h, Accelerate/Accelerate.h, mkl_cblas.h); the five functions
// are declared below as the CBLAS standard defines them, with its enums as
// the ints they are. Threads are the library's own business (its environment
// variables, e.g. OMP_NUM_THREADS or VECLIB_MAXIMUM_THREADS): there is no
// standard call to set them.
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "glassllm/fast/blas_backend.h"

extern "C" {
void cblas_sgemm(int order, int trans_a, int trans_b, int M, int N, int K, float alpha,
                 const float* A, int lda, const float* B, int ldb, float beta, float* C,
                 int ldc);
void cblas_dgemm(int order, int trans_a, int trans_b, int M, int N, int K, double alpha,
                 const double* A, int lda, const double* B, int ldb, double beta,
                 double* C, int ldc);
void cblas_sgemv(int order, int trans, int M, int N, float alpha, const float* A, int lda,
                 const float* x, int incx, float beta, float* y, int incy);
void cblas_dgemv(int order, int trans, int M, int N, double alpha, const double* A,
                 int lda, const double* x, int incx, double beta, double* y, int incy);
}

#ifndef GLASSLLM_SYSTEM_BLAS_LIBRARIES
#define GLASSLLM_SYSTEM_BLAS_LIBRARIES "the system BLAS"
#endif

namespace glassllm::backend {

namespace {

// From the CBLAS standard: enum CBLAS_ORDER, CBLAS_TRANSPOSE.
constexpr int CblasRowMajor = 101;
constexpr int CblasNoTrans = 111;
constexpr int CblasTrans = 112;

int as_blas_int(std::size_t v) {
  if (v > std::size_t(std::numeric_limits<int>::max()))
    throw std::length_error("gemm: dimension " + std::to_string(v) +
                            " exceeds the 32-bit sizes of CBLAS");
  return int(v);
}

}  // namespace

BlasInfo info() {
  BlasInfo i;
  i.backend = "system";
  i.library = GLASSLLM_SYSTEM_BLAS_LIBRARIES;  // what FindBLAS linked
  i.core = "chosen by the library";
  i.config = "CBLAS, linked at build time (CMake FindBLAS)";
  i.threads = 0;  // set by the library's environment variables, not by GlassLM
  return i;
}

// No standard CBLAS call sets the library's threads (see the comment at the
// top), so products go to it whole.
bool threads_itself() {
  return true;
}

template <class T>
void gemm(bool trans_a, bool trans_b, std::size_t M, std::size_t N, std::size_t K,
          T alpha, const T* A, std::size_t lda, const T* B, std::size_t ldb, T beta, T* C,
          std::size_t ldc) {
  int ta = trans_a ? CblasTrans : CblasNoTrans, tb = trans_b ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, ta, tb, as_blas_int(M), as_blas_int(N), as_blas_int(K),
                alpha, A, as_blas_int(lda), B, as_blas_int(ldb), beta, C,
                as_blas_int(ldc));
  else
    cblas_dgemm(CblasRowMajor, ta, tb, as_blas_int(M), as_blas_int(N), as_blas_int(K),
                alpha, A, as_blas_int(lda), B, as_blas_int(ldb), beta, C,
                as_blas_int(ldc));
}

template <class T>
void gemv(bool trans, std::size_t rows, std::size_t cols, T alpha, const T* A,
          std::size_t lda, const T* x, std::size_t incx, T beta, T* y) {
  int t = trans ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemv(CblasRowMajor, t, as_blas_int(rows), as_blas_int(cols), alpha, A,
                as_blas_int(lda), x, as_blas_int(incx), beta, y, 1);
  else
    cblas_dgemv(CblasRowMajor, t, as_blas_int(rows), as_blas_int(cols), alpha, A,
                as_blas_int(lda), x, as_blas_int(incx), beta, y, 1);
}

GLASSLLM_BACKEND_INSTANCES(float)
GLASSLLM_BACKEND_INSTANCES(double)

}  // namespace glassllm::backend
