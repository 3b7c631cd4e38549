// kernels.cpp: the loops and row kernels of include/glassllm/fast/kernels.h,
// over the pool (pool.h) and the SIMD helpers (vmath.h). The matrix products
// are in blas.cpp, the fused decode step in decode_attention.cpp, the memory
// policy in allocation.cpp.
//
// The row kernels are compiled here once, not inlined into each op: the ops
// and the fused decode step then run the very same instructions on a row,
// which is what makes their results equal to the bit.
#include "glassllm/fast/kernels.h"

#include <cmath>
#include <vector>

#include "glassllm/fast/pool.h"
#include "glassllm/fast/vmath.h"

namespace glassllm::fast {

void detail::parallel_ranges(std::size_t rows, std::size_t row_length,
                             void (*body)(void*, std::size_t, std::size_t),
                             void* context) {
  pool::parallel_ranges(
      rows, pool::grain(row_length),
      [&](std::size_t first, std::size_t last) { body(context, first, last); });
}

template <class T>
T dot(const T* a, const T* b, std::size_t n) {
  return vmath::dot(a, b, n);
}

template <class T>
void softmax_row(const T* x, T* y, std::size_t n, T scale) {
  const T total = vmath::exp_shifted_sum(x, y, n, vmath::max(x, n));
  vmath::scale(y, n, scale / total);
}

template <class T>
LogSumExp<T> log_sum_exp(const T* x, std::size_t n) {
  thread_local std::vector<T> exps;  // the row's exp(x - max), for their sum
  exps.resize(n);
  const T largest = vmath::max(x, n);
  return {largest, std::log(vmath::exp_shifted_sum(x, exps.data(), n, largest))};
}

template <class T>
void exp(const T* x, T* y, std::size_t n) {
  vmath::map(x, y, n, [](auto v) { return vmath::exp(v); });
}

template <class T>
void sigmoid(const T* x, T* y, std::size_t n) {
  vmath::map(x, y, n, [](auto v) { return vmath::sigmoid(v); });
}

template <class T>
void silu(const T* x, T* y, std::size_t n) {
  vmath::map(x, y, n, [](auto v) { return v * vmath::sigmoid(v); });
}

#define GLASSLLM_ROW_KERNELS(T)                                \
  template T dot<T>(const T*, const T*, std::size_t);          \
  template void softmax_row<T>(const T*, T*, std::size_t, T);  \
  template LogSumExp<T> log_sum_exp<T>(const T*, std::size_t); \
  template void exp<T>(const T*, T*, std::size_t);             \
  template void sigmoid<T>(const T*, T*, std::size_t);         \
  template void silu<T>(const T*, T*, std::size_t);
GLASSLLM_ROW_KERNELS(float)
GLASSLLM_ROW_KERNELS(double)
#undef GLASSLLM_ROW_KERNELS

}  // namespace glassllm::fast
