// weights16.cpp: 16-bit numbers (bfloat16 and IEEE half) and the product of
// float32 rows with a matrix kept in 16 bits (kernels.h, "16-bit weights").
// Speed only: glassllm/model/weights16.cpp is the seam the model calls, and
// says what is computed; this says how fast.
//
// A decode step reads every weight once and does two flops per weight read:
// its time is the bytes of the weights over the memory's bandwidth. Weights
// kept in 16 bits are half the bytes. Each weight is widened to float32 in a
// register as it is read (bfloat16: a shift; half: the F16C instruction) and
// multiplied and added in float32; nothing is written back in float32.
//
// One path is compiled, chosen by the compiler's target: AVX-512, AVX2 with
// F16C and FMA, or the portable loop (the only one without -march=native,
// and the one every other path is tested against). Each output y[m, n] is
// summed the same way whatever M and however the work is cut into tasks, so
// a row gives the same bits alone (a decode step) or among others (a
// prompt), and on any number of threads.
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "glassllm/fast/kernels.h"
#include "glassllm/fast/pool.h"

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__F16C__) && defined(__FMA__))
// GCC 12 warns that its own AVX-512 intrinsics read an uninitialised value
// once inlined into a fully unrolled loop (a known false positive of its
// headers, as in vmath.h): silenced for those headers only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif

