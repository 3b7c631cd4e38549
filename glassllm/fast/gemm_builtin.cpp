// gemm_builtin.cpp: GlassLM's own matrix product, in plain C++ with no
// library behind it. It is the whole backend of a -DGLASSLLM_BLAS=builtin
// build (and of WebAssembly, where no BLAS exists); the other backends still
// compile it so that `glassllm bench` can compare it with the library.
//
// A naive triple loop reads one operand with a stride and reloads every
// element from memory for each use. The same arithmetic runs
// several times faster when each number is loaded from memory once and then
// reused from the caches and the registers. The loops below are the usual
// way to get there (Goto's algorithm, as in BLIS and OpenBLAS), in three
// levels, each sized for one level of the memory hierarchy:
//
//   for jc in steps of NC columns of C           B's block  [KC, NC]  -> L3
//     for pc in steps of KC along the sum          (packed once per jc, pc)
//       pack op(B)[pc:pc+KC, jc:jc+NC]
//       for ic in steps of MC rows of C           A's block  [MC, KC]  -> L2
//         pack op(A)[ic:ic+MC, pc:pc+KC]
//         for jr in steps of NR, ir in steps of MR:
//           micro-kernel: C[ir:ir+MR, jr:jr+NR] += A panel [MR, KC] @ B panel [KC, NR]
//
// Packing copies a block into the exact order the micro-kernel reads it
// (contiguous, whatever op(A) and op(B) are, transposed or not), so the
// kernel's loads are sequential and the transposes cost nothing extra. The
// micro-kernel keeps its MR x NR tile of C in registers for the whole sum:
// per step k it loads MR numbers of A and NR of B and does MR * NR
// multiply-adds. With NR two vector registers wide and MR rows, that is
// 2 * MR accumulators; the sizes below fit them in the 16 (SSE2, AVX) or
// 32 (AVX-512) vector registers. The kernel says so in xsimd batches (one
// batch: a vector register of whatever the build targets). Written as plain
// loops over numbers, GCC 12 turned the AVX2 float kernel into shuffles and
// spills, many times slower; in batches it is level with OpenBLAS
// (`glassllm bench`, "built-in GEMM"; docs/bench-notes.md).
//
// Every element of C is one sum over k in the same order whatever the block
// sizes of M and N and the number of threads, so results repeat bit for bit
// across thread counts.
#include <algorithm>
#include <cstddef>
#include <thread>
#include <vector>

#include "glassllm/fast/blas_internal.h"
#include "glassllm/fast/vmath.h"  // xsimd

