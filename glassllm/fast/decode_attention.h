// decode_attention.h (private): attention's decode step on the grouped
// path, fused. Speed only: glassllm/model/model.cpp's attend() calls it in
// place of its four ops (scores, scale, causal softmax, probs @ V) when
// nothing watches them (no tracer, no op graph, no gradient), and it gives
// the same bits as they do.
#pragma once

#include <cstddef>

namespace glassllm::fast {

/// The most query rows per K/V head it takes: gemm()'s few-rows kernels
/// (blas.cpp) handle up to this many, and compute each row the same way
/// whatever the number of rows, the cut into tasks or the thread count.
inline constexpr std::size_t kDecodeRowsMax = 8;

/// For each K/V head h < heads, all arrays row-major and contiguous:
///   scores = q_h k_h^T * scale              q_h [rows, hd], k_h [m, hd]
///   probs  = row r's softmax over its first visible[r % queries] keys,
///            0 for the others (the causal mask)
///   out_h  = probs v_h                      v_h [m, hd], out_h [rows, hd]
/// with q [heads, rows, hd], k and v [heads, m, hd], out [heads, rows, hd],
/// rows <= kDecodeRowsMax, 1 <= visible[t] <= m. Whole heads are the tasks of
/// the pool (several to a task when they are small), each head's scores kept
/// in a slice of one buffer (64 KiB for 4 rows of 4096 float keys, which stays
/// in L2 between the two products), instead of four loops over all heads. Every step is
/// the call or the loop that the ops make (gemm(), the multiply, vmath's max,
/// exp_shifted_sum and scale), in the same order, so the result is the same to the bit.
/// Defined for float and double.
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

}  // namespace glassllm::fast