namespace glassllm::fast {

namespace {

std::uint32_t bits_of(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float float_of(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

}  // namespace

// ---- one number ----------------------------------------------------------------------

// bfloat16 is the top half of a float32: shifted back into place, exactly.
// Half: value = (-1)^s 2^(e-15) 1.m for 0 < e < 31, (-1)^s 2^-14 0.m for
// e = 0, inf (m = 0) or nan for e = 31; a float32 holds every one exactly.
float half_to_float(Half type, std::uint16_t h) {
  if (type == Half::bf16) return float_of(std::uint32_t(h) << 16);
  const std::uint32_t sign = std::uint32_t(h >> 15) << 31;
  const std::uint32_t e = (h >> 10) & 0x1F, m = h & 0x3FF;
  if (e == 31) return float_of(sign | 0x7F800000u | (m << 13));
  if (e != 0) return float_of(sign | ((e - 15 + 127) << 23) | (m << 13));
  // Zero or subnormal: m * 2^-24 (2^-24 as bits: exponent 127 - 24).
  const float v = float(m) * float_of(std::uint32_t(127 - 24) << 23);
  return float_of(sign | bits_of(v));
}

namespace {

// float32 -> bfloat16, rounded to nearest, ties to even: add just under half
// of the dropped 16 bits' unit, plus one when the kept part is odd, then
// drop them. A carry runs into the exponent as it should (the largest
// floats round to inf). A nan stays a nan (its quiet bit set, so that
// dropping the low bits of its payload cannot turn it into inf).
std::uint16_t float_to_bf16(float f) {
  std::uint32_t u = bits_of(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return std::uint16_t((u >> 16) | 0x0040);
  u += 0x7FFFu + ((u >> 16) & 1);
  return std::uint16_t(u >> 16);
}

// float32 -> half, rounded to nearest, ties to even, in the three ranges of
// the result: inf (65520 and above: halfway past the largest half, 65504,
// rounds up to the even inf), normal (the exponent re-biased, 13 mantissa
// bits rounded off as for bfloat16) and subnormal or zero (below 2^-14:
// m * 2^-24 with m rounded off the full 24-bit mantissa).
std::uint16_t float_to_f16(float f) {
  const std::uint32_t u = bits_of(f);
  const std::uint16_t sign = std::uint16_t((u >> 16) & 0x8000);
  const std::uint32_t a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u)  // nan: quiet, with the top of its payload
    return std::uint16_t(sign | 0x7E00 | ((a >> 13) & 0x3FF));
  if (a >= 0x477FF000u) return std::uint16_t(sign | 0x7C00);  // >= 65520, or inf
  if (a >= 0x38800000u) {                                     // >= 2^-14: normal
    std::uint32_t r = a - (std::uint32_t(127 - 15) << 23);
    r += 0xFFFu + ((r >> 13) & 1);
    return std::uint16_t(sign | (r >> 13));
  }
  if (a <= 0x33000000u) return sign;  // <= 2^-25: rounds to 0 (2^-25 is a tie)
  // 2^-25 < |f| < 2^-14: |f| = mant * 2^(e - 150), in units of 2^-24 that is
  // mant >> (126 - e), with 14 <= 126 - e <= 24.
  const std::uint32_t e = a >> 23, mant = (a & 0x7FFFFFu) | 0x800000u;
  const std::uint32_t shift = 126 - e;
  std::uint32_t r = mant >> shift;
  const std::uint32_t rest = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
  if (rest > half || (rest == half && (r & 1))) ++r;  // may become 2^-14, a normal
  return std::uint16_t(sign | r);
}

}  // namespace

std::uint16_t float_to_half(Half type, float value) {
  return type == Half::bf16 ? float_to_bf16(value) : float_to_f16(value);
}

void floats_to_halves(Half type, const float* x, std::uint16_t* h, std::size_t n) {
  parallel_elements(n, [&](std::size_t first, std::size_t last) {
    for (std::size_t i = first; i < last; ++i) h[i] = float_to_half(type, x[i]);
  });
}

void halves_to_floats(Half type, const std::uint16_t* h, float* x, std::size_t n) {
  parallel_elements(n, [&](std::size_t first, std::size_t last) {
    for (std::size_t i = first; i < last; ++i) x[i] = half_to_float(type, h[i]);
  });
}

// ---- the product ---------------------------------------------------------------------

namespace {

// The portable product of rows [m_first, m_last) with W's rows [n_first,
// n_last): each y[m, n] a plain float32 sum over k in order.
void portable_block(Half type, std::size_t n_first, std::size_t n_last, std::size_t M,
                    std::size_t K, const float* x, const std::uint16_t* w, float* y,
                    std::size_t ldy) {
  for (std::size_t n = n_first; n < n_last; ++n) {
    const std::uint16_t* row = w + n * K;
    for (std::size_t m = 0; m < M; ++m) {
      const float* xm = x + m * K;
      float sum = 0;
      for (std::size_t k = 0; k < K; ++k) sum += xm[k] * half_to_float(type, row[k]);
      y[m * ldy + n] = sum;
    }
  }
}

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__F16C__) && defined(__FMA__))

// The vector kernel: 16 (AVX-512) or 8 (AVX2) lanes of k at a time, each
// chunk of W widened once for up to kMaxRows rows of x.
#if defined(__AVX512F__)
using Vec = __m512;
constexpr std::size_t L = 16;
template <Half T>
Vec load_w(const std::uint16_t* p) {
  const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  if constexpr (T == Half::bf16)
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  else
    return _mm512_cvtph_ps(h);
}
inline Vec load_x(const float* p) {
  return _mm512_loadu_ps(p);
}
inline Vec fma(Vec a, Vec b, Vec c) {
  return _mm512_fmadd_ps(a, b, c);
}
inline Vec vzero() {
  return _mm512_setzero_ps();
}
inline Vec add(Vec a, Vec b) {
  return _mm512_add_ps(a, b);
}
// Lanes added pairwise, halves first: one fixed order.
inline float lanes_sum(Vec v) {
  const __m256 h =
      _mm256_add_ps(_mm512_castps512_ps256(v),
                    _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
  __m128 q = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
  q = _mm_add_ps(q, _mm_movehl_ps(q, q));
  q = _mm_add_ss(q, _mm_movehdup_ps(q));
  return _mm_cvtss_f32(q);
}
#else
using Vec = __m256;
constexpr std::size_t L = 8;
template <Half T>
Vec load_w(const std::uint16_t* p) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  if constexpr (T == Half::bf16)
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  else
    return _mm256_cvtph_ps(h);
}
inline Vec load_x(const float* p) {
  return _mm256_loadu_ps(p);
}
inline Vec fma(Vec a, Vec b, Vec c) {
  return _mm256_fmadd_ps(a, b, c);
}
inline Vec vzero() {
  return _mm256_setzero_ps();
}
inline Vec add(Vec a, Vec b) {
  return _mm256_add_ps(a, b);
}
inline float lanes_sum(Vec v) {
  __m128 q = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  q = _mm_add_ps(q, _mm_movehl_ps(q, q));
  q = _mm_add_ss(q, _mm_movehdup_ps(q));
  return _mm_cvtss_f32(q);
}
#endif

// y[m, n] for MR rows m of x against one row n of W, read front to back.
// Chunk c of L values of k goes to accumulator c mod 4 (four sums in flight,
// whatever MR), the last partial chunk padded with zeros; then
// (acc0 + acc1) + (acc2 + acc3), and its lanes. The same steps for a row of
// x whatever MR, so its bits do not depend on how many rows share the call.
// W is asked for ahead of the loads: a decode step reads each weight once,
// and the hardware's prefetcher alone kept too few reads in flight. When W
// passes only once (one row of x, or kMaxRows: a decode step), it is asked for
// as non-temporal (prefetchnta), which keeps the lines out of the outer
// caches that they would only pass through, `ahead` bytes ahead: how far
// reads W fastest depends on the CPU, so it is measured (read_ahead below).
// With more rows of x, a block of W is read again for each group of rows
// and has to stay in the cache.
constexpr std::size_t kPrefetchBytes = 2048;

template <bool ReadOnce>
inline void prefetch_w(const char* p, std::size_t ahead) {
  if constexpr (ReadOnce)
    _mm_prefetch(p + ahead, _MM_HINT_NTA);
  else
    _mm_prefetch(p + kPrefetchBytes, _MM_HINT_T0);
}

template <Half T, std::size_t MR, bool ReadOnce>
void rows_against(std::size_t K, const float* x, const std::uint16_t* w, float* y,
                  std::size_t ldy, const float (*tail_x)[L], std::size_t ahead) {
  Vec acc[MR][4];
#pragma GCC unroll 8
  for (std::size_t i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (std::size_t a = 0; a < 4; ++a) acc[i][a] = vzero();
  const std::size_t whole = K / L * L;
  std::size_t k = 0;
  for (; k + 4 * L <= whole; k += 4 * L) {
    const char* here = reinterpret_cast<const char*>(w + k);
#pragma GCC unroll 4
    for (std::size_t line = 0; line < 4 * L * 2; line += 64)
      prefetch_w<ReadOnce>(here + line, ahead);
    Vec wv[4];
#pragma GCC unroll 4
    for (std::size_t a = 0; a < 4; ++a) wv[a] = load_w<T>(w + k + a * L);
#pragma GCC unroll 8
    for (std::size_t i = 0; i < MR; ++i)
#pragma GCC unroll 4
      for (std::size_t a = 0; a < 4; ++a)
        acc[i][a] = fma(load_x(x + i * K + k + a * L), wv[a], acc[i][a]);
  }
  // The last chunks: up to 3 whole ones, then the padded tail. k / L is a
  // multiple of 4 here, so the next chunk goes to accumulator 0, the one
  // after to 1: indices known when compiled, which keeps the accumulators in
  // registers (an index computed at run time put them all in memory, and
  // every fma waited for a store and a load).
#pragma GCC unroll 4
  for (std::size_t a = 0; a < 4; ++a) {
    if (k < whole) {
      const Vec wv = load_w<T>(w + k);
#pragma GCC unroll 8
      for (std::size_t i = 0; i < MR; ++i)
        acc[i][a] = fma(load_x(x + i * K + k), wv, acc[i][a]);
    } else if (k == whole && whole < K) {
      alignas(64) std::uint16_t wt[L] = {};
      std::copy(w + whole, w + K, wt);
      const Vec wv = load_w<T>(wt);
#pragma GCC unroll 8
      for (std::size_t i = 0; i < MR; ++i)
        acc[i][a] = fma(load_x(tail_x[i]), wv, acc[i][a]);
    }
    k += L;
  }
#pragma GCC unroll 8
  for (std::size_t i = 0; i < MR; ++i)
    y[i * ldy] = lanes_sum(add(add(acc[i][0], acc[i][1]), add(acc[i][2], acc[i][3])));
}

// Rows [m, m + MR) of x against W's rows [n_first, n_last), one after the
// other (a block of W small enough to stay in the cache while every group
// of rows of x passes over it).
template <Half T, std::size_t MR, bool ReadOnce>
void row_group(std::size_t m, std::size_t n_first, std::size_t n_last, std::size_t K,
               const float* x, const std::uint16_t* w, float* y, std::size_t ldy,
               std::size_t ahead = 0) {
  alignas(64) float tail[MR][L] = {};  // x's last K % L values, padded with zeros
  const std::size_t whole = K / L * L;
  for (std::size_t i = 0; i < MR; ++i)
    std::copy(x + (m + i) * K + whole, x + (m + i + 1) * K, tail[i]);
  for (std::size_t n = n_first; n < n_last; ++n)
    rows_against<T, MR, ReadOnce>(K, x + m * K, w + n * K, y + m * ldy + n, ldy, tail,
                                  ahead);
}

// Every row of x against W's rows [n_first, n_last), kMaxRows rows of x at a
// time (as many as the registers hold: 4 accumulators each).
constexpr std::size_t kMaxRows = L == 16 ? 4 : 2;

bool reads_once(std::size_t M) {
  return M == 1 || M == kMaxRows;
}

template <Half T>
void simd_block(std::size_t n_first, std::size_t n_last, std::size_t M, std::size_t K,
                const float* x, const std::uint16_t* w, float* y, std::size_t ldy,
                std::size_t ahead) {
  if (M == 1) return row_group<T, 1, true>(0, n_first, n_last, K, x, w, y, ldy, ahead);
  if (M == kMaxRows)
    return row_group<T, kMaxRows, true>(0, n_first, n_last, K, x, w, y, ldy, ahead);
  std::size_t m = 0;
  for (; m + kMaxRows <= M; m += kMaxRows)
    row_group<T, kMaxRows, false>(m, n_first, n_last, K, x, w, y, ldy);
  for (; m < M; ++m) row_group<T, 1, false>(m, n_first, n_last, K, x, w, y, ldy);
}

#endif

// W's rows handed to one task: about 16 K weights (as blas.cpp cuts a
// matrix-vector product), so that a decode step's products use both cores,
// in blocks of 16 rows; with many rows of x, blocks small enough to stay in
// the cache while every row of x passes over them.
std::size_t rows_per_task(std::size_t M, std::size_t N, std::size_t K) {
  constexpr std::size_t kTaskWeights = 16 * 1024, kBlockWeights = 32 * 1024;
  const std::size_t max_tasks = M <= 8 ? 4 : N;
  const std::size_t per = M <= 8 ? kTaskWeights : kBlockWeights;
  std::size_t tasks = std::min(max_tasks, std::max<std::size_t>(1, N * K / per));
  std::size_t rows = (N + tasks - 1) / tasks;
  return std::max<std::size_t>(16, (rows + 15) / 16 * 16);
}

template <class Block>
void split(std::size_t M, std::size_t N, std::size_t K, Block block) {
  if (N == 0 || M == 0) return;
  const std::size_t rows = rows_per_task(M, N, K);
  pool::parallel_for((N + rows - 1) / rows, [&](std::size_t t) {
    block(t * rows, std::min(N, (t + 1) * rows));
  });
}

// ---- how far ahead a decode step asks for W -------------------------------------------
//
// A read-once product (reads_once) asks for W `ahead` bytes ahead of its
// loads. The distance that reads W fastest is not the same on every CPU:
// one of the candidates below was the fastest on one machine and the
// slowest on another (docs/14-real-models.md, "16-bit weights", has the
// figures). So nothing is assumed: a process's first kTrialPairs * 2
// read-once products of at least kTrialBytes of W take the candidates in
// turns, each timed, and every later one uses the candidate that read
// faster in the median of the pairs (a product with the first candidate and
// the next one with the second): on a shared machine another program's
// burst slows both of a pair, and moves the median of the pairs less than
// it moves the totals. A decode step makes about a hundred such products,
// so the choice is made within its first few tokens. Only the prefetches
// differ between the candidates: the results are the same bits whichever is
// used.
constexpr std::array<std::size_t, 2> kReadAheadCandidates = {1024, 8192};
constexpr std::size_t kTrialBytes = std::size_t(1) << 20, kTrialPairs = 128;

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(v.size() / 2), v.end());
  return v[v.size() / 2];
}

struct ReadAhead {
  std::mutex mutex;                    // guards the trials
  std::atomic<std::size_t> chosen{0};  // bytes; 0 while the trials run
  std::atomic<std::size_t> forced{0};  // force_linear16_read_ahead's, or 0
  std::size_t trials = 0;
  detail::ReadAheadPairs pairs;
};

ReadAhead& read_ahead() {
  static ReadAhead state;
  return state;
}

}  // namespace

