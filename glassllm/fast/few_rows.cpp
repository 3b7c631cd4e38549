// few_rows.cpp: the kernels for products of 1 to 8 rows (a decode step) that
// read B once, in place. Speed only: blas.cpp sends such products here
// (split_few_rows), one task at a time; everything else goes to the backend.
// docs/10-gqa-without-copies.md has the measurements behind each choice.
#include "glassllm/fast/few_rows.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <type_traits>
#include <vector>

#include "glassllm/fast/vmath.h"  // xsimd

namespace glassllm {

namespace {

// ---- a few rows against B -------------------------------------------------------
//
// Attention's decode step in the grouped path multiplies G rows of queries
// (G = 4 for exaone-4.0-1.2b) with a K/V cache of thousands of positions:
// M = 2..8, and B is the whole cache of one head. OpenBLAS's GEMM first packs
// B into its own buffer (sgemm_incopy / itcopy, most of that step's time in
// `perf`), which is one more read and a write of the entire cache: the
// very copy the grouped path exists to avoid. These kernels read B once, in
// place, for every product of 1 to 8 rows (split_few_rows), and compute each
// row the same way whatever the number of rows; everything else goes to the
// backend.

// These kernels do a few multiply-adds per value of B they load, which keeps
// fewer reads in flight than a plain copy does: with the hardware prefetcher
// alone they took far longer than reading B once. So each asks for B ahead
// of where it reads: few_rows_nt and few_rows_nn_regs kPrefetchBytes ahead,
// in rows, few_rows_nn a block ahead (NextBlock). On AVX-512, few_rows_nt_held asks
// kHeldPrefetchBytes ahead (see there), and few_rows_nn_regs not at all: it
// reads B in an order that the hardware's prefetcher follows alone, and
// asking as well made it slower.
constexpr std::size_t kPrefetchBytes = 2048;

std::size_t rows_ahead(std::size_t row_bytes) {
  return std::max<std::size_t>(1, kPrefetchBytes / row_bytes);
}

// Stores alpha * value (+ beta * old) into c.
template <class T>
void put(T& c, T alpha, T value, T beta) {
  c = beta == T(0) ? alpha * value : alpha * value + beta * c;
}

// lane[q]: the lane of xsimd::haddp(rows)'s result that holds the sum of
// rows[q]. It should be q, but xsimd 8.1 (Debian 12's) permutes the lanes for
// AVX-512 floats (0 1 4 5 2 3 6 7 ...); asking haddp once works with any
// version.
template <class T>
const std::array<std::size_t, xsimd::batch<T>::size>& haddp_lanes() {
  using V = xsimd::batch<T>;
  static const auto lanes = [] {
    V rows[V::size];
    for (std::size_t q = 0; q < V::size; ++q) rows[q] = V(T(q));  // sums to q * size
    alignas(64) T sums[V::size];
    xsimd::haddp(rows).store_aligned(sums);
    std::array<std::size_t, V::size> lane{};
    for (std::size_t l = 0; l < V::size; ++l) lane[std::size_t(sums[l]) / V::size] = l;
    return lane;
  }();
  return lanes;
}

// The sum of one batch's lanes, added in the order in which xsimd::haddp adds
// each of its rows (xsimd::hadd adds them in another order). few_rows_nt ends
// most dot products inside one haddp of W of them, and the ones left over on
// their own, with lane_sum: both round alike, so a row's result does not
// depend on how many rows or keys share the call (and the grouped and
// repeat_kv paths agree to the bit).
template <class T>
T lane_sum(const xsimd::batch<T>& v) {
  using V = xsimd::batch<T>;
  V rows[V::size];
  rows[0] = v;
  for (std::size_t q = 1; q < V::size; ++q) rows[q] = V(T(0));
  alignas(64) T sums[V::size];
  xsimd::haddp(rows).store_aligned(sums);
  return sums[haddp_lanes<T>()[0]];
}

// The end of a block of KEYS = W / MR rows of B in few_rows_nt: adds each of
// acc's W batches across (one xsimd::haddp) and puts the sum of
// acc[key * MR + i] into C[i, j + key]; lane is haddp_lanes<T>().
template <std::size_t MR, class T>
void put_block(const xsimd::batch<T>* acc,
               const std::array<std::size_t, xsimd::batch<T>::size>& lane, T alpha,
               T beta, T* C, std::size_t ldc, std::size_t j) {
  constexpr std::size_t W = xsimd::batch<T>::size, KEYS = W / MR;
  alignas(64) T dots[W];
  xsimd::haddp(acc).store_aligned(dots);
  for (std::size_t key = 0; key < KEYS; ++key)
    for (std::size_t i = 0; i < MR; ++i)
      put(C[i * ldc + j + key], alpha, dots[lane[key * MR + i]], beta);
}

// How few_rows_nt_held puts a block of W dot products into C: one of the two
// below, chosen once per call. Each is a type of its own, so that the loop
// is compiled once for each: with both in one loop, GCC 12 ran out of
// registers and reloaded A's rows from the stack for every block of keys.

// In general: put_block (one haddp, then each dot on its own).
template <std::size_t MR, class T>
struct PutBlock {
  T alpha, beta;
  const std::array<std::size_t, xsimd::batch<T>::size>& lane = haddp_lanes<T>();
  // acc[key * MR + i]: row i of A against row j + key of B
  void operator()(const xsimd::batch<T>* acc, T* C, std::size_t ldc,
                  std::size_t j) const {
    put_block<MR>(acc, lane, alpha, beta, C, ldc, j);
  }
};

#if defined(__AVX512F__)
// When beta == 0, for 2 or 4 rows of floats on AVX-512, and where haddp
// puts the sum of its row q in lane kHaddpLanes16[q] (xsimd 8.1's order for
// 16 floats, Debian 12's; haddp_lanes tells at run time): haddp is given the
// accumulators in such an order that lanes i * KEYS .. i * KEYS + KEYS - 1
// of its result are C[i, j .. j + KEYS - 1], and each row of C is one 128-
// or 256-bit store. put_block stores haddp's result and then loads each
// lane on its own (waiting for the store), multiplies and stores it, which
// slowed the held loop down when B came from L2. Each dot product is still added across
// by the same haddp, and alpha * value is the one multiply put() does when beta == 0, so
// the bits are the same.
constexpr std::array<std::size_t, 16> kHaddpLanes16 = {0, 1, 4,  5,  2,  3,  6,  7,
                                                       8, 9, 12, 13, 10, 11, 14, 15};

template <std::size_t MR>
struct PutRows {
  using V = xsimd::batch<float>;
  static constexpr std::size_t W = 16, KEYS = W / MR;
  static constexpr bool kShape = V::size == W && (MR == 2 || MR == 4);
  // source[q]: the accumulator (key * MR + i) that goes into haddp's row q,
  // whose sum lands in lane kHaddpLanes16[q] = i * KEYS + key
  static constexpr std::array<std::size_t, W> source = [] {
    std::array<std::size_t, W> s{};
    for (std::size_t q = 0; q < W; ++q) {
      const std::size_t lane = kHaddpLanes16[q], i = lane / KEYS, key = lane % KEYS;
      s[q] = key * MR + i;
    }
    return s;
  }();

