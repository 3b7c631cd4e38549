// Tests for GlassLM's own GEMM, GEMV and dot (glassllm/fast/gemm_builtin.cpp),
// compiled in every configuration, and for the few-rows kernels of gemm()
// (glassllm/fast/blas.cpp), which every backend's products of up to 8 rows
// go through. Expected values come from naive loops
// written here and summed in long double, never from the code under test;
// tolerances are relative to the size of the sum (a different summation
// order on another CPU changes only the last bits).
#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <random>
#include <vector>

#include "glassllm/fast/blas_internal.h"

using namespace glassllm;

namespace {

template <class T>
std::vector<T> random_vector(std::size_t n, unsigned seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<T> v(n);
  for (T& x : v) x = T(dist(engine));
  return v;
}

template <class T>
double tolerance(std::size_t K) {
  // |sum of K products of numbers below 1| <= K; rounding grows like sqrt(K) eps,
  // bounded here by K eps with a margin.
  double eps = sizeof(T) == 4 ? 1.2e-7 : 2.3e-16;
  return 4.0 * eps * double(K + 2);
}

// C = alpha op(A) op(B) + beta C checked element by element against a loop,
// computed by builtin_gemm on `threads` threads, or by gemm() when threads is
// 0. When beta is 0, C starts as NaN: it must be overwritten, never read.
template <class T>
void check_gemm(bool ta, bool tb, std::size_t M, std::size_t N, std::size_t K, T alpha,
                T beta, int threads) {
  CAPTURE(ta);
  CAPTURE(tb);
  CAPTURE(M);
  CAPTURE(N);
  CAPTURE(K);
  CAPTURE(threads);
  // Row lengths larger than needed, so that lda/ldb/ldc are really used.
  const std::size_t lda = (ta ? M : K) + 3, ldb = (tb ? K : N) + 2, ldc = N + 5;
  auto A = random_vector<T>((ta ? K : M) * lda, 1),
       B = random_vector<T>((tb ? N : K) * ldb, 2);
  auto C = random_vector<T>(M * ldc, 3);
  if (beta == T(0))
    for (std::size_t i = 0; i < M; ++i)
      for (std::size_t j = 0; j < N; ++j) C[i * ldc + j] = T(std::nan(""));
  const auto C0 = C;
  if (threads == 0)
    gemm<T>(ta, tb, M, N, K, alpha, A.data(), lda, B.data(), ldb, beta, C.data(), ldc);
  else
    builtin_gemm<T>(ta, tb, M, N, K, alpha, A.data(), lda, B.data(), ldb, beta, C.data(),
                    ldc, threads);
  const double tol = tolerance<T>(K) * (std::fabs(double(alpha)) + 1);
  for (std::size_t i = 0; i < M; ++i)
    for (std::size_t j = 0; j < N; ++j) {
      long double sum = 0;
      for (std::size_t k = 0; k < K; ++k)
        sum += (long double)(ta ? A[k * lda + i] : A[i * lda + k]) *
               (long double)(tb ? B[j * ldb + k] : B[k * ldb + j]);
      long double expected = (long double)alpha * sum;
      if (beta != T(0)) expected += (long double)beta * C0[i * ldc + j];
      CAPTURE(i);
      CAPTURE(j);
      REQUIRE(std::fabs(double(C[i * ldc + j] - expected)) <= tol);
    }
  // Padding between rows is never written.
  for (std::size_t i = 0; i < M; ++i)
    for (std::size_t j = N; j < ldc; ++j) REQUIRE(C[i * ldc + j] == C0[i * ldc + j]);
}

}  // namespace

TEST_CASE("builtin_gemm matches a loop for every transpose, edge tiles and blocking") {
  // Sizes that are not multiples of the micro-tile (MR 6 or 8, NR 8..32), K
  // beyond one K block (KC <= 384) and M beyond one M block (MC >= 64).
  const std::size_t shapes[][3] = {{1, 1, 1},     {2, 3, 4},    {7, 9, 5},
                                   {13, 33, 17},  {64, 64, 64}, {37, 70, 400},
                                   {300, 41, 29}, {5, 600, 3}};
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (const auto& s : shapes) {
        check_gemm<float>(ta, tb, s[0], s[1], s[2], 1.0f, 0.0f, 1);
        check_gemm<double>(ta, tb, s[0], s[1], s[2], 1.0, 0.0, 1);
      }
}

