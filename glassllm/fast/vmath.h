// vmath.h (private): exp, sigmoid, SiLU, max, sums and scaling over contiguous
// arrays, vectorised with xsimd.
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

/// The largest of in[0 .. n), n >= 1, a batch of lanes at a time. (A NaN
/// makes a softmax row NaN however it is compared here: exp(NaN) joins the sum.)
template <class T>
T max(const T* in, std::size_t n) {
  using B = xsimd::batch<T>;
  T best = in[0];
  std::size_t i = 0;
  if (n >= B::size) {
    B lanes = B::load_unaligned(in);
    for (i = B::size; i + B::size <= n; i += B::size)
      lanes = xsimd::max(B::load_unaligned(in + i), lanes);
    alignas(64) T each[B::size];
    lanes.store_aligned(each);
    for (T v : each) best = v > best ? v : best;
  }
  for (; i < n; ++i) best = in[i] > best ? in[i] : best;
  return best;
}

/// out[i] = exp(in[i] - shift); returns the sum of the outputs, added up in
/// one batch of lane sums (a single running total would wait for each add to
/// finish, a large share of a long softmax row). in == out is fine.
template <class T>
T exp_shifted_sum(const T* in, T* out, std::size_t n, T shift) {
  using B = xsimd::batch<T>;
  B sums(T(0));
  std::size_t i = 0;
  for (; i + B::size <= n; i += B::size) {
    B e = exp(B::load_unaligned(in + i) - B(shift));
    e.store_unaligned(out + i);
    sums += e;
  }
  T total = xsimd::hadd(sums);
  for (; i < n; ++i) {
    out[i] = std::exp(in[i] - shift);
    total += out[i];
  }
  return total;
}

/// The sum of a[i] * b[i], added up in one batch of lane sums as in
/// exp_shifted_sum: a single running total waits for each add to finish,
/// which made rmsnorm's sum of squares and the softmax backward's dot product
/// the slowest loops of a training step's elementwise work.
template <class T>
T dot(const T* a, const T* b, std::size_t n) {
  using B = xsimd::batch<T>;
  B sums(T(0));
  std::size_t i = 0;
  for (; i + B::size <= n; i += B::size)
    sums = xsimd::fma(B::load_unaligned(a + i), B::load_unaligned(b + i), sums);
  T total = xsimd::hadd(sums);
  for (; i < n; ++i) total += a[i] * b[i];
  return total;
}

/// x[i] *= factor.
template <class T>
void scale(T* x, std::size_t n, T factor) {
  map(x, x, n, [factor](auto v) { return v * decltype(v)(factor); });
}

}  // namespace glassllm::vmath

#pragma GCC diagnostic pop
