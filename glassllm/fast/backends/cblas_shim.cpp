// backends/cblas_shim.cpp: the CBLAS functions a program may still call in a
// -DGLASSLLM_BLAS=builtin build, where no BLAS library is linked: xtensor-blas's
// xt::linalg::dot calls cblas_?gemm, cblas_?gemv, cblas_?dot, and cblas_?syrk
// when it sees A @ A^T (glassllm/reference/ links all four for double). Each one
// here is the CBLAS standard's function over gemm_builtin.cpp, so code
// written against CBLAS links and runs unchanged. Compiled only in the
// builtin configuration (anywhere else these names belong to the library).
//
// Column-major arrays are handled by the identity (A B)^T = B^T A^T: a
// column-major C is C^T stored row-major, so the row-major product runs with
// A and B (and M and N) swapped. Conjugate transposes are plain transposes
// for real numbers. A negative increment walks a vector backwards from its
// far end, as the standard says.
#include <cstddef>
#include <vector>

#include "glassllm/fast/blas_internal.h"

namespace {

// CBLAS's enum values, fixed by the standard (cblas.h: CBLAS_ORDER, CBLAS_TRANSPOSE).
constexpr int CblasRowMajor = 101;
constexpr int CblasNoTrans = 111;
constexpr int CblasUpper = 121;  // CBLAS_UPLO

template <class T>
void gemm(int order, int trans_a, int trans_b, int M, int N, int K, T alpha, const T* A,
          int lda, const T* B, int ldb, T beta, T* C, int ldc) {
  if (M <= 0 || N <= 0 || K < 0) return;
  bool ta = trans_a != CblasNoTrans, tb = trans_b != CblasNoTrans;
  if (order == CblasRowMajor)
    glassllm::builtin_gemm<T>(ta, tb, std::size_t(M), std::size_t(N), std::size_t(K),
                              alpha, A, std::size_t(lda), B, std::size_t(ldb), beta, C,
                              std::size_t(ldc), 1);
  else  // C^T [N, M] = op(B)^T op(A)^T, all row-major
    glassllm::builtin_gemm<T>(tb, ta, std::size_t(N), std::size_t(M), std::size_t(K),
                              alpha, B, std::size_t(ldb), A, std::size_t(lda), beta, C,
                              std::size_t(ldc), 1);
}

// Where element 0 of an n-element vector with step inc is.
template <class T>
T* first(T* x, int n, int inc) {
  return inc < 0 ? x + std::ptrdiff_t(n - 1) * -inc : x;
}

template <class T>
void gemv(int order, int trans, int M, int N, T alpha, const T* A, int lda, const T* x,
          int incx, T beta, T* y, int incy) {
  if (M <= 0 || N <= 0) return;
  // A column-major [M, N] is a row-major [N, M]: the same product transposed.
  bool t = (trans != CblasNoTrans) != (order != CblasRowMajor);
  std::size_t rows = order == CblasRowMajor ? std::size_t(M) : std::size_t(N);
  std::size_t cols = order == CblasRowMajor ? std::size_t(N) : std::size_t(M);
  // op(A) of the original is [M, N] without trans, [N, M] with it.
  int n_in = trans != CblasNoTrans ? M : N, n_out = trans != CblasNoTrans ? N : M;
  glassllm::builtin_gemv<T>(t, rows, cols, alpha, A, std::size_t(lda),
                            first(x, n_in, incx), incx, beta, first(y, n_out, incy),
                            incy);
}

template <class T>
T dot(int n, const T* x, int incx, const T* y, int incy) {
  if (n <= 0) return T(0);
  return glassllm::builtin_dot<T>(std::size_t(n), first(x, n, incx), incx,
                                  first(y, n, incy), incy);
}

// C = alpha * op(A) op(A)^T + beta * C for a symmetric N x N C, op(A) [N, K]
// (A, or A^T when trans), updating only the `uplo` triangle of C. The full
// product goes to a scratch matrix through the GEMM, then the triangle is
// written; with beta == 0, C is not read (the standard allows garbage there).
template <class T>
void syrk(int order, int uplo, int trans, int N, int K, T alpha, const T* A, int lda,
          T beta, T* C, int ldc) {
  if (N <= 0) return;
  // A column-major [r, c] is a row-major [c, r]: its transpose flag flips.
  bool t = (trans != CblasNoTrans) != (order != CblasRowMajor);
  std::vector<T> product(std::size_t(N) * std::size_t(N), T(0));  // [N, N], row-major
  if (K > 0)
    glassllm::builtin_gemm<T>(t, !t, std::size_t(N), std::size_t(N), std::size_t(K), T(1),
                              A, std::size_t(lda), A, std::size_t(lda), T(0),
                              product.data(), std::size_t(N), 1);
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) {
      if (uplo == CblasUpper ? j < i : j > i) continue;  // the other triangle
      T& c = order == CblasRowMajor
                 ? C[std::size_t(i) * std::size_t(ldc) + std::size_t(j)]
                 : C[std::size_t(j) * std::size_t(ldc) + std::size_t(i)];
      T p = alpha * product[std::size_t(i) * std::size_t(N) + std::size_t(j)];
      c = beta == T(0) ? p : p + beta * c;
    }
}

}  // namespace

extern "C" {

void cblas_sgemm(int order, int trans_a, int trans_b, int M, int N, int K, float alpha,
                 const float* A, int lda, const float* B, int ldb, float beta, float* C,
                 int ldc) {
  gemm(order, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void cblas_dgemm(int order, int trans_a, int trans_b, int M, int N, int K, double alpha,
                 const double* A, int lda, const double* B, int ldb, double beta,
                 double* C, int ldc) {
  gemm(order, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void cblas_sgemv(int order, int trans, int M, int N, float alpha, const float* A, int lda,
                 const float* x, int incx, float beta, float* y, int incy) {
  gemv(order, trans, M, N, alpha, A, lda, x, incx, beta, y, incy);
}

void cblas_dgemv(int order, int trans, int M, int N, double alpha, const double* A,
                 int lda, const double* x, int incx, double beta, double* y, int incy) {
  gemv(order, trans, M, N, alpha, A, lda, x, incx, beta, y, incy);
}

float cblas_sdot(int n, const float* x, int incx, const float* y, int incy) {
  return dot(n, x, incx, y, incy);
}

double cblas_ddot(int n, const double* x, int incx, const double* y, int incy) {
  return dot(n, x, incx, y, incy);
}

void cblas_ssyrk(int order, int uplo, int trans, int N, int K, float alpha,
                 const float* A, int lda, float beta, float* C, int ldc) {
  syrk(order, uplo, trans, N, K, alpha, A, lda, beta, C, ldc);
}

void cblas_dsyrk(int order, int uplo, int trans, int N, int K, double alpha,
                 const double* A, int lda, double beta, double* C, int ldc) {
  syrk(order, uplo, trans, N, K, alpha, A, lda, beta, C, ldc);
}

}  // extern "C"
