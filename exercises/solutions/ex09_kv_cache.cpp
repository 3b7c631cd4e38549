// ex09_kv_cache.cpp (reference solution): the K/V cache's append, written as
// the copy it is. Exercise page: docs/exercises/ex09-kv-cache.md.
#include <algorithm>

#include "exercises/exercises.h"

namespace glassllm::exercises {

namespace {

// Row-major [B, Hkv, positions, hd]: for each (b, head) the positions are one
// contiguous block of positions * hd numbers. The new block is held's block
// followed by fresh's.
template <class F>
void copy_blocks(const F* held, const F* fresh, F* next, std::size_t rows, std::size_t m,
                 std::size_t T, std::size_t hd) {
  for (std::size_t r = 0; r < rows; ++r) {
    F* dst = next + r * (m + T) * hd;
    if (held) std::copy_n(held + r * m * hd, m * hd, dst);
    std::copy_n(fresh + r * T * hd, T * hd, dst + m * hd);
  }
}

}  // namespace

// doc:begin solution
Tensor my_cache_append(const Tensor& held, const Tensor& fresh) {
  const Shape& s = fresh.shape();  // [B, Hkv, T, hd]
  const std::size_t m = held.defined() ? held.dim(2) : 0, T = s[2];
  // A new array: the old one is copied, never written (a recorded graph may
  // still read it), and the result is a leaf, so no gradient flows into the
  // history.
  Tensor next = zeros({s[0], s[1], m + T, s[3]}, fresh.dtype());
  if (fresh.dtype() == DType::float64)
    copy_blocks(held.defined() ? held.data<double>() : nullptr, fresh.data<double>(),
                next.mutable_data<double>(), s[0] * s[1], m, T, s[3]);
  else
    copy_blocks(held.defined() ? held.data<float>() : nullptr, fresh.data<float>(),
                next.mutable_data<float>(), s[0] * s[1], m, T, s[3]);
  return next;
}
// doc:end solution

}  // namespace glassllm::exercises
