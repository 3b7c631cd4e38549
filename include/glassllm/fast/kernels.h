// kernels.h: the fast layer's kernel API, the only calls the engine makes
// into glassllm/fast/. Everything here exists for speed; the ops that call
// it (glassllm/engine/ops_*.cpp) say what they compute, and this says how
// fast: which loops are spread over the cores and how finely, which loops
// run on SIMD lanes, which matrix-product kernel runs, how new arrays get
// their memory.
//
// Each call computes what its comment says, element by element, and gives
// the same bits on any number of threads: the work is cut by sizes alone.
// The row kernels are defined for float and double. Standard headers only.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

namespace glassllm {

// ---- matrix products (blas.cpp, over the backend chosen at configure time) ----

/// The least work, in floating-point operations, that the products give a
/// task of the pool: less is not worth waking a thread for
/// (blas.cpp, "splitting a product into tasks").
inline constexpr double kTaskFlops = 2e6;

/// C = alpha * op(A) @ op(B) + beta * C, all row-major, where op(A) is A or
/// A^T as trans_a says. op(A) is [M, K], op(B) is [K, N], C is [M, N].
/// lda, ldb, ldc are the row lengths of A, B, C as stored (so A stored [K, M]
/// with trans_a has lda >= M). With K == 0 the product is empty and C
/// becomes beta * C.
template <class T>
void gemm(bool trans_a, bool trans_b, std::size_t M, std::size_t N, std::size_t K,
          T alpha, const T* A, std::size_t lda, const T* B, std::size_t ldb, T beta, T* C,
          std::size_t ldc);

/// gemm() for `count` products of the same sizes: product i reads
/// A + a_offsets[i] and B + b_offsets[i] and writes C + i * c_stride. The
/// products run in parallel (one task each) when they are many and small.
template <class T>
void gemm_batch(std::size_t count, bool trans_a, bool trans_b, std::size_t M,
                std::size_t N, std::size_t K, T alpha, const T* A,
                const std::size_t* a_offsets, std::size_t lda, const T* B,
                const std::size_t* b_offsets, std::size_t ldb, T beta, T* C,
                std::size_t c_stride, std::size_t ldc);

namespace fast {

// ---- loops over the cores (pool.h) ----------------------------------------------

namespace detail {
void parallel_ranges(std::size_t rows, std::size_t row_length,
                     void (*body)(void*, std::size_t, std::size_t), void* context);
}

/// Calls body(first, last) for consecutive ranges of rows [first, last) that
/// cover [0, rows), spread over the pool's threads when there is enough work:
/// rows of `row_length` elements each are grouped so that a range is worth a
/// thread. The ranges depend only on rows and row_length, so each row is
/// handled by the same call on any number of threads.
///   fast::parallel_rows(rows, D, [&](std::size_t first, std::size_t last) {
///     for (std::size_t row = first; row < last; ++row) ...
///   });
template <class Body>
void parallel_rows(std::size_t rows, std::size_t row_length, Body&& body) {
  using B = std::remove_reference_t<Body>;
  detail::parallel_ranges(
      rows, row_length,
      [](void* b, std::size_t first, std::size_t last) {
        (*static_cast<B*>(b))(first, last);
      },
      const_cast<void*>(static_cast<const void*>(&body)));
}

/// parallel_rows for n single elements: body(first, last) over [0, n).
template <class Body>
void parallel_elements(std::size_t n, Body&& body) {
  parallel_rows(n, 1, std::forward<Body>(body));
}

// ---- one row at a time, on SIMD lanes (vmath.h) ----------------------------------
// x == y is allowed where a kernel writes y.

/// sum of a[i] * b[i] over i < n.
template <class T>
T dot(const T* a, const T* b, std::size_t n);

/// y[i] = scale * softmax(x[0 .. n))[i] = scale * exp(x[i] - max) / sum_j exp(x[j] -
/// max), shifted by the row's largest value so that exp never overflows; n >= 1.
template <class T>
void softmax_row(const T* x, T* y, std::size_t n, T scale = T(1));

/// log(sum_i exp(x[i])) over i < n (n >= 1) in two parts: the row's largest
/// value and log(sum_i exp(x[i] - largest)). Kept apart because a caller that
/// subtracts it from a logit should compute (x - largest) - log_sum: adding
/// the two first would round log_sum away when the logits are large.
template <class T>
struct LogSumExp {
  T largest;
  T log_sum;
};
template <class T>
LogSumExp<T> log_sum_exp(const T* x, std::size_t n);

/// y[i] = exp(x[i]), sigmoid(x[i]) = 1 / (1 + exp(-x[i])), silu(x[i]) = x[i]
/// sigmoid(x[i]).
template <class T>
void exp(const T* x, T* y, std::size_t n);
template <class T>
void sigmoid(const T* x, T* y, std::size_t n);
template <class T>
void silu(const T* x, T* y, std::size_t n);

// ---- attention's decode step, fused (decode_attention.cpp) -----------------------

/// The most query rows per K/V head grouped_decode_attention takes: gemm()'s
/// few-rows kernels (few_rows.cpp) handle up to this many, and compute each
/// row the same way whatever the number of rows, the cut into tasks or the
/// thread count.
inline constexpr std::size_t kDecodeRowsMax = 8;

/// For each K/V head h < heads, all arrays row-major and contiguous:
///   scores = q_h k_h^T * scale              q_h [rows, hd], k_h [m, hd]
///   probs  = row r's softmax_row over its first visible[r % queries] keys,
///            0 for the others (the causal mask)
///   out_h  = probs v_h                      v_h [m, hd], out_h [rows, hd]
/// with q [heads, rows, hd], k and v [heads, m, hd], out [heads, rows, hd],
/// rows <= kDecodeRowsMax, 1 <= visible[t] <= m. A head's four steps run one
/// after the other in one task of the pool, on scores that stay in cache,
/// instead of four loops over all heads. Every step is the call or the loop
/// that the ops make (gemm(), one multiply per score, softmax_row), in the
/// same order, so the result is the same to the bit.
template <class T>
void grouped_decode_attention(std::size_t heads, std::size_t rows, std::size_t queries,
                              std::size_t m, std::size_t hd, T scale, const T* q,
                              const T* k, const T* v, const std::size_t* visible, T* out);

/// Whether grouped_decode_attention is worth running for these sizes on the
/// pool's threads: its tasks are whole heads, so with fewer heads than
/// threads and much work per head, the ops (which split each product over
/// the threads) are faster.
bool grouped_decode_pays(std::size_t heads, std::size_t rows, std::size_t m,
                         std::size_t hd);

// ---- 16-bit weights (weights16.cpp) ---------------------------------------------

/// The two 16-bit number formats checkpoints store weights in: bfloat16 (the
/// top 16 bits of a float32: 8 exponent bits, 7 mantissa bits) and IEEE half
/// (5 exponent bits, 10 mantissa bits).
enum class Half { bf16, f16 };

/// A 16-bit number as float32, exactly (subnormals, inf and nan included).
float half_to_float(Half type, std::uint16_t bits);
/// float32 to 16 bits, rounded to the nearest, ties to even; too large a
/// value becomes inf, a nan stays a nan.
std::uint16_t float_to_half(Half type, float value);
/// The same for n numbers.
void floats_to_halves(Half type, const float* x, std::uint16_t* h, std::size_t n);
void halves_to_floats(Half type, const std::uint16_t* h, float* x, std::size_t n);

/// y[m, n] = sum over k of x[m, k] * w[n, k], for x [M, K] float32 and w
/// [N, K] in 16 bits, y [M, N] float32, all row-major and contiguous: every
/// weight widened to float32 as it is read, products and sums in float32.
/// Each y[m, n] is summed the same way whatever M and the thread count.
void linear16(Half type, std::size_t M, std::size_t N, std::size_t K, const float* x,
              const std::uint16_t* w, float* y);
/// Which kernel linear16 runs, as compiled: "AVX-512", "AVX2 + F16C" or
/// "portable".
const char* linear16_path();

/// How far ahead of its loads linear16 asks for W when it reads W once (one
/// row of x, or the few of a decode step): the fastest distance depends on
/// the CPU, so a process's first large such products try the two candidates
/// in turns, timed in pairs, and the rest use the one that was faster in the
/// median pair. The results are the same bits with either.
struct ReadAheadChoice {
  std::size_t bytes = 0;  ///< in use; 0 while measuring, or in the portable loop
  bool forced = false;    ///< set by force_linear16_read_ahead
  std::array<std::size_t, 2> candidates{};  ///< bytes ahead (none: portable loop)
  std::array<double, 2> bytes_per_s{};      ///< median speed of each one's trials
  double second_over_first = 0;  ///< median over the pairs of their speeds' ratio
  std::size_t pairs = 0;         ///< pairs of trials timed so far
};
ReadAheadChoice linear16_read_ahead();
/// Makes linear16 ask `bytes` ahead (one of the candidates), or with 0 go
/// back to the measured choice: for the benchmark and the tests. Throws
/// std::invalid_argument for any other value.
void force_linear16_read_ahead(std::size_t bytes);

namespace detail {
/// linear16's trials, paired: a first-candidate trial with the next
/// second-candidate one to finish after it (trials made by two threads at
/// once may finish out of turn; a first-candidate trial that finds its
/// predecessor still unpaired takes its place).
class ReadAheadPairs {
 public:
  void add(std::size_t candidate, double bytes_per_s);  // candidate 0 or 1
  /// Each candidate's trials, in the order they finished (bytes per second).
  const std::array<std::vector<double>, 2>& speeds() const { return speeds_; }
  /// Per pair: the second's speed over the first's.
  const std::vector<double>& ratios() const { return ratios_; }

