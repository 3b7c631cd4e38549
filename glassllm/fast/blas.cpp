// blas.cpp: every matrix product in GlassLM ends here, in one gemm over
// OpenBLAS. Nothing is linked at build time: the library is opened with
// dlopen on first use, for one reason.
//
// Debian 12 ships OpenBLAS 0.3.21, which chooses its kernels when it loads,
// from the CPU's model number. On a CPU newer than that release knows (our
// machines include family 6, model 207) it does not recognise the model and
// falls back to its generic SSE3 "Prescott" kernels: single-thread sgemm runs
// at 17-32 GFLOP/s instead of 83-155 with the SkylakeX (AVX-512) kernels the
// same CPU can run. OpenBLAS lets the environment variable OPENBLAS_CORETYPE
// override the choice, but reads it only while it is being loaded. A library
// linked into the program is loaded before main() runs, too early for us to
// set the variable; opening it ourselves lets us first look at the CPU's
// features (not its model number) and set OPENBLAS_CORETYPE to the best
// kernels it supports. A value the user has already set is left alone.
//
// CBLAS's enum values are fixed by the standard, so they appear below as
// plain ints and <cblas.h> is not needed (it also clashes with xtensor-blas).
#include "glassllm/fast/blas.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "glassllm/fast/blas_internal.h"
#include "glassllm/fast/vmath.h"  // xsimd, for the few-rows kernels

namespace glassllm {

namespace {

constexpr const char* kLibrary = "libopenblas.so.0";

// From the CBLAS standard (cblas.h): enum CBLAS_ORDER, CBLAS_TRANSPOSE.
constexpr int CblasRowMajor = 101;
constexpr int CblasNoTrans = 111;
constexpr int CblasTrans = 112;

// Debian's libopenblas0 uses 32-bit ints for sizes (blasint = int).
using SgemmFn = void (*)(int order, int trans_a, int trans_b, int M, int N, int K,
                         float alpha, const float* A, int lda, const float* B, int ldb,
                         float beta, float* C, int ldc);
using DgemmFn = void (*)(int order, int trans_a, int trans_b, int M, int N, int K,
                         double alpha, const double* A, int lda, const double* B, int ldb,
                         double beta, double* C, int ldc);
using SgemvFn = void (*)(int order, int trans, int M, int N, float alpha, const float* A,
                         int lda, const float* x, int incx, float beta, float* y,
                         int incy);
using DgemvFn = void (*)(int order, int trans, int M, int N, double alpha,
                         const double* A, int lda, const double* x, int incx, double beta,
                         double* y, int incy);
using SetThreadsFn = void (*)(int);
using GetThreadsFn = int (*)();
using GetStringFn = char* (*)();

struct OpenBlas {
  std::string path;
  SgemmFn sgemm = nullptr;
  DgemmFn dgemm = nullptr;
  SgemvFn sgemv = nullptr;
  DgemvFn dgemv = nullptr;
  SetThreadsFn set_num_threads = nullptr;
  GetThreadsFn get_num_threads = nullptr;  // optional; we remember our own value
  GetStringFn get_corename = nullptr;
  GetStringFn get_config = nullptr;
  int threads = 1;
};

OpenBlas blas;
std::once_flag blas_once;
std::mutex threads_mutex;

// The best OpenBLAS kernel family this CPU's features allow, judged by the
// instruction sets themselves; nullptr leaves OpenBLAS's own choice.
const char* coretype_for_this_cpu() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512cd"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
  return nullptr;
}

template <class F>
F symbol(void* handle, const char* name, bool required = true) {
  void* p = dlsym(handle, name);
  if (!p && required)
    throw std::runtime_error(std::string("blas: ") + kLibrary + " has no symbol " + name +
                             "; is it OpenBLAS?");
  return reinterpret_cast<F>(p);
}

// GLASSLLM_THREADS if set, else every core this process may use. Measured on
// the 2-core machine (default config): one-token decoding 4,800 -> 6,700
// tokens/s, because two cores' L2 caches hold the 3 MiB of float32 weights
// that one core's cannot; a training step 194 -> 166 ms. Each output element
// is still computed by one thread in one order, so a run repeats bit for bit
// with the same thread count.
int default_threads() {
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

void open_blas() {
  // Must precede dlopen: OpenBLAS reads it only while loading.
  if (!std::getenv("OPENBLAS_CORETYPE"))
    if (const char* core = coretype_for_this_cpu()) setenv("OPENBLAS_CORETYPE", core, 0);

  void* handle = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    throw std::runtime_error(std::string("blas: cannot open ") + kLibrary + ": " +
                             (why ? why : "unknown error") +
                             "; install OpenBLAS (apt-get install libopenblas0-pthread)");
  }
  OpenBlas b;
  b.sgemm = symbol<SgemmFn>(handle, "cblas_sgemm");
  b.dgemm = symbol<DgemmFn>(handle, "cblas_dgemm");
  b.sgemv = symbol<SgemvFn>(handle, "cblas_sgemv");
  b.dgemv = symbol<DgemvFn>(handle, "cblas_dgemv");
  b.set_num_threads = symbol<SetThreadsFn>(handle, "openblas_set_num_threads");
  b.get_num_threads = symbol<GetThreadsFn>(handle, "openblas_get_num_threads", false);
  b.get_corename = symbol<GetStringFn>(handle, "openblas_get_corename");
  b.get_config = symbol<GetStringFn>(handle, "openblas_get_config");
  // The file actually opened (the name above is resolved through ld.so's paths).
  Dl_info info{};
  b.path = dladdr(reinterpret_cast<void*>(b.sgemm), &info) && info.dli_fname
               ? info.dli_fname
               : kLibrary;
  b.threads = default_threads();
  b.set_num_threads(b.threads);
  blas = b;
}

// call_once rethrows open_blas's exception and lets a later call try again.
const OpenBlas& loaded() {
  std::call_once(blas_once, open_blas);
  return blas;
}

int as_blas_int(std::size_t v) {
  if (v > std::size_t(std::numeric_limits<int>::max()))
    throw std::length_error("gemm: dimension " + std::to_string(v) +
                            " exceeds the 32-bit sizes of OpenBLAS");
  return int(v);
}

// ---- a few rows against a long B ------------------------------------------------
//
// Attention's decode step in the grouped path multiplies G rows of queries
// (G = 4 for exaone-4.0-1.2b) with a K/V cache of thousands of positions:
// M = 2..8, and B is the whole cache of one head. OpenBLAS's GEMM first packs
// B into its own buffer (sgemm_incopy / itcopy: 58 % of that step's time, as
// `perf` shows), which is one more read and a write of the entire cache: the
// very copy the grouped path exists to avoid. These two kernels read B once,
// in place. Used only for such shapes; everything else goes to OpenBLAS.

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
  const OpenBlas& b = loaded();
  std::lock_guard<std::mutex> lock(threads_mutex);
  BlasInfo info;
  info.library = b.path;
  info.core = b.get_corename();
  info.config = b.get_config();
  info.threads = b.get_num_threads ? b.get_num_threads() : b.threads;
  return info;
}