namespace glassllm {

namespace {

// The number of vector registers of the instruction set this file is
// compiled for.
#if defined(__AVX512F__)
constexpr std::size_t kVectorRegisters = 32;
#else
constexpr std::size_t kVectorRegisters = 16;  // SSE2, AVX, NEON, WebAssembly SIMD
#endif

template <class T>
struct Blocking {
  static constexpr std::size_t lanes = xsimd::batch<T>::size;  // numbers per register
  // The micro-tile: NR columns = 2 vectors, MR rows. Registers needed:
  // 2 * MR accumulators + 2 for B's row + 1 for A's broadcast number:
  // 8 rows (19 of 32) with AVX-512, 6 rows (15 of 16) otherwise.
  static constexpr std::size_t NR = 2 * lanes;
  static constexpr std::size_t MR = kVectorRegisters == 32 ? 8 : 6;
  // KC: a B panel [KC, NR] (the numbers one micro-kernel call streams) stays
  // in a 32 KiB L1 cache with room to spare: 16 KiB.
  static constexpr std::size_t KC =
      std::clamp<std::size_t>(16384 / (NR * sizeof(T)), 64, 384);
  // MC: A's packed block [MC, KC] (reused for every jr) in half of a 256 KiB L2.
  static constexpr std::size_t MC = 131072 / (KC * sizeof(T)) / MR * MR;
  // NC: B's packed block [KC, NC] (reused for every ic) in a few MiB of L3.
  static constexpr std::size_t NC = 4096 / NR * NR;
};

// op(X)[r, c] for X stored row-major with row length ld, transposed or not:
// the number at data + r * row_step() + c * col_step().
template <class T>
struct Operand {
  const T* data;
  std::size_t ld;
  bool trans;
  std::size_t row_step() const { return trans ? 1 : ld; }
  std::size_t col_step() const { return trans ? ld : 1; }
  const T* at(std::size_t r, std::size_t c) const {
    return data + r * row_step() + c * col_step();
  }
};

// Packs one panel of W lanes (rows of op(A), or columns of op(B)) over kc
// steps of the sum: out[k * W + l] = src[k * step_k + l * step_l], with the
// lanes from `lanes` to W zero, so the kernel never needs a shorter tile.
// It reads memory in the order it is laid out: across the lanes when they
// are neighbours (step_l == 1), else one lane at a time along k. Read
// number by number in the panel's order, with a bounds test each, packing
// was a quarter of a default-config training step in a builtin build.
template <std::size_t W, class T>
void pack_panel(const T* src, std::size_t step_k, std::size_t step_l, std::size_t lanes,
                std::size_t kc, T* out) {
  if (lanes < W) std::fill(out, out + kc * W, T(0));
  if (step_l == 1)
    for (std::size_t k = 0; k < kc; ++k)
      for (std::size_t l = 0; l < lanes; ++l) out[k * W + l] = src[k * step_k + l];
  else
    for (std::size_t l = 0; l < lanes; ++l)
      for (std::size_t k = 0; k < kc; ++k) out[k * W + l] = src[k * step_k + l * step_l];
}

// Packs op(A)[rows, ks] (rows = mc, ks = kc, from row i0, column k0) into
// panels of MR rows: panel p holds, for each k, its MR numbers side by side
// (a[k * MR + i]), which is the order the micro-kernel reads.
template <class T>
void pack_a(const Operand<T>& A, std::size_t i0, std::size_t mc, std::size_t k0,
            std::size_t kc, T* out) {
  constexpr std::size_t MR = Blocking<T>::MR;
  for (std::size_t p = 0; p < mc; p += MR, out += kc * MR)
    pack_panel<MR>(A.at(i0 + p, k0), A.col_step(), A.row_step(), std::min(MR, mc - p), kc,
                   out);
}

// Packs op(B)[ks, cols] into panels of NR columns: b[k * NR + j].
template <class T>
void pack_b(const Operand<T>& B, std::size_t k0, std::size_t kc, std::size_t j0,
            std::size_t nc, T* out) {
  constexpr std::size_t NR = Blocking<T>::NR;
  for (std::size_t p = 0; p < nc; p += NR, out += kc * NR)
    pack_panel<NR>(B.at(k0, j0 + p), B.row_step(), B.col_step(), std::min(NR, nc - p), kc,
                   out);
}

// The micro-kernel: acc[MR][NR] = A panel [MR, kc] @ B panel [kc, NR], both
// packed. Row i of the tile is two batches, kept in registers for the whole
// sum; at each k, B's row (two batches) meets A's MR numbers, each broadcast
// to a batch. The k loop streams both panels once.
template <class T>
void micro_kernel(std::size_t kc, const T* __restrict a, const T* __restrict b,
                  T (&acc)[Blocking<T>::MR][Blocking<T>::NR]) {
  using V = xsimd::batch<T>;
  constexpr std::size_t MR = Blocking<T>::MR, W = V::size;
  V tile[MR][2];
  for (std::size_t i = 0; i < MR; ++i) tile[i][0] = tile[i][1] = V(T(0));
  for (std::size_t k = 0; k < kc; ++k, a += MR, b += 2 * W) {
    const V b0 = V::load_unaligned(b), b1 = V::load_unaligned(b + W);
    for (std::size_t i = 0; i < MR; ++i) {
      const V ai(a[i]);
      tile[i][0] = xsimd::fma(ai, b0, tile[i][0]);  // tile[i][j] += a[i] * b[j]
      tile[i][1] = xsimd::fma(ai, b1, tile[i][1]);
    }
  }
  for (std::size_t i = 0; i < MR; ++i) {
    tile[i][0].store_unaligned(acc[i]);
    tile[i][1].store_unaligned(acc[i] + W);
  }
}

// Adds a finished tile into C: C = alpha * acc + beta * C on the first block
// of the sum (beta == 0 overwrites C, even NaN, as BLAS does), C += alpha * acc
// on the later ones. Only the rows and columns of the tile that exist.
template <class T>
void store_tile(const T (&acc)[Blocking<T>::MR][Blocking<T>::NR], std::size_t rows,
                std::size_t cols, T alpha, T beta, bool first, T* C, std::size_t ldc) {
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) {
      T& c = C[i * ldc + j];
      T value = alpha * acc[i][j];
      if (!first)
        c += value;
      else
        c = beta == T(0) ? value : value + beta * c;
    }
}

// C[0:M, 0:N] = alpha * op(A) op(B) + beta * C on one thread, A's rows and
// C's rows starting at row_begin (the threads below split the rows).
template <class T>
void gemm_rows(const Operand<T>& A, const Operand<T>& B, std::size_t row_begin,
               std::size_t row_end, std::size_t N, std::size_t K, T alpha, T beta, T* C,
               std::size_t ldc) {
  using Z = Blocking<T>;
  // The packed blocks, kept per thread from one call to the next: a small
  // product (64 of them make one attention score) must not pay for
  // allocating and clearing megabytes each time.
  thread_local std::vector<T> a_pack, b_pack;
  const std::size_t rows = row_end - row_begin;
  const std::size_t mc_max = std::min(Z::MC, (rows + Z::MR - 1) / Z::MR * Z::MR);
  const std::size_t nc_max = std::min(Z::NC, (N + Z::NR - 1) / Z::NR * Z::NR);
  const std::size_t kc_max = std::min(Z::KC, K);
  if (a_pack.size() < mc_max * kc_max) a_pack.resize(mc_max * kc_max);
  if (b_pack.size() < kc_max * nc_max) b_pack.resize(kc_max * nc_max);
  T acc[Z::MR][Z::NR];
  for (std::size_t jc = 0; jc < N; jc += Z::NC) {
    const std::size_t nc = std::min(Z::NC, N - jc);
    for (std::size_t pc = 0; pc < K; pc += Z::KC) {
      const std::size_t kc = std::min(Z::KC, K - pc);
      pack_b(B, pc, kc, jc, nc, b_pack.data());
      for (std::size_t ic = row_begin; ic < row_end; ic += Z::MC) {
        const std::size_t mc = std::min(Z::MC, row_end - ic);
        pack_a(A, ic, mc, pc, kc, a_pack.data());
        for (std::size_t jr = 0; jr < nc; jr += Z::NR)
          for (std::size_t ir = 0; ir < mc; ir += Z::MR) {
            micro_kernel<T>(kc, a_pack.data() + ir * kc, b_pack.data() + jr * kc, acc);
            store_tile<T>(acc, std::min(Z::MR, mc - ir), std::min(Z::NR, nc - jr), alpha,
                          beta, pc == 0, C + (ic + ir) * ldc + jc + jr, ldc);
          }
      }
    }
  }
}

}  // namespace

