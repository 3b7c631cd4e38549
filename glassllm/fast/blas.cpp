// blas.cpp: every matrix product in GlassLM ends here, in one gemm(). It
// handles the shapes that need no library (an empty sum), sends one-row
// products to a matrix-vector product and a few rows against a long operand
// to the kernels below, and passes everything else to the backend chosen at
// configure time with -DGLASSLLM_BLAS (CMakeLists.txt):
//
//   openblas  backends/openblas.cpp  OpenBLAS, opened at run time (Linux)
//   system    backends/system.cpp    the BLAS CMake's FindBLAS found, via CBLAS
//   builtin   backends/builtin.cpp   gemm_builtin.cpp, no library at all
//
// blas_info() says which one runs.
#include "glassllm/fast/blas.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "glassllm/fast/blas_backend.h"
#include "glassllm/fast/blas_internal.h"
#include "glassllm/fast/vmath.h"  // xsimd, for the few-rows kernels

namespace glassllm {

// GLASSLLM_THREADS if set, else every core this process may use. Measured on
// the 2-core machine (default config, OpenBLAS): one-token decoding 4,800 ->
// 6,700 tokens/s, because two cores' L2 caches hold the 3 MiB of float32
// weights that one core's cannot; a training step 194 -> 166 ms. Each output
// element is still computed by one thread in one order, so a run repeats bit
// for bit with the same thread count.
int default_blas_threads() {
#ifdef GLASSLLM_SINGLE_THREAD
  // The WebAssembly engine (web/CMakeLists.txt) runs in a page without
  // shared memory: one thread, whatever the environment says.
  return 1;
#endif
  if (const char* env = std::getenv("GLASSLLM_THREADS")) {
    char* end = nullptr;
    long n = std::strtol(env, &end, 10);
    if (end == env || *end != '\0' || n < 1 || n > 1024)
      throw std::invalid_argument(std::string("blas: GLASSLLM_THREADS='") + env +
                                  "' is not a thread count (a whole number >= 1)");
    return int(n);
  }
  return int(std::max(1u, std::thread::hardware_concurrency()));
}

namespace {

// ---- a few rows against a long B ------------------------------------------------
//
// Attention's decode step in the grouped path multiplies G rows of queries
// (G = 4 for exaone-4.0-1.2b) with a K/V cache of thousands of positions:
// M = 2..8, and B is the whole cache of one head. OpenBLAS's GEMM first packs
// B into its own buffer (sgemm_incopy / itcopy: 58 % of that step's time, as
// `perf` shows), which is one more read and a write of the entire cache: the
// very copy the grouped path exists to avoid. These two kernels read B once,
// in place. Used only for such shapes; everything else goes to the backend.

// Stores alpha * value (+ beta * old) into c.
template <class T>
void put(T& c, T alpha, T value, T beta) {
  c = beta == T(0) ? alpha * value : alpha * value + beta * c;
}

// C[i, j] = alpha * sum_k A[i, k] B[j, k] + beta * C[i, j]  (op(B) = B^T, B is
// [N, K]): one pass over B's rows; each chunk of a row is loaded once and
// meets the MR rows of A, MR independent accumulators (MR is a template
// argument so that they stay in registers).
template <std::size_t MR, class T>
void few_rows_nt(std::size_t N, std::size_t K, T alpha, const T* A, std::size_t lda,
                 const T* B, std::size_t ldb, T beta, T* C, std::size_t ldc) {
  using V = xsimd::batch<T>;
  constexpr std::size_t W = V::size;
  for (std::size_t j = 0; j < N; ++j) {
    const T* b = B + j * ldb;
    V acc[MR];
    for (std::size_t i = 0; i < MR; ++i) acc[i] = V(T(0));
    std::size_t k = 0;
    for (; k + W <= K; k += W) {
      V bk = V::load_unaligned(b + k);
      for (std::size_t i = 0; i < MR; ++i)
        acc[i] = xsimd::fma(V::load_unaligned(A + i * lda + k), bk, acc[i]);
    }
    for (std::size_t i = 0; i < MR; ++i) {
      T dot = xsimd::hadd(acc[i]);
      for (std::size_t kk = k; kk < K; ++kk) dot += A[i * lda + kk] * b[kk];
      put(C[i * ldc + j], alpha, dot, beta);
    }
  }
}

// C[i, :] = alpha * sum_k A[i, k] B[k, :] + beta * C[i, :]  (B is [K, N], N
// small): one pass over B's rows, each added, scaled by A[i, k], into MR rows
// of accumulators (MR * N values, in L1).
template <std::size_t MR, class T>
void few_rows_nn(std::size_t N, std::size_t K, T alpha, const T* A, std::size_t lda,
                 const T* B, std::size_t ldb, T beta, T* C, std::size_t ldc) {
  using V = xsimd::batch<T>;
  constexpr std::size_t W = V::size;
  const std::size_t NV = N / W * W;  // the part done in whole batches
  std::vector<T> acc(MR * N, T(0));
  for (std::size_t k = 0; k < K; ++k) {
    const T* b = B + k * ldb;
    for (std::size_t i = 0; i < MR; ++i) {
      const T a = A[i * lda + k];
      T* row = acc.data() + i * N;
      for (std::size_t j = 0; j < NV; j += W)
        xsimd::fma(V(a), V::load_unaligned(b + j), V::load_unaligned(row + j))
            .store_unaligned(row + j);
      for (std::size_t j = NV; j < N; ++j) row[j] += a * b[j];
    }
  }
  for (std::size_t i = 0; i < MR; ++i)
    for (std::size_t j = 0; j < N; ++j) put(C[i * ldc + j], alpha, acc[i * N + j], beta);
}

// The same when N is NV whole batches (a head dim of 64 floats is 4 AVX-512
// batches): the MR * NV accumulators then live in registers.
template <std::size_t MR, std::size_t NV, class T>
void few_rows_nn_regs(std::size_t K, T alpha, const T* A, std::size_t lda, const T* B,
                      std::size_t ldb, T beta, T* C, std::size_t ldc) {
  using V = xsimd::batch<T>;
  constexpr std::size_t W = V::size;
  V acc[MR][NV];
  for (std::size_t i = 0; i < MR; ++i)
    for (std::size_t v = 0; v < NV; ++v) acc[i][v] = V(T(0));
  for (std::size_t k = 0; k < K; ++k) {
    V b[NV];
    for (std::size_t v = 0; v < NV; ++v) b[v] = V::load_unaligned(B + k * ldb + v * W);
    for (std::size_t i = 0; i < MR; ++i) {
      V a(A[i * lda + k]);
      for (std::size_t v = 0; v < NV; ++v) acc[i][v] = xsimd::fma(a, b[v], acc[i][v]);
    }
  }
  for (std::size_t i = 0; i < MR; ++i)
    for (std::size_t v = 0; v < NV; ++v) {
      alignas(64) T out[W];
      acc[i][v].store_aligned(out);
      for (std::size_t j = 0; j < W; ++j)
        put(C[i * ldc + v * W + j], alpha, out[j], beta);
    }
}

// Calls f with std::integral_constant<std::size_t, M> for M in 2..8.
template <class F>
void with_rows(std::size_t M, F f) {
  switch (M) {
    case 2:
      return f(std::integral_constant<std::size_t, 2>{});
    case 3:
      return f(std::integral_constant<std::size_t, 3>{});
    case 4:
      return f(std::integral_constant<std::size_t, 4>{});
    case 5:
      return f(std::integral_constant<std::size_t, 5>{});
    case 6:
      return f(std::integral_constant<std::size_t, 6>{});
    case 7:
      return f(std::integral_constant<std::size_t, 7>{});
    default:
      return f(std::integral_constant<std::size_t, 8>{});
  }
}

}  // namespace

BlasInfo blas_info() {
  return backend::info();
}

void set_blas_threads(int n) {
  if (n < 1)
    throw std::invalid_argument("set_blas_threads: need at least 1 thread, got " +
                                std::to_string(n));
  backend::set_threads(n);
}

template <class T>
void gemm(bool trans_a, bool trans_b, std::size_t M, std::size_t N, std::size_t K,
          T alpha, const T* A, std::size_t lda, const T* B, std::size_t ldb, T beta, T* C,
          std::size_t ldc) {
  if (M == 0 || N == 0) return;
  if (K == 0) {
    // An empty sum: a BLAS would reject lda = 0, and the answer is known.
    for (std::size_t i = 0; i < M; ++i)
      for (std::size_t j = 0; j < N; ++j)
        C[i * ldc + j] = beta == T(0) ? T(0) : beta * C[i * ldc + j];
    return;
  }
  if (M == 1) {
    // One row (decoding one token): a matrix-vector product, y = op(B)^T x,
    // which GEMV streams through B once. op(B) is [K, N]: stored [N, K] when
    // trans_b (then y = B x), else [K, N] (then y = B^T x). x is A's one row,
    // or with trans_a A's one column, K elements lda apart. Each y_j is one
    // dot product whatever the thread count, so results stay reproducible.
    return backend::gemv<T>(!trans_b, trans_b ? N : K, trans_b ? K : N, alpha, B, ldb, A,
                            trans_a ? lda : 1, beta, C);
  }
  // A few rows against a long B (attention's grouped decode step): read B
  // once, in place, instead of letting GEMM pack it (see few_rows_nt).
  if (!trans_a && M <= 8) {
    if (trans_b && N >= 256)
      return with_rows(M, [&](auto rows) {
        few_rows_nt<rows()>(N, K, alpha, A, lda, B, ldb, beta, C, ldc);
      });
    if (!trans_b && K >= 256 && N <= 256)
      return with_rows(M, [&](auto rows) {
        constexpr std::size_t W = xsimd::batch<T>::size;
        if (rows() <= 4 && N == 4 * W)
          few_rows_nn_regs<rows(), 4>(K, alpha, A, lda, B, ldb, beta, C, ldc);
        else
          few_rows_nn<rows()>(N, K, alpha, A, lda, B, ldb, beta, C, ldc);
      });
  }
  backend::gemm<T>(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

template void gemm<float>(bool, bool, std::size_t, std::size_t, std::size_t, float,
                          const float*, std::size_t, const float*, std::size_t, float,
                          float*, std::size_t);
template void gemm<double>(bool, bool, std::size_t, std::size_t, std::size_t, double,
                           const double*, std::size_t, const double*, std::size_t, double,
                           double*, std::size_t);

}  // namespace glassllm