void set_blas_threads(int n) {
  if (n < 1)
    throw std::invalid_argument("set_blas_threads: need at least 1 thread, got " +
                                std::to_string(n));
  loaded();
  std::lock_guard<std::mutex> lock(threads_mutex);
  blas.set_num_threads(n);
  blas.threads = n;
}

template <class T>
void gemm(bool trans_a, bool trans_b, std::size_t M, std::size_t N, std::size_t K,
          T alpha, const T* A, std::size_t lda, const T* B, std::size_t ldb, T beta, T* C,
          std::size_t ldc) {
  if (M == 0 || N == 0) return;
  if (K == 0) {
    // An empty sum: OpenBLAS would reject lda = 0, and the answer is known.
    for (std::size_t i = 0; i < M; ++i)
      for (std::size_t j = 0; j < N; ++j)
        C[i * ldc + j] = beta == T(0) ? T(0) : beta * C[i * ldc + j];
    return;
  }
  const OpenBlas& b = loaded();
  if (M == 1) {
    // One row (decoding one token): a matrix-vector product, y = op(B)^T x,
    // which GEMV streams through B once. op(B) is [K, N]: stored [N, K] when
    // trans_b (then y = B x), else [K, N] (then y = B^T x). x is A's one row,
    // or with trans_a A's one column, K elements lda apart. Each y_j is one
    // dot product whatever the thread count, so results stay reproducible.
    int trans = trans_b ? CblasNoTrans : CblasTrans;
    int rows = as_blas_int(trans_b ? N : K), cols = as_blas_int(trans_b ? K : N);
    int incx = as_blas_int(trans_a ? lda : 1);
    if constexpr (std::is_same_v<T, float>)
      b.sgemv(CblasRowMajor, trans, rows, cols, alpha, B, as_blas_int(ldb), A, incx, beta,
              C, 1);
    else
      b.dgemv(CblasRowMajor, trans, rows, cols, alpha, B, as_blas_int(ldb), A, incx, beta,
              C, 1);
    return;
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
  int ta = trans_a ? CblasTrans : CblasNoTrans;
  int tb = trans_b ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>)
    b.sgemm(CblasRowMajor, ta, tb, as_blas_int(M), as_blas_int(N), as_blas_int(K), alpha,
            A, as_blas_int(lda), B, as_blas_int(ldb), beta, C, as_blas_int(ldc));
  else
    b.dgemm(CblasRowMajor, ta, tb, as_blas_int(M), as_blas_int(N), as_blas_int(K), alpha,
            A, as_blas_int(lda), B, as_blas_int(ldb), beta, C, as_blas_int(ldc));
}

template void gemm<float>(bool, bool, std::size_t, std::size_t, std::size_t, float,
                          const float*, std::size_t, const float*, std::size_t, float,
                          float*, std::size_t);
template void gemm<double>(bool, bool, std::size_t, std::size_t, std::size_t, double,
                           const double*, std::size_t, const double*, std::size_t, double,
                           double*, std::size_t);

}  // namespace glassllm
