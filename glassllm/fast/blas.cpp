// blas.cpp: every matrix product in GlassLM ends here, in one gemm(). It
// handles the shapes that need no library (an empty sum), sends products of
// up to 8 rows (decoding) to the kernels of few_rows.cpp, cuts the others
// into tasks of the thread pool, and passes them to
// the backend chosen at configure time with -DGLASSLLM_BLAS (CMakeLists.txt):
//
//   openblas  backends/openblas.cpp  OpenBLAS, opened at run time (Linux)
//   system    backends/system.cpp    the BLAS CMake's FindBLAS found, via CBLAS
//   builtin   backends/builtin.cpp   gemm_builtin.cpp, no library at all
//
// or, for the kinds of product where it measured faster than the library,
// to the built-in GEMM (gemm_choice.cpp). blas_info() says which one runs.
// docs/bench-notes.md has the measurements behind the constants below.
#include "glassllm/fast/blas.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "glassllm/fast/blas_backend.h"
#include "glassllm/fast/blas_internal.h"
#include "glassllm/fast/few_rows.h"
#include "glassllm/fast/gemm_choice.h"
#include "glassllm/fast/pool.h"

namespace glassllm {

// GLASSLLM_THREADS if set, else every core this process may use. Each output element is
// computed by one task in one order, and how products are cut into tasks depends only on
// their sizes, so results repeat bit for bit whatever the thread count.
int default_blas_threads() {
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

// ---- splitting a product into tasks -------------------------------------------
//
// C is cut into blocks of whole rows (or of whole columns, when it has more
// columns than rows), one task each, for pool::parallel_for. The cut depends
// only on the sizes, so every element of C is computed by the same call in
// the same order on any number of threads. A task is at least kTaskFlops
// (blas_internal.h): less is not worth waking a thread for. At most 4 tasks,
// because each one packs the whole other operand again (8 made a training
// step slower); 4 rather than 2 so that a
// thread slowed by another program leaves part of its share to the others.
constexpr std::size_t kMaxTasks = 4, kMinBlock = 32, kBlockMultiple = 16;
// A one-row product (GEMV) reads its matrix once: tasks of 16 K elements, so
// that decoding spreads the MLP's [384, 128] weights over both cores (64 K
// kept them on one).
constexpr std::size_t kGemvTaskElements = 16 * 1024;
// The narrowest strip of B's rows a task of a few-rows product B [K, N] takes
// (split_few_rows).
constexpr std::size_t kMinStripBytes = 256;

// Cuts `length` into about `tasks` blocks of a multiple of kBlockMultiple;
// returns the block length.
std::size_t block_length(std::size_t length, std::size_t tasks) {
  std::size_t block = (length + tasks - 1) / tasks;
  return (block + kBlockMultiple - 1) / kBlockMultiple * kBlockMultiple;
}

std::size_t gemm_tasks(std::size_t M, std::size_t N, std::size_t K) {
  if (backend::threads_itself()) return 1;
  double flops = 2.0 * double(M) * double(N) * double(K);
  std::size_t by_work = std::size_t(flops / kTaskFlops);
  std::size_t by_length = std::max(M, N) / kMinBlock;
  return std::max<std::size_t>(1, std::min({by_work, by_length, kMaxTasks}));
}

// Tasks for a product that reads its B [N, K] once (a few rows, or one):
// about one per kGemvTaskElements of B, at most kMaxTasks.
std::size_t read_once_tasks(std::size_t N, std::size_t K) {
  if (backend::threads_itself()) return 1;
  return std::min(kMaxTasks, std::max<std::size_t>(1, N * K / kGemvTaskElements));
}

// A long sum over K and a small C: a weight's gradient, dW = dY^T X, sums
// over all B*T rows of the batch (K = 2048) into [out, in] (128 x 384 at
// most in the default model). Cut by C's rows, each task packs all of the
// other operand, a [2048, 128] panel, for 32 to 96 rows of C: those products
// ran at about half the GEMM ceiling. Cut by K instead, each task packs only its own
// slice of both operands: task 0 computes alpha * A[:, slice 0] B[slice 0, :]
// + beta * C into C, task t its slice's product alone into a buffer of its
// own, and C then adds the buffers in order t = 1, 2, ...: a fixed order,
// so that the result does not depend on the thread count either.
constexpr std::size_t kMinKBlock = 256;

// Tasks for a cut over K, or 1 when a cut over C's rows or columns is the
// better one.
std::size_t k_tasks(std::size_t M, std::size_t N, std::size_t K) {
  if (backend::threads_itself() || K < 4 * std::max(M, N)) return 1;
  double flops = 2.0 * double(M) * double(N) * double(K);
  std::size_t by_work = std::size_t(flops / kTaskFlops), by_length = K / kMinKBlock;
  return std::max<std::size_t>(1, std::min({by_work, by_length, kMaxTasks}));
}

// One task's product on the calling thread, by the path chosen for its kind
// (gemm_choice.h): the backend, or the built-in GEMM on this one thread.
template <class T>
void compute(gemm_choice::Path path, bool trans_a, bool trans_b, std::size_t M,
             std::size_t N, std::size_t K, T alpha, const T* A, std::size_t lda,
             const T* B, std::size_t ldb, T beta, T* C, std::size_t ldc) {
  if (path == gemm_choice::Path::builtin)
    builtin_gemm<T>(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, 1);
  else
    backend::gemm<T>(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

template <class T>
void split_gemm_over_k(gemm_choice::Path path, std::size_t tasks, bool trans_a,
                       bool trans_b, std::size_t M, std::size_t N, std::size_t K, T alpha,
                       const T* A, std::size_t lda, const T* B, std::size_t ldb, T beta,
                       T* C, std::size_t ldc) {
  const std::size_t block = block_length(K, tasks);
  tasks = (K + block - 1) / block;
  // [tasks - 1, M, N], left uninitialised: every element is written first
  std::unique_ptr<T[]> partial(new T[(tasks - 1) * M * N]);
  pool::parallel_for(tasks, [&](std::size_t t) {
    const std::size_t first = t * block, size = std::min(block, K - first);
    // columns first.. of op(A) (rows of A when trans_a), rows first.. of op(B)
    const T* a = A + (trans_a ? first * lda : first);
    const T* b = B + (trans_b ? first : first * ldb);
    if (t == 0)
      compute<T>(path, trans_a, trans_b, M, N, size, alpha, a, lda, b, ldb, beta, C, ldc);
    else
      compute<T>(path, trans_a, trans_b, M, N, size, alpha, a, lda, b, ldb, T(0),
                 partial.get() + (t - 1) * M * N, N);
  });
  pool::parallel_ranges(M, pool::grain(N), [&](std::size_t first, std::size_t last) {
    for (std::size_t i = first; i < last; ++i)
      for (std::size_t t = 1; t < tasks; ++t) {
        const T* row = partial.get() + ((t - 1) * M + i) * N;
        for (std::size_t j = 0; j < N; ++j) C[i * ldc + j] += row[j];
      }
  });
}

// The backend's or the built-in GEMM, as chosen for this kind of product,
// split into tasks over C's rows or columns, or over K.
template <class T>
void split_gemm(bool trans_a, bool trans_b, std::size_t M, std::size_t N, std::size_t K,
                T alpha, const T* A, std::size_t lda, const T* B, std::size_t ldb, T beta,
                T* C, std::size_t ldc) {
  const gemm_choice::Path path = gemm_choice::path<T>(trans_a, trans_b, M, N, K);
  if (std::size_t over_k = k_tasks(M, N, K); over_k > 1)
    return split_gemm_over_k<T>(path, over_k, trans_a, trans_b, M, N, K, alpha, A, lda, B,
                                ldb, beta, C, ldc);
  std::size_t tasks = gemm_tasks(M, N, K);
  if (tasks == 1)
    return compute<T>(path, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C,
                      ldc);
  const bool by_rows = M >= N;
  const std::size_t length = by_rows ? M : N, block = block_length(length, tasks);
  pool::parallel_for((length + block - 1) / block, [&](std::size_t t) {
    std::size_t first = t * block, size = std::min(block, length - first);
    if (by_rows)  // rows first.. of op(A) and C; A stored [K, M] when trans_a
      compute<T>(path, trans_a, trans_b, size, N, K, alpha,
                 A + (trans_a ? first : first * lda), lda, B, ldb, beta, C + first * ldc,
                 ldc);
    else  // columns first.. of op(B) and C; B stored [N, K] when trans_b
      compute<T>(path, trans_a, trans_b, M, size, K, alpha, A, lda,
                 B + (trans_b ? first * ldb : first), ldb, beta, C + first, ldc);
  });
}

// A few rows of A, not transposed (M <= 8: decoding, attention's decode step
// with G query rows per K/V head), against B: the few-rows kernels (few_rows.cpp),
// which read B once, in place, instead of letting GEMM pack it. In tasks over
// C's columns (B's rows when trans_b), each at least kGemvTaskElements of B.
// Every element of C comes out of the same operations whatever M, the cut
// into tasks or the thread count: few_rows_nt ends each dot product in
// haddp's order (lane_sum), few_rows_nn adds B's rows into each sum in order,
// and the cut falls on whole batches. So attention's decode step gives the
// same bits on the grouped path (G rows per product) as on the repeat_kv
// path (1 row per product). For one row, y = B x with B [N, K] (a linear
// layer decoding a token), OpenBLAS's GEMV was slower at the default model's
// sizes ([384, 128] and smaller), most of it fixed cost.
template <class T>
void split_few_rows(bool trans_b, std::size_t M, std::size_t N, std::size_t K, T alpha,
                    const T* A, std::size_t lda, const T* B, std::size_t ldb, T beta,
                    T* C, std::size_t ldc) {
  // For B [K, N] each task reads a strip of every row of B, a stride apart,
  // so rows are cut only into strips of kMinStripBytes or more: strips of one
  // 64-byte line made reading B much slower than uncut. Inside a task (one head of
  // gemm_batch) the pieces would only run one after another.
  std::size_t tasks = pool::inside_task() ? 1 : read_once_tasks(N, K);
  if (!trans_b)
    tasks = std::min(tasks, std::max<std::size_t>(1, N * sizeof(T) / kMinStripBytes));
  const std::size_t block = block_length(N, tasks);
  pool::parallel_for((N + block - 1) / block, [&](std::size_t t) {
    const std::size_t first = t * block, size = std::min(block, N - first);
    if (trans_b)  // C[:, first..] = A B[first.., :]^T
      few_rows_task(true, M, size, K, alpha, A, lda, B + first * ldb, ldb, beta,
                    C + first, ldc);
    else  // C[:, first..] = A B[:, first..]
      few_rows_task(false, M, size, K, alpha, A, lda, B + first, ldb, beta, C + first,
                    ldc);
  });
}

// backend::gemv for the one row of op(A) that is a column of A (trans_a: K
// elements lda apart): y = alpha * op(B)^T x + beta * y, split into tasks
// over y.
template <class T>
void split_gemv(bool trans_b, std::size_t N, std::size_t K, T alpha, const T* x,
                std::size_t incx, const T* B, std::size_t ldb, T beta, T* y) {
  std::size_t block = block_length(N, read_once_tasks(N, K));
  pool::parallel_for((N + block - 1) / block, [&](std::size_t t) {
    std::size_t first = t * block, size = std::min(block, N - first);
    if (trans_b)  // y[first..] = B[first.., :] x
      backend::gemv<T>(false, size, K, alpha, B + first * ldb, ldb, x, incx, beta,
                       y + first);
    else  // y[first..] = B[:, first..]^T x
      backend::gemv<T>(true, K, size, alpha, B + first, ldb, x, incx, beta, y + first);
  });
}

}  // namespace

BlasInfo blas_info() {
  BlasInfo info = backend::info();
  if (!backend::threads_itself()) info.threads = pool::threads();
  info.gemm = gemm_choice::describe_current();
  return info;
}

void check_gemm_variable() {
  gemm_choice::parse_mode(std::getenv("GLASSLLM_GEMM"));
}

void set_blas_threads(int n) {
  if (n < 1)
    throw std::invalid_argument("set_blas_threads: need at least 1 thread, got " +
                                std::to_string(n));
  pool::set_threads(n);
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
  // A few rows (decoding): see split_few_rows. When M == 1 this is a
  // matrix-vector product, y = op(B)^T x, which reads B once either way.
  if (!trans_a && M <= 8)
    return split_few_rows<T>(trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  if (M == 1)  // x is A's one column, K elements lda apart
    return split_gemv<T>(trans_b, N, K, alpha, A, lda, B, ldb, beta, C);
  split_gemm<T>(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

template <class T>
void gemm_batch(std::size_t count, bool trans_a, bool trans_b, std::size_t M,
                std::size_t N, std::size_t K, T alpha, const T* A,
                const std::size_t* a_offsets, std::size_t lda, const T* B,
                const std::size_t* b_offsets, std::size_t ldb, T beta, T* C,
                std::size_t c_stride, std::size_t ldc) {
  // Many small products (attention's, one per head): tasks of whole products,
  // each at least kTaskFlops. A few large ones: one after another, each split
  // by gemm().
  const double flops = 2.0 * double(M) * double(N) * double(K);
  const std::size_t per_task = std::max<std::size_t>(1, std::size_t(kTaskFlops / flops));
  const std::size_t tasks = (count + per_task - 1) / per_task;
  auto product = [&](std::size_t i) {
    gemm<T>(trans_a, trans_b, M, N, K, alpha, A + a_offsets[i], lda, B + b_offsets[i],
            ldb, beta, C + i * c_stride, ldc);
  };
  // Products that reach split_gemm: make the choice here, before the tasks,
  // so that its first measurement does not run beside them.
  if (count > 0 && N > 0 && K > 0 && (trans_a || M > 8) && M > 1)
    gemm_choice::path<T>(trans_a, trans_b, M, N, K);
  if (tasks >= 2 && gemm_tasks(M, N, K) < kMaxTasks && !backend::threads_itself())
    pool::parallel_for(tasks, [&](std::size_t t) {
      for (std::size_t i = t * per_task; i < std::min(count, (t + 1) * per_task); ++i)
        product(i);
    });
  else
    for (std::size_t i = 0; i < count; ++i) product(i);
}

template void gemm<float>(bool, bool, std::size_t, std::size_t, std::size_t, float,
                          const float*, std::size_t, const float*, std::size_t, float,
                          float*, std::size_t);
template void gemm<double>(bool, bool, std::size_t, std::size_t, std::size_t, double,
                           const double*, std::size_t, const double*, std::size_t, double,
                           double*, std::size_t);
template void gemm_batch<float>(std::size_t, bool, bool, std::size_t, std::size_t,
                                std::size_t, float, const float*, const std::size_t*,
                                std::size_t, const float*, const std::size_t*,
                                std::size_t, float, float*, std::size_t, std::size_t);
template void gemm_batch<double>(std::size_t, bool, bool, std::size_t, std::size_t,
                                 std::size_t, double, const double*, const std::size_t*,
                                 std::size_t, const double*, const std::size_t*,
                                 std::size_t, double, double*, std::size_t, std::size_t);

}  // namespace glassllm