void detail::ReadAheadPairs::add(std::size_t candidate, double bytes_per_s) {
  speeds_[candidate].push_back(bytes_per_s);
  if (candidate == 0) {
    first_ = bytes_per_s;  // waits for the next second-candidate trial
  } else if (first_ > 0) {
    ratios_.push_back(bytes_per_s / first_);
    first_ = 0;
  }
}

std::size_t detail::faster_read_ahead(const std::vector<double>& pair_ratios) {
  return kReadAheadCandidates[median_of(pair_ratios) > 1 ? 1 : 0];
}

ReadAheadChoice linear16_read_ahead() {
  ReadAheadChoice c;
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__F16C__) && defined(__FMA__))
  ReadAhead& state = read_ahead();
  std::lock_guard<std::mutex> lock(state.mutex);
  c.candidates = kReadAheadCandidates;
  c.bytes = state.forced.load() ? state.forced.load() : state.chosen.load();
  c.forced = state.forced.load() != 0;
  for (std::size_t i = 0; i < 2; ++i)
    c.bytes_per_s[i] = median_of(state.pairs.speeds()[i]);
  c.second_over_first = median_of(state.pairs.ratios());
  c.pairs = state.pairs.ratios().size();
#endif
  return c;
}

void force_linear16_read_ahead(std::size_t bytes) {
  if (bytes != 0 && std::find(kReadAheadCandidates.begin(), kReadAheadCandidates.end(),
                              bytes) == kReadAheadCandidates.end())
    throw std::invalid_argument("force_linear16_read_ahead: " + std::to_string(bytes) +
                                " bytes is not one of the candidates (1024, 8192) or 0");
  read_ahead().forced.store(bytes);
}