  static bool applies(float beta) {
    const auto& lane = haddp_lanes<float>();
    return kShape && beta == 0.f &&
           std::equal(lane.begin(), lane.end(), kHaddpLanes16.begin());
  }

  float alpha;
  void operator()(const V* acc, float* C, std::size_t ldc, std::size_t j) const {
    const __m512 dots = _mm512_mul_ps(_mm512_set1_ps(alpha),
                                      in_c_order(acc, std::make_index_sequence<W>()));
    if constexpr (MR == 4) {
      _mm_storeu_ps(C + j, _mm512_extractf32x4_ps(dots, 0));
      _mm_storeu_ps(C + ldc + j, _mm512_extractf32x4_ps(dots, 1));
      _mm_storeu_ps(C + 2 * ldc + j, _mm512_extractf32x4_ps(dots, 2));
      _mm_storeu_ps(C + 3 * ldc + j, _mm512_extractf32x4_ps(dots, 3));
    } else {
      const __m512d halves = _mm512_castps_pd(dots);
      _mm256_storeu_ps(C + j, _mm512_castps512_ps256(dots));
      _mm256_storeu_ps(C + ldc + j, _mm256_castpd_ps(_mm512_extractf64x4_pd(halves, 1)));
    }
  }
  template <std::size_t... Q>
  static V in_c_order(const V* acc, std::index_sequence<Q...>) {
    const V rows[W] = {acc[source[Q]]...};
    return xsimd::haddp(rows);
  }
};
#endif

// The loop of few_rows_nt below for the common case of a short K that, for
// MR rows of A, fits in registers: K = KB batches, MR * KB <= 16, on a
// target with 32 vector registers (AVX-512). A's MR * KB batches are loaded
// once per call and held, and each B row is read in address order, one batch
// after the other; few_rows_nt's general loop takes batch k of KEYS rows
// before batch k + 1 of any, which reads B in steps of a row and back, an
// order that is slower to read even with no arithmetic at all. The
// hardware's prefetcher follows this order, but alone it keeps fewer lines
// in flight than a plain read of K does, so each batch of a row is also
// asked for kHeldPrefetchBytes ahead, into L1 (prefetcht0); the distance is
// the best of those tried (docs/bench-notes.md). Each sum meets A's batches
// in the same order k = 0, 1, ... as in the general loop, so the results are
// the same bits. `flatten` inlines xsimd::haddp, which GCC otherwise calls,
// passing the accumulators through memory. Returns the number of B rows
// done: a multiple of KEYS.
constexpr std::size_t kHeldPrefetchBytes = 4096;

template <std::size_t MR, std::size_t KB, class T, class Put>
__attribute__((flatten)) std::size_t few_rows_nt_held(std::size_t N, const T* A,
                                                      std::size_t lda, const T* B,
                                                      std::size_t ldb, T* C,
                                                      std::size_t ldc, const Put& put) {
  using V = xsimd::batch<T>;
  constexpr std::size_t W = V::size, KEYS = W / MR;
  V a[MR][KB];
  for (std::size_t i = 0; i < MR; ++i)
    for (std::size_t kb = 0; kb < KB; ++kb)
      a[i][kb] = V::load_unaligned(A + i * lda + kb * W);
  // In rows of B; a batch is one 64-byte line (sizeof(V) == 64 here).
  const std::size_t ahead =
      std::max<std::size_t>(1, kHeldPrefetchBytes / (KB * sizeof(V))) * ldb;
  std::size_t j = 0;
  for (; j + KEYS <= N; j += KEYS) {
    V acc[W];  // acc[key * MR + i]: row i of A against row j + key of B
    for (std::size_t q = 0; q < W; ++q) acc[q] = V(T(0));
#pragma GCC unroll 16  // unrolled, so that the accumulators stay in registers
    for (std::size_t key = 0; key < KEYS; ++key) {
      const T* b = B + (j + key) * ldb;
#pragma GCC unroll 4
      for (std::size_t kb = 0; kb < KB; ++kb) {
        __builtin_prefetch(b + ahead + kb * W);  // never faults, even past the end
        V bk = V::load_unaligned(b + kb * W);
        for (std::size_t i = 0; i < MR; ++i)
          acc[key * MR + i] = xsimd::fma(a[i][kb], bk, acc[key * MR + i]);
      }
    }
    put(acc, C, ldc, j);
  }
  return j;
}

// few_rows_nt_held for K = KB batches, KB chosen at run time; 0 rows done
// where it does not apply.
template <std::size_t MR, class T>
std::size_t few_rows_nt_held_any(std::size_t N, std::size_t K, T alpha, const T* A,
                                 std::size_t lda, const T* B, std::size_t ldb, T beta,
                                 T* C, std::size_t ldc) {
  using V = xsimd::batch<T>;
  constexpr std::size_t W = V::size;
  if constexpr (sizeof(V) < 64 || MR < 2 || MR > 4) {  // 16 registers, or no reuse
    return 0;
  } else {
    if (K % W != 0) return 0;
    auto run = [&](const auto& put) -> std::size_t {
      switch (K / W) {  // MR * KB <= 16 batches of A, beside W accumulators
        case 1:
          return few_rows_nt_held<MR, 1>(N, A, lda, B, ldb, C, ldc, put);
        case 2:
          return few_rows_nt_held<MR, 2>(N, A, lda, B, ldb, C, ldc, put);
        case 3:
          return few_rows_nt_held<MR, 3>(N, A, lda, B, ldb, C, ldc, put);
        case 4:
          return few_rows_nt_held<MR, 4>(N, A, lda, B, ldb, C, ldc, put);
        default:
          return 0;
      }
    };
#if defined(__AVX512F__)
    if constexpr (std::is_same_v<T, float> && PutRows<MR>::kShape)
      if (PutRows<MR>::applies(beta)) return run(PutRows<MR>{alpha});
#endif
    return run(PutBlock<MR, T>{alpha, beta});
  }
}

// C[i, j] = alpha * sum_k A[i, k] B[j, k] + beta * C[i, j]  (op(B) = B^T, B is
// [N, K]): one pass over B's rows, KEYS = W / MR of them at a time (W = the
// batch's lanes, MR a template argument so that the accumulators stay in
// registers). Each chunk of a B row is loaded once and meets the MR rows of
// A; each dot product ends as one batch of partial sums, and xsimd::haddp
// adds W such batches across at once: far fewer shuffles than one
// horizontal add per dot product, which made this kernel compute-bound
// rather than bound by reading B. Where A's
// rows fit in registers, few_rows_nt_held (above) does the same sums reading
// each B row straight through. When K is not a whole number of batches, or
// MR > W, and for the last N % KEYS rows, one B row at a time with a
// horizontal add each (lane_sum: in haddp's order).
template <std::size_t MR, class T>
void few_rows_nt(std::size_t N, std::size_t K, T alpha, const T* A, std::size_t lda,
                 const T* B, std::size_t ldb, T beta, T* C, std::size_t ldc) {
  using V = xsimd::batch<T>;
  constexpr std::size_t W = V::size, KEYS = W / MR;
  const std::size_t KV = K / W * W;  // the part of each dot product done in batches
  std::size_t j = 0;
  const auto& lane = haddp_lanes<T>();
  const std::size_t ahead = rows_ahead(K * sizeof(T)) * ldb;
  if constexpr (KEYS > 0) {
    j = few_rows_nt_held_any<MR>(N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    for (; j + KEYS <= N && KV == K; j += KEYS) {
      V acc[W];  // acc[key * MR + i]: row i of A against row j + key of B
      for (std::size_t q = 0; q < W; ++q) acc[q] = V(T(0));
      for (std::size_t k = 0; k < KV; k += W) {
        V a[MR];
        for (std::size_t i = 0; i < MR; ++i) a[i] = V::load_unaligned(A + i * lda + k);
        for (std::size_t key = 0; key < KEYS; ++key) {
          const T* b = B + (j + key) * ldb + k;
          // Never faults, even past the end. Not for one row (GEMV):
          // decoding gained nothing measurable from it.
          if constexpr (MR > 1) __builtin_prefetch(b + ahead);
          V bk = V::load_unaligned(b);
          for (std::size_t i = 0; i < MR; ++i)
            acc[key * MR + i] = xsimd::fma(a[i], bk, acc[key * MR + i]);
        }
      }
      put_block<MR>(acc, lane, alpha, beta, C, ldc, j);
    }
  }
  // The last N % KEYS rows of B (all of them when MR > W), one at a time.
  for (; j < N; ++j) {
    const T* b = B + j * ldb;
    V acc[MR];
    for (std::size_t i = 0; i < MR; ++i) acc[i] = V(T(0));
    for (std::size_t k = 0; k < KV; k += W) {
      V bk = V::load_unaligned(b + k);
      for (std::size_t i = 0; i < MR; ++i)
        acc[i] = xsimd::fma(V::load_unaligned(A + i * lda + k), bk, acc[i]);
    }
    for (std::size_t i = 0; i < MR; ++i) {
      T dot = lane_sum(acc[i]);
      for (std::size_t k = KV; k < K; ++k) dot += A[i * lda + k] * b[k];
      put(C[i * ldc + j], alpha, dot, beta);
    }
  }
}

// C[i, :] = alpha * sum_k A[i, k] B[k, :] + beta * C[i, :]  (B is [K, N], N
// small). Each row of B is added, scaled by A[i, k], into MR rows of sums.
// MR * N sums rarely fit in registers (4 rows of a head dim of 64 floats are
// 32 AVX2 batches; AVX2 has 16 registers), and kept in memory they cost a
// load and a store each for every row of B, several times as long as keeping
// them in registers. So B is taken a block of rows at a time (kBlockBytes, which
// stays in L1), and each block is swept once per tile of up to 2 rows of A
// by 4 batches of C, whose 8 sums stay in registers through the block. Every
// sum still adds B's rows in order k = 0, 1, ..., so the result does not
// depend on the tiling.
//
// While it sweeps one block, the kernel asks for the next one (NextBlock),
// a few lines per row of every sweep, so that memory is kept busy all the
// time and the next block is in L1 when the sweeps reach it. Asking only in
// the first sweep asked for nothing during the sweeps from L1, and memory
// sat idle.
constexpr std::size_t kBlockBytes = 8 * 1024;

// The `left` lines of a block of B's rows (rows of `row_lines` 64-byte
// lines, ldb elements apart, from `row`), asked for from memory a few at a
// time, in order.
template <class T>
struct NextBlock {
  const T* row = nullptr;  // the row being asked for
  std::size_t row_lines = 0, ldb = 0;
  std::size_t line = 0;  // the next line of that row
  std::size_t left = 0;  // lines not yet asked for

  void ask(std::size_t lines) {
    for (; lines > 0 && left > 0; --lines, --left) {
      __builtin_prefetch(row + line * (64 / sizeof(T)));  // never faults
      if (++line == row_lines) {
        line = 0;
        row += ldb;
      }
    }
  }
};

// One tile: `rows` rows of B (from B) into RI rows of VB batches of sums at
// `sums` (row length ld_sums), with A's RI rows from A; asks for
// `lines_per_row` lines of `next` per row.
template <std::size_t RI, std::size_t VB, class T>
void nn_tile(std::size_t rows, const T* A, std::size_t lda, const T* B, std::size_t ldb,
             T* sums, std::size_t ld_sums, NextBlock<T>& next,
             std::size_t lines_per_row) {
  using V = xsimd::batch<T>;
  constexpr std::size_t W = V::size;
  V acc[RI][VB];
  for (std::size_t i = 0; i < RI; ++i)
    for (std::size_t v = 0; v < VB; ++v)
      acc[i][v] = V::load_unaligned(sums + i * ld_sums + v * W);
  for (std::size_t k = 0; k < rows; ++k) {
    next.ask(lines_per_row);
    const T* b = B + k * ldb;
    V bk[VB];
    for (std::size_t v = 0; v < VB; ++v) bk[v] = V::load_unaligned(b + v * W);
    for (std::size_t i = 0; i < RI; ++i) {
      V a(A[i * lda + k]);
      for (std::size_t v = 0; v < VB; ++v) acc[i][v] = xsimd::fma(a, bk[v], acc[i][v]);
    }
  }
  for (std::size_t i = 0; i < RI; ++i)
    for (std::size_t v = 0; v < VB; ++v)
      acc[i][v].store_unaligned(sums + i * ld_sums + v * W);
}

// nn_tile with RI (1 or 2) and VB (1 to 4) chosen at run time.
template <class T>
void nn_tile_any(std::size_t ri, std::size_t vb, std::size_t rows, const T* A,
                 std::size_t lda, const T* B, std::size_t ldb, T* sums,
                 std::size_t ld_sums, NextBlock<T>& next, std::size_t lines_per_row) {
  auto run = [&](auto ri_, auto vb_) {
    nn_tile<ri_(), vb_()>(rows, A, lda, B, ldb, sums, ld_sums, next, lines_per_row);
  };
  auto with_vb = [&](auto ri_) {
    switch (vb) {
      case 1:
        return run(ri_, std::integral_constant<std::size_t, 1>{});
      case 2:
        return run(ri_, std::integral_constant<std::size_t, 2>{});
      case 3:
        return run(ri_, std::integral_constant<std::size_t, 3>{});
      default:
        return run(ri_, std::integral_constant<std::size_t, 4>{});
    }
  };
  if (ri == 1) return with_vb(std::integral_constant<std::size_t, 1>{});
  return with_vb(std::integral_constant<std::size_t, 2>{});
}

template <std::size_t MR, class T>
void few_rows_nn(std::size_t N, std::size_t K, T alpha, const T* A, std::size_t lda,
                 const T* B, std::size_t ldb, T beta, T* C, std::size_t ldc) {
  using V = xsimd::batch<T>;
  constexpr std::size_t W = V::size, RI = 2, VB = 4;
  const std::size_t NV = N / W, tail = NV * W;  // whole batches, then columns tail..N-1
  std::vector<T> sums(MR * N, T(0));
  const std::size_t block = std::max<std::size_t>(8, kBlockBytes / (N * sizeof(T)));
  const std::size_t row_lines = (N * sizeof(T) + 63) / 64;
  // Tiles per block: each sweeps the block once.
  const std::size_t sweeps = (MR + RI - 1) / RI * ((NV + VB - 1) / VB);
  for (std::size_t k0 = 0; k0 < K; k0 += block) {
    const std::size_t rows = std::min(block, K - k0);
    const T* b = B + k0 * ldb;
    // The next block's lines, spread over this block's sweeps and rows.
    const std::size_t next_rows = std::min(block, K - (k0 + rows));  // 0 after the last
    NextBlock<T> next{b + rows * ldb, row_lines, ldb, 0, next_rows * row_lines};
    const std::size_t lines_per_row =
        sweeps == 0 ? 0 : (next.left + sweeps * rows - 1) / (sweeps * rows);
    for (std::size_t i = 0; i < MR; i += RI)
      for (std::size_t v = 0; v < NV; v += VB) {
        const std::size_t ri = std::min(RI, MR - i), vb = std::min(VB, NV - v);
        nn_tile_any(ri, vb, rows, A + i * lda + k0, lda, b + v * W, ldb,
                    sums.data() + i * N + v * W, N, next, lines_per_row);
      }
    // The columns after the last whole batch, one at a time.
    for (std::size_t k = k0; k < k0 + rows; ++k)
      for (std::size_t i = 0; i < MR; ++i)
        for (std::size_t j = tail; j < N; ++j)
          sums[i * N + j] += A[i * lda + k] * B[k * ldb + j];
  }
  for (std::size_t i = 0; i < MR; ++i)
    for (std::size_t j = 0; j < N; ++j) put(C[i * ldc + j], alpha, sums[i * N + j], beta);
}

// Keeps a batch in a register where GCC would rather read it again from
// memory at every use (x86; elsewhere it does nothing).
template <class V>
void keep_in_register(V& v) {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
  asm("" : "+v"(v.data));
#else
  (void)v;
#endif
}

// The same when N is NV whole batches (a head dim of 64 floats is 4 AVX-512
// batches): the MR * NV accumulators then live in registers. With 32 vector
// registers (AVX-512) B's row is also held in NV registers, and not asked
// for ahead. GCC 12 otherwise loads each batch of B again as a memory
// operand of each of its MR FMAs (16 loads from L1 per row where 4 do), and
// with the row held, the hardware's prefetcher alone keeps up (asking ahead
// as well made it slower). With 16 registers (AVX2), holding the row would
// spill the accumulators; there it is as before.
template <std::size_t MR, std::size_t NV, class T>
void few_rows_nn_regs(std::size_t K, T alpha, const T* A, std::size_t lda, const T* B,
                      std::size_t ldb, T beta, T* C, std::size_t ldc) {
  using V = xsimd::batch<T>;
  constexpr std::size_t W = V::size;
  constexpr bool kHoldRow = sizeof(V) == 64;
  V acc[MR][NV];
  for (std::size_t i = 0; i < MR; ++i)
    for (std::size_t v = 0; v < NV; ++v) acc[i][v] = V(T(0));
  const std::size_t ahead = rows_ahead(NV * W * sizeof(T)) * ldb;
  for (std::size_t k = 0; k < K; ++k) {
    if constexpr (!kHoldRow)
      for (std::size_t v = 0; v < NV; v += 64 / sizeof(T) / W)
        __builtin_prefetch(B + k * ldb + ahead + v * W);
    V b[NV];
    for (std::size_t v = 0; v < NV; ++v) {
      b[v] = V::load_unaligned(B + k * ldb + v * W);
      if constexpr (kHoldRow) keep_in_register(b[v]);
    }
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

// Calls f with std::integral_constant<std::size_t, M> for M in 1..8.
template <class F>
void with_rows(std::size_t M, F f) {
  switch (M) {
    case 1:
      return f(std::integral_constant<std::size_t, 1>{});
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

template <class T>
void few_rows_task(bool trans_b, std::size_t M, std::size_t N, std::size_t K, T alpha,
                   const T* A, std::size_t lda, const T* B, std::size_t ldb, T beta, T* C,
                   std::size_t ldc) {
  with_rows(M, [&](auto rows) {
    constexpr std::size_t MR = rows(), W = xsimd::batch<T>::size;
    if (trans_b)  // C = A B^T
      few_rows_nt<MR>(N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    else if (MR <= 4 && N == 4 * W)  // C = A B, one strip of 4 batches
      few_rows_nn_regs<MR, 4>(K, alpha, A, lda, B, ldb, beta, C, ldc);
    else
      few_rows_nn<MR>(N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  });
}

template void few_rows_task<float>(bool, std::size_t, std::size_t, std::size_t, float,
                                   const float*, std::size_t, const float*, std::size_t,
                                   float, float*, std::size_t);
template void few_rows_task<double>(bool, std::size_t, std::size_t, std::size_t, double,
                                    const double*, std::size_t, const double*,
                                    std::size_t, double, double*, std::size_t);

}  // namespace glassllm
