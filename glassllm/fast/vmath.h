// vmath.h (private): exp, sigmoid and SiLU over contiguous arrays, vectorised
// with xsimd.
//
// The compiler will not vectorise a loop that calls std::exp (it may set
// errno, and glibc's vector exp is only offered under -ffast-math, which we
// cannot use: masking relies on exact -inf and NaN rules). xsimd's exp runs
// 8-16 lanes at once and is within about 1 ulp of std::exp, which the tests'
// tolerances allow. The tail shorter than one batch uses std::exp.
#pragma once

#include <cmath>
#include <cstddef>

// GCC 12 warns that AVX-512 intrinsics inside xsimd read an uninitialised
// value (a known false positive of its own headers); silence it here only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <xsimd/xsimd.hpp>

namespace glassllm::vmath {

// out[i] = f(in[i]) with f written once for batches and scalars alike.
template <class T, class F>
void map(const T* in, T* out, std::size_t n, F f) {
  using B = xsimd::batch<T>;
  std::size_t i = 0;
  for (; i + B::size <= n; i += B::size)
    f(B::load_unaligned(in + i)).store_unaligned(out + i);
  for (; i < n; ++i) out[i] = f(in[i]);
}

template <class V>
V exp(const V& v) {
  using std::exp;
  using xsimd::exp;
  return exp(v);
}

// 1 / (1 + e^-v): needs no branch for large |v| (e^-v is inf or 0 and the
// division gives exactly 0 or 1).
template <class V>
V sigmoid(const V& v) {
  return V(1) / (V(1) + exp(-v));
}

/// out[i] = exp(in[i] - shift); returns the sum of the outputs. in == out is fine.
template <class T>
T exp_shifted_sum(const T* in, T* out, std::size_t n, T shift) {
  map(in, out, n, [shift](auto v) { return exp(v - decltype(v)(shift)); });
  T total = 0;
  for (std::size_t i = 0; i < n; ++i) total += out[i];
  return total;
}

}  // namespace glassllm::vmath

#pragma GCC diagnostic pop
