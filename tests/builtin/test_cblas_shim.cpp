// Tests for the CBLAS functions the builtin backend provides
// (glassllm/fast/backends/cblas_shim.cpp); compiled only when
// -DGLASSLLM_BLAS=builtin. They are called exactly as CBLAS code calls them,
// through the standard's declarations, and compared with loops written here
// (row- and column-major, transposes, alpha and beta, negative increments).
#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <vector>

#include "glassllm/fast/blas.h"

extern "C" {
// As the CBLAS standard declares them (enums as the ints they are).
void cblas_sgemm(int, int, int, int, int, int, float, const float*, int, const float*,
                 int, float, float*, int);
void cblas_dgemm(int, int, int, int, int, int, double, const double*, int, const double*,
                 int, double, double*, int);
void cblas_sgemv(int, int, int, int, float, const float*, int, const float*, int, float,
                 float*, int);
void cblas_dgemv(int, int, int, int, double, const double*, int, const double*, int,
                 double, double*, int);
float cblas_sdot(int, const float*, int, const float*, int);
double cblas_ddot(int, const double*, int, const double*, int);
void cblas_ssyrk(int, int, int, int, int, float, const float*, int, float, float*, int);
void cblas_dsyrk(int, int, int, int, int, double, const double*, int, double, double*,
                 int);
}

namespace {

constexpr int RowMajor = 101, ColMajor = 102, NoTrans = 111, Trans = 112, ConjTrans = 113;
constexpr int Upper = 121, Lower = 122;

// Element (r, c) of a matrix stored in `order` with leading dimension ld.
template <class T>
T& at(std::vector<T>& m, int order, int ld, int r, int c) {
  return order == RowMajor ? m[std::size_t(r * ld + c)] : m[std::size_t(c * ld + r)];
}

template <class T>
std::vector<T> ramp(std::size_t n, T scale) {  // 0.1, -0.2, 0.3, ... distinct values
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = scale * T(i % 2 ? -(double(i) + 1) : double(i) + 1) / T(10);
  return v;
}

template <class T, class Gemm>
void check_gemm(Gemm gemm, double tol) {
  const int M = 5, N = 7, K = 4;
  for (int order : {RowMajor, ColMajor})
    for (int ta : {NoTrans, Trans, ConjTrans})
      for (int tb : {NoTrans, Trans}) {
        CAPTURE(order);
        CAPTURE(ta);
        CAPTURE(tb);
        // op(A) is [M, K]: A is stored [M, K] or, transposed, [K, M].
        int a_rows = ta == NoTrans ? M : K, a_cols = ta == NoTrans ? K : M;
        int b_rows = tb == NoTrans ? K : N, b_cols = tb == NoTrans ? N : K;
        int lda = (order == RowMajor ? a_cols : a_rows) + 1;
        int ldb = (order == RowMajor ? b_cols : b_rows) + 2;
        int ldc = (order == RowMajor ? N : M) + 3;
        auto A = ramp<T>(std::size_t(lda * (order == RowMajor ? a_rows : a_cols)), T(1));
        auto B =
            ramp<T>(std::size_t(ldb * (order == RowMajor ? b_rows : b_cols)), T(0.5));
        auto C = ramp<T>(std::size_t(ldc * (order == RowMajor ? M : N)), T(2));
        auto C0 = C;
        gemm(order, ta, tb, M, N, K, T(1.5), A.data(), lda, B.data(), ldb, T(-2),
             C.data(), ldc);
        for (int i = 0; i < M; ++i)
          for (int j = 0; j < N; ++j) {
            double sum = 0;
            for (int k = 0; k < K; ++k)
              sum += double(ta == NoTrans ? at(A, order, lda, i, k)
                                          : at(A, order, lda, k, i)) *
                     double(tb == NoTrans ? at(B, order, ldb, k, j)
                                          : at(B, order, ldb, j, k));
            CAPTURE(i);
            CAPTURE(j);
            CHECK(std::fabs(double(at(C, order, ldc, i, j)) -
                            (1.5 * sum - 2 * double(at(C0, order, ldc, i, j)))) <= tol);
          }
      }
}

template <class T, class Gemv>
void check_gemv(Gemv gemv, double tol) {
  const int M = 6, N = 4;
  for (int order : {RowMajor, ColMajor})
    for (int trans : {NoTrans, Trans})
      for (int incx : {1, 2, -1})
        for (int incy : {1, -2}) {
          CAPTURE(order);
          CAPTURE(trans);
          CAPTURE(incx);
          CAPTURE(incy);
          int lda = (order == RowMajor ? N : M) + 1;
          auto A = ramp<T>(std::size_t(lda * (order == RowMajor ? M : N)), T(1));
          int n_in = trans == NoTrans ? N : M, n_out = trans == NoTrans ? M : N;
          auto x = ramp<T>(std::size_t(n_in * std::abs(incx)), T(0.3));
          auto y = ramp<T>(std::size_t(n_out * std::abs(incy)), T(0.7));
          auto y0 = y;
          gemv(order, trans, M, N, T(2), A.data(), lda, x.data(), incx, T(0.5), y.data(),
               incy);
          // Element i of a vector with a negative step sits (n-1-i)*|inc| from its start.
          auto elem = [](int n, int inc, int i) {
            return std::size_t(inc > 0 ? i * inc : (n - 1 - i) * -inc);
          };
          for (int i = 0; i < n_out; ++i) {
            double sum = 0;
            for (int k = 0; k < n_in; ++k)
              sum += double(trans == NoTrans ? at(A, order, lda, i, k)
                                             : at(A, order, lda, k, i)) *
                     double(x[elem(n_in, incx, k)]);
            CAPTURE(i);
            CHECK(std::fabs(double(y[elem(n_out, incy, i)]) -
                            (2 * sum + 0.5 * double(y0[elem(n_out, incy, i)]))) <= tol);
          }
        }
}

// C = alpha op(A) op(A)^T + beta C on one triangle; the other stays as it was.
template <class T, class Syrk>
void check_syrk(Syrk syrk, double tol) {
  const int N = 4, K = 3;
  for (int order : {RowMajor, ColMajor})
    for (int trans : {NoTrans, Trans})
      for (int uplo : {Upper, Lower}) {
        CAPTURE(order);
        CAPTURE(trans);
        CAPTURE(uplo);
        // op(A) is [N, K]: A is stored [N, K] or, transposed, [K, N].
        int a_rows = trans == NoTrans ? N : K, a_cols = trans == NoTrans ? K : N;
        int lda = (order == RowMajor ? a_cols : a_rows) + 1, ldc = N + 2;
        auto A = ramp<T>(std::size_t(lda * (order == RowMajor ? a_rows : a_cols)), T(1));
        auto C = ramp<T>(std::size_t(ldc * N), T(2));
        auto C0 = C;
        syrk(order, uplo, trans, N, K, T(1.5), A.data(), lda, T(-2), C.data(), ldc);
        for (int i = 0; i < N; ++i)
          for (int j = 0; j < N; ++j) {
            CAPTURE(i);
            CAPTURE(j);
            bool in_triangle = uplo == Upper ? i <= j : i >= j;
            double sum = 0;
            for (int k = 0; k < K; ++k)
              sum += double(trans == NoTrans ? at(A, order, lda, i, k)
                                             : at(A, order, lda, k, i)) *
                     double(trans == NoTrans ? at(A, order, lda, j, k)
                                             : at(A, order, lda, k, j));
            double expected = in_triangle
                                  ? 1.5 * sum - 2 * double(at(C0, order, ldc, i, j))
                                  : double(at(C0, order, ldc, i, j));
            CHECK(std::fabs(double(at(C, order, ldc, i, j)) - expected) <= tol);
          }
      }
}

}  // namespace