void detail::linear16_portable(Half type, std::size_t M, std::size_t N, std::size_t K,
                               const float* x, const std::uint16_t* w, float* y) {
  split(M, N, K, [&](std::size_t first, std::size_t last) {
    portable_block(type, first, last, M, K, x, w, y, N);
  });
}

void linear16(Half type, std::size_t M, std::size_t N, std::size_t K, const float* x,
              const std::uint16_t* w, float* y) {
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__F16C__) && defined(__FMA__))
  auto product = [&](std::size_t ahead) {
    split(M, N, K, [&](std::size_t first, std::size_t last) {
      if (type == Half::bf16)
        simd_block<Half::bf16>(first, last, M, K, x, w, y, N, ahead);
      else
        simd_block<Half::f16>(first, last, M, K, x, w, y, N, ahead);
    });
  };
  ReadAhead& state = read_ahead();
  if (std::size_t bytes = state.forced.load()) return product(bytes);
  if (std::size_t bytes = state.chosen.load()) return product(bytes);
  const std::size_t w_bytes = N * K * sizeof(std::uint16_t);
  if (!reads_once(M) || w_bytes < kTrialBytes) return product(kReadAheadCandidates[0]);
  // A trial: this product takes the next candidate in turn, timed.
  std::size_t which = 0;
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    which = state.trials++ % kReadAheadCandidates.size();
  }
  const auto start = std::chrono::steady_clock::now();
  product(kReadAheadCandidates[which]);
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  std::lock_guard<std::mutex> lock(state.mutex);
  if (state.chosen.load() || took.count() <= 0) return;
  state.pairs.add(which, double(w_bytes) / took.count());
  if (state.pairs.ratios().size() >= kTrialPairs)
    state.chosen.store(detail::faster_read_ahead(state.pairs.ratios()));
#else
  detail::linear16_portable(type, M, N, K, x, w, y);
#endif
}

const char* linear16_path() {
#if defined(__AVX512F__)
  return "AVX-512";
#elif defined(__AVX2__) && defined(__F16C__) && defined(__FMA__)
  return "AVX2 + F16C";
#else
  return "portable";
#endif
}

}  // namespace glassllm::fast