template <class T>
void builtin_gemm(bool trans_a, bool trans_b, std::size_t M, std::size_t N, std::size_t K,
                  T alpha, const T* A, std::size_t lda, const T* B, std::size_t ldb,
                  T beta, T* C, std::size_t ldc, int threads) {
  if (M == 0 || N == 0) return;
  if (K == 0 || alpha == T(0)) {  // nothing to add: C = beta * C
    for (std::size_t i = 0; i < M; ++i)
      for (std::size_t j = 0; j < N; ++j)
        C[i * ldc + j] = beta == T(0) ? T(0) : beta * C[i * ldc + j];
    return;
  }
  const Operand<T> a{A, lda, trans_a}, b{B, ldb, trans_b};
  // Threads take whole MR-row slices of C. Starting a thread costs tens of
  // microseconds, so only products of a few million multiply-adds use them.
  constexpr std::size_t MR = Blocking<T>::MR;
  const std::size_t slices = (M + MR - 1) / MR;
  const std::size_t work = M * N * K;
  std::size_t n_threads = std::size_t(std::max(1, threads));
  n_threads = std::min({n_threads, slices, std::max<std::size_t>(1, work / 2'000'000)});
  if (n_threads <= 1) return gemm_rows(a, b, 0, M, N, K, alpha, beta, C, ldc);
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < n_threads; ++t) {
    std::size_t begin = std::min(M, slices * t / n_threads * MR),
                end = std::min(M, slices * (t + 1) / n_threads * MR);
    if (begin < end)
      pool.emplace_back(gemm_rows<T>, a, b, begin, end, N, K, alpha, beta, C, ldc);
  }
  for (std::thread& t : pool) t.join();
}