TEST_CASE("the builtin backend is the one running") {
  CHECK(glassllm::blas_info().backend == "builtin");
}

TEST_CASE("cblas_sgemm and cblas_dgemm (builtin shim) match loops in both orders") {
  check_gemm<float>(cblas_sgemm, 1e-5);
  check_gemm<double>(cblas_dgemm, 1e-13);
}

TEST_CASE("cblas_sgemv and cblas_dgemv (builtin shim) match loops, with negative steps") {
  check_gemv<float>(cblas_sgemv, 1e-5);
  check_gemv<double>(cblas_dgemv, 1e-13);
}

TEST_CASE("cblas_sdot and cblas_ddot (builtin shim) match hand-computed sums") {
  std::vector<double> x{1, 2, 3}, y{4, 5, 6};
  CHECK(cblas_ddot(3, x.data(), 1, y.data(), 1) == 32.0);   // 4 + 10 + 18
  CHECK(cblas_ddot(2, x.data(), 2, y.data(), 1) == 19.0);   // 1*4 + 3*5
  CHECK(cblas_ddot(3, x.data(), -1, y.data(), 1) == 28.0);  // 3*4 + 2*5 + 1*6
  CHECK(cblas_ddot(0, x.data(), 1, y.data(), 1) == 0.0);
  std::vector<float> xf{0.5f, -1.5f}, yf{2.0f, 4.0f};
  CHECK(cblas_sdot(2, xf.data(), 1, yf.data(), 1) == -5.0f);   // 1 - 6
  CHECK(cblas_sdot(2, xf.data(), 1, yf.data(), -1) == -1.0f);  // 0.5*4 - 1.5*2
}

TEST_CASE("cblas_ssyrk and cblas_dsyrk (builtin shim) update one triangle like loops") {
  // xtensor-blas's dot calls cblas_dsyrk for a product of a matrix with its
  // own transpose.
  check_syrk<float>(cblas_ssyrk, 1e-5);
  check_syrk<double>(cblas_dsyrk, 1e-13);
  // A = [[1, 2], [3, 4]]: A A^T = [[5, 11], [11, 25]]; beta = 0 ignores C.
  std::vector<double> a{1, 2, 3, 4}, c(4, -7.0);
  cblas_dsyrk(RowMajor, Upper, NoTrans, 2, 2, 1.0, a.data(), 2, 0.0, c.data(), 2);
  CHECK(c == std::vector<double>{5, 11, -7, 25});
}