TEST_CASE("builtin_gemm applies alpha and beta as BLAS does") {
  check_gemm<double>(false, true, 9, 11, 13, -0.5, 2.0, 1);
  check_gemm<float>(true, false, 9, 11, 13, 3.0f, 1.0f, 1);
  // beta = 0 overwrites C even where it held NaN; K = 0 leaves beta * C.
  std::vector<double> A{1, 2}, B{3, 4}, C{std::nan(""), 5};
  builtin_gemm<double>(false, false, 1, 1, 2, 1.0, A.data(), 2, B.data(), 1, 0.0,
                       C.data(), 1, 1);
  CHECK(C[0] == 11.0);  // 1*3 + 2*4
  builtin_gemm<double>(false, false, 1, 2, 0, 1.0, A.data(), 1, B.data(), 2, 2.0,
                       C.data(), 2, 1);
  CHECK(C[0] == 22.0);
  CHECK(C[1] == 10.0);
}

TEST_CASE("gemm's few-rows kernels apply alpha and beta and write only C's elements") {
  // 1 to 8 rows of A (decoding, attention's decode step): blas.cpp's own
  // kernels. K = 16, 48 and 64 are 1, 3 and 4 whole AVX-512 batches of
  // floats (few_rows_nt_held, whose put differs with beta == 0 and beta != 0),
  // K = 40 is not a whole number of batches, and N = 301 leaves keys after
  // the last whole block.
  for (bool tb : {true, false})
    for (std::size_t M = 1; M <= 8; ++M)
      for (std::size_t K : {16, 40, 48, 64})
        for (std::size_t N : {37, 301}) {
          check_gemm<float>(false, tb, M, N, K, 1.0f, 0.0f, 0);
          check_gemm<float>(false, tb, M, N, K, 0.5f, 0.0f, 0);
          check_gemm<float>(false, tb, M, N, K, -2.0f, 0.5f, 0);
          check_gemm<double>(false, tb, M, N, K, 0.5, 2.0, 0);
          check_gemm<double>(false, tb, M, N, K, 1.0, 0.0, 0);
        }
}

TEST_CASE("builtin_gemm gives the same bits on one thread and on several") {
  // 2048 x 384 x 128 (the MLP's shape in the benchmark) splits across threads.
  const std::size_t M = 2048, N = 384, K = 128;
  auto A = random_vector<float>(M * K, 4), B = random_vector<float>(N * K, 5);
  std::vector<float> one(M * N), three(M * N);
  builtin_gemm<float>(false, true, M, N, K, 1.0f, A.data(), K, B.data(), K, 0.0f,
                      one.data(), N, 1);
  builtin_gemm<float>(false, true, M, N, K, 1.0f, A.data(), K, B.data(), K, 0.0f,
                      three.data(), N, 3);
  CHECK(one == three);
  check_gemm<float>(false, true, 700, 300, 50, 1.0f, 0.5f, 3);
}

TEST_CASE("builtin_gemv and builtin_dot match loops, with strides") {
  for (bool trans : {false, true}) {
    CAPTURE(trans);
    const std::size_t rows = 37, cols = 45, lda = 50;
    const std::size_t n_in = trans ? rows : cols, n_out = trans ? cols : rows;
    auto A = random_vector<double>(rows * lda, 6), x = random_vector<double>(n_in * 3, 7);
    auto y = random_vector<double>(n_out * 2, 8);
    const auto y0 = y;
    builtin_gemv<double>(trans, rows, cols, 2.0, A.data(), lda, x.data(), 3, 0.5,
                         y.data(), 2);
    for (std::size_t i = 0; i < n_out; ++i) {
      long double sum = 0;
      for (std::size_t k = 0; k < n_in; ++k)
        sum += (long double)(trans ? A[k * lda + i] : A[i * lda + k]) * x[k * 3];
      CAPTURE(i);
      CHECK(std::fabs(double(y[i * 2] - (2.0L * sum + 0.5L * y0[i * 2]))) <= 1e-13);
      CHECK(y[i * 2 + 1] == y0[i * 2 + 1]);  // between the strided elements: untouched
    }
  }
  // Hand-computed: 1*4 + 2*5 + 3*6 = 32; with x strided by 2: 1*4 + 3*5 = 19.
  std::vector<float> x{1, 2, 3}, y{4, 5, 6};
  CHECK(builtin_dot<float>(3, x.data(), 1, y.data(), 1) == 32.0f);
  CHECK(builtin_dot<float>(2, x.data(), 2, y.data(), 1) == 19.0f);
  auto a = random_vector<double>(1001, 9), b = random_vector<double>(1001, 10);
  long double expected = 0;
  for (std::size_t i = 0; i < a.size(); ++i) expected += (long double)a[i] * b[i];
  CHECK(std::fabs(double(builtin_dot<double>(a.size(), a.data(), 1, b.data(), 1) -
                         expected)) <= 1e-12);
}