template <class T>
void builtin_gemv(bool trans, std::size_t rows, std::size_t cols, T alpha, const T* A,
                  std::size_t lda, const T* x, std::ptrdiff_t incx, T beta, T* y,
                  std::ptrdiff_t incy) {
  // op(A) is [n_out, n_in]; x has n_in numbers, y n_out.
  const std::size_t n_out = trans ? cols : rows, n_in = trans ? rows : cols;
  if (n_out == 0) return;
  // Strided vectors are gathered once so the loops below read contiguous data.
  std::vector<T> x_copy, out(n_out, T(0));
  if (incx != 1) {
    x_copy.resize(n_in);
    for (std::size_t i = 0; i < n_in; ++i) x_copy[i] = x[std::ptrdiff_t(i) * incx];
    x = x_copy.data();
  }
  if (!trans) {
    // out[i] = row i of A . x. Eight partial sums side by side: the compiler
    // may vectorise independent sums (one sum would need reassociation).
    constexpr std::size_t P = 8;
    for (std::size_t i = 0; i < rows; ++i) {
      const T* row = A + i * lda;
      T part[P] = {};
      std::size_t j = 0;
      for (; j + P <= cols; j += P)
        for (std::size_t p = 0; p < P; ++p) part[p] += row[j + p] * x[j + p];
      T sum = 0;
      for (std::size_t p = 0; p < P; ++p) sum += part[p];
      for (; j < cols; ++j) sum += row[j] * x[j];
      out[i] = sum;
    }
  } else {
    // out = sum_i x[i] * row i of A: one pass over A, row by row.
    for (std::size_t i = 0; i < rows; ++i) {
      const T* row = A + i * lda;
      const T xi = x[i];
      for (std::size_t j = 0; j < cols; ++j) out[j] += xi * row[j];
    }
  }
  for (std::size_t i = 0; i < n_out; ++i) {
    T& yi = y[std::ptrdiff_t(i) * incy];
    yi = beta == T(0) ? alpha * out[i] : alpha * out[i] + beta * yi;
  }
}

template <class T>
T builtin_dot(std::size_t n, const T* x, std::ptrdiff_t incx, const T* y,
              std::ptrdiff_t incy) {
  constexpr std::size_t P = 8;  // independent partial sums, as in builtin_gemv
  T part[P] = {};
  std::size_t i = 0;
  if (incx == 1 && incy == 1)
    for (; i + P <= n; i += P)
      for (std::size_t p = 0; p < P; ++p) part[p] += x[i + p] * y[i + p];
  T sum = 0;
  for (std::size_t p = 0; p < P; ++p) sum += part[p];
  for (; i < n; ++i) sum += x[std::ptrdiff_t(i) * incx] * y[std::ptrdiff_t(i) * incy];
  return sum;
}

template void builtin_gemm<float>(bool, bool, std::size_t, std::size_t, std::size_t,
                                  float, const float*, std::size_t, const float*,
                                  std::size_t, float, float*, std::size_t, int);
template void builtin_gemm<double>(bool, bool, std::size_t, std::size_t, std::size_t,
                                   double, const double*, std::size_t, const double*,
                                   std::size_t, double, double*, std::size_t, int);
template void builtin_gemv<float>(bool, std::size_t, std::size_t, float, const float*,
                                  std::size_t, const float*, std::ptrdiff_t, float,
                                  float*, std::ptrdiff_t);
template void builtin_gemv<double>(bool, std::size_t, std::size_t, double, const double*,
                                   std::size_t, const double*, std::ptrdiff_t, double,
                                   double*, std::ptrdiff_t);
template float builtin_dot<float>(std::size_t, const float*, std::ptrdiff_t, const float*,
                                  std::ptrdiff_t);
template double builtin_dot<double>(std::size_t, const double*, std::ptrdiff_t,
                                    const double*, std::ptrdiff_t);

}  // namespace glassllm
