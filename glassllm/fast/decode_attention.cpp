// decode_attention.cpp: attention's decode step on the grouped path as one
// task of the pool per K/V head (grouped_decode_attention in
// include/glassllm/fast/kernels.h). Speed only: the engine's
// grouped_attention (ops_attention.cpp) calls it when nothing watches its
// ops.
//
// The ops run the step as four loops over all heads, each a job of the pool:
// q @ k^T, the multiply by 1/sqrt(hd), causal_softmax and probs @ v. Each
// job hands over between the threads, and the scores go out to memory and
// back between them. Here a head's four steps run one after the other in
// one task, on scores that stay in L2. Chapter 10 (docs/10, step 11) and
// docs/bench-notes.md have the measurements.
#include <algorithm>
#include <memory>

#include "glassllm/fast/blas_internal.h"
#include "glassllm/fast/kernels.h"
#include "glassllm/fast/pool.h"

namespace glassllm::fast {

namespace {

// The work of one head: two products of rows x m x hd multiply-adds.
double head_flops(std::size_t rows, std::size_t m, std::size_t hd) {
  return 4.0 * double(rows) * double(m) * double(hd);
}

// Heads per task: tasks of whole heads, each at least kTaskFlops, as
// gemm_batch cuts attention's products.
std::size_t heads_per_task(std::size_t rows, std::size_t m, std::size_t hd) {
  return std::max<std::size_t>(1, std::size_t(kTaskFlops / head_flops(rows, m, hd)));
}

}  // namespace

template <class T>
void grouped_decode_attention(std::size_t heads, std::size_t rows, std::size_t queries,
                              std::size_t m, std::size_t hd, T scale, const T* q,
                              const T* k, const T* v, const std::size_t* visible,
                              T* out) {
  // [heads, rows, m], left uninitialised: gemm writes every score first.
  std::unique_ptr<T[]> scores(new T[heads * rows * m]);
  auto head = [&](std::size_t h) {
    T* s = scores.get() + h * rows * m;  // [rows, m]
    // [rows, hd] @ [m, hd]^T -> [rows, m]. Inside a task gemm() runs the
    // few-rows kernel on this thread, over all m keys at once.
    gemm<T>(false, true, rows, m, hd, T(1), q + h * rows * hd, hd, k + h * m * hd, hd,
            T(0), s, m);
    // scores * scale, as mul() does it: one multiply per element.
    for (std::size_t i = 0; i < rows * m; ++i) s[i] = s[i] * scale;
    // causal_softmax's loop (ops_attention.cpp), row by row, in place.
    for (std::size_t r = 0; r < rows; ++r) {
      T* row = s + r * m;
      const std::size_t n = visible[r % queries];
      softmax_row(row, row, n);
      std::fill(row + n, row + m, T(0));  // the hidden keys
    }
    // [rows, m] @ [m, hd] -> [rows, hd]
    gemm<T>(false, false, rows, hd, m, T(1), s, m, v + h * m * hd, hd, T(0),
            out + h * rows * hd, hd);
  };
  const std::size_t per_task = heads_per_task(rows, m, hd);
  pool::parallel_for((heads + per_task - 1) / per_task, [&](std::size_t t) {
    for (std::size_t h = t * per_task; h < std::min(heads, (t + 1) * per_task); ++h)
      head(h);
  });
}

bool grouped_decode_pays(std::size_t heads, std::size_t rows, std::size_t m,
                         std::size_t hd) {
  const std::size_t per_task = heads_per_task(rows, m, hd);
  const std::size_t tasks = (heads + per_task - 1) / per_task;
  // A task for every thread, or too little work to share at all.
  return tasks >= std::size_t(pool::threads()) ||
         double(heads) * head_flops(rows, m, hd) <= kTaskFlops;
}

template void grouped_decode_attention<float>(std::size_t, std::size_t, std::size_t,
                                              std::size_t, std::size_t, float,
                                              const float*, const float*, const float*,
                                              const std::size_t*, float*);
template void grouped_decode_attention<double>(std::size_t, std::size_t, std::size_t,
                                               std::size_t, std::size_t, double,
                                               const double*, const double*,
                                               const double*, const std::size_t*,
                                               double*);

}  // namespace glassllm::fast
