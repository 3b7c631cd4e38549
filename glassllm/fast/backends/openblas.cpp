// backends/openblas.cpp: -DGLASSLLM_BLAS=openblas (the default on Linux).
// Products go to OpenBLAS, and nothing is linked at build time: the library
// is opened with dlopen on first use, for one reason.
//
// Debian 12 ships OpenBLAS 0.3.21, which chooses its kernels when it loads,
// from the CPU's model number. On a CPU newer than that release knows (our
// machines include family 6, model 207) it does not recognise the model and
// falls back to its generic SSE3 "Prescott" kernels, several times slower
// than the SkylakeX (AVX-512) kernels the same CPU can run. OpenBLAS lets the environment
// variable OPENBLAS_CORETYPE override the choice, but reads it only while it is being
// loaded. A library linked into the program is loaded before main() runs, too early for
// us to set the variable; opening it ourselves lets us first look at the CPU's features
// (not its model number) and set OPENBLAS_CORETYPE to the best kernels it supports. A
// value the user has already set is left alone.
//
// OpenBLAS computes on one thread, the caller's: blas.cpp splits each product
// into tasks for GlassLM's own pool (pool.cpp says why), and
// OPENBLAS_NUM_THREADS=1, set before loading unless the user set it, keeps
// OpenBLAS from even starting threads of its own.
//
// CBLAS's enum values are fixed by the standard, so they appear below as
// plain ints and <cblas.h> is not needed (it also clashes with xtensor-blas).
#include <dlfcn.h>

#include <cstdlib>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "glassllm/fast/blas_backend.h"
#include "glassllm/fast/blas_internal.h"

namespace glassllm::backend {

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
using GetStringFn = char* (*)();

struct OpenBlas {
  std::string path;
  SgemmFn sgemm = nullptr;
  DgemmFn dgemm = nullptr;
  SgemvFn sgemv = nullptr;
  DgemvFn dgemv = nullptr;
  SetThreadsFn set_num_threads = nullptr;
  GetStringFn get_corename = nullptr;
  GetStringFn get_config = nullptr;
};

OpenBlas blas;
std::once_flag blas_once;

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

void open_blas() {
  // Must precede dlopen: OpenBLAS reads it only while loading.
  if (!std::getenv("OPENBLAS_CORETYPE"))
    if (const char* core = coretype_for_this_cpu()) setenv("OPENBLAS_CORETYPE", core, 0);
  setenv("OPENBLAS_NUM_THREADS", "1", 0);

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
  b.get_corename = symbol<GetStringFn>(handle, "openblas_get_corename");
  b.get_config = symbol<GetStringFn>(handle, "openblas_get_config");
  // The file actually opened (the name above is resolved through ld.so's paths).
  Dl_info info{};
  b.path = dladdr(reinterpret_cast<void*>(b.sgemm), &info) && info.dli_fname
               ? info.dli_fname
               : kLibrary;
  b.set_num_threads(1);  // also if OPENBLAS_NUM_THREADS said otherwise
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

}  // namespace

BlasInfo info() {
  const OpenBlas& b = loaded();
  BlasInfo info;
  info.backend = "openblas";
  info.library = b.path;
  info.core = b.get_corename();
  info.config = b.get_config();
  return info;
}

bool threads_itself() {
  return false;
}

template <class T>
void gemm(bool trans_a, bool trans_b, std::size_t M, std::size_t N, std::size_t K,
          T alpha, const T* A, std::size_t lda, const T* B, std::size_t ldb, T beta, T* C,
          std::size_t ldc) {
  const OpenBlas& b = loaded();
  int ta = trans_a ? CblasTrans : CblasNoTrans;
  int tb = trans_b ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>)
    b.sgemm(CblasRowMajor, ta, tb, as_blas_int(M), as_blas_int(N), as_blas_int(K), alpha,
            A, as_blas_int(lda), B, as_blas_int(ldb), beta, C, as_blas_int(ldc));
  else
    b.dgemm(CblasRowMajor, ta, tb, as_blas_int(M), as_blas_int(N), as_blas_int(K), alpha,
            A, as_blas_int(lda), B, as_blas_int(ldb), beta, C, as_blas_int(ldc));
}

template <class T>
void gemv(bool trans, std::size_t rows, std::size_t cols, T alpha, const T* A,
          std::size_t lda, const T* x, std::size_t incx, T beta, T* y) {
  const OpenBlas& b = loaded();
  int t = trans ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>)
    b.sgemv(CblasRowMajor, t, as_blas_int(rows), as_blas_int(cols), alpha, A,
            as_blas_int(lda), x, as_blas_int(incx), beta, y, 1);
  else
    b.dgemv(CblasRowMajor, t, as_blas_int(rows), as_blas_int(cols), alpha, A,
            as_blas_int(lda), x, as_blas_int(incx), beta, y, 1);
}

GLASSLLM_BACKEND_INSTANCES(float)
GLASSLLM_BACKEND_INSTANCES(double)

}  // namespace glassllm::backend