 private:
  std::array<std::vector<double>, 2> speeds_;
  double first_ = 0;  // the first-candidate trial waiting for its pair, or 0
  std::vector<double> ratios_;
};
/// The second candidate when the median of the pairs' ratios (the second's
/// speed over the first's) is above 1, else the first (no pairs: the first).
std::size_t faster_read_ahead(const std::vector<double>& pair_ratios);
/// linear16's portable loop, compiled on every machine (the tests hold the
/// vector kernels to it): each y[m, n] a plain float32 sum in order of k.
void linear16_portable(Half type, std::size_t M, std::size_t N, std::size_t K,
                       const float* x, const std::uint16_t* w, float* y);
}  // namespace detail

// ---- decimal rounding (decimal.cpp) ------------------------------------------------

/// v rounded to `digits` significant decimal digits (1 <= digits <= 17) and
/// read back as the nearest double: what printing it with "%.*g" and reading
/// the text back with strtod gives, computed with a few double operations
/// instead of text (printf rounds with multi-word arithmetic, which in
/// WebAssembly runs in software; the tracer rounds every value it records).
/// Equal to the text route except when v lies within about one unit of its
/// last bit of a halfway point between two decimals, where it may land on
/// the other neighbour. NaN, infinities and zeros are returned as they are;
/// 17 digits or more return v (17 give back every double).
double round_to_digits(double v, int digits);

// ---- memory (allocation.cpp) -----------------------------------------------------

/// Called by the engine for every new tensor's array (`bytes` at `data`, not
/// yet written). Sets how the C library keeps freed memory (once, on the
/// first call) and asks Linux to back a large array with 2 MiB pages.
/// Nothing computed depends on it.
void apply_allocation_policy(void* data, std::size_t bytes);

}  // namespace fast
}  // namespace glassllm
