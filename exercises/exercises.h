// exercises.h: the functions the exercises ask you to write, one block per
// exercise, with the shapes and the math. Write them in exercises/student/
// (your copy of exercises/stubs/, made by exercises/reset.sh); the grader,
// exercises/grade.cpp, runs the real gradient checker and, for exercises 9
// and 10, the real model on them. docs/exercises/ has one page per exercise.
//
// How your code reaches the engine, without editing it:
//   - exercises 1-8 are ops made with custom_op (custom_op.h): a forward,
//     which may call the engine's own op, and a backward that you write
//     from the formula, with other ops (never by recording the op itself:
//     custom_op runs the forward with grad mode off, so your backward is the
//     only one there is);
//   - exercise 9 is a KVCache::append_fn and exercise 10 a
//     GlassLM::custom_attention (model.h), which the model calls at run time.
//
// A part left undone throws NotImplemented("Exercise N: not implemented").
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

#include "exercises/messages.h"
#include "glassllm/glassllm.h"

namespace glassllm::exercises {

/// What an unfinished exercise throws; the grader prints its message (in the
/// grader's language, messages.h).
struct NotImplemented : std::logic_error {
  explicit NotImplemented(int exercise)
      : std::logic_error(tr("run.not_implemented", {{"n", std::to_string(exercise)}})) {}
};

// ---- Exercise 1: elementwise backward (ex01_elementwise.cpp) -----------------
// Each returns the same shape as its input(s). a and b of my_mul have equal
// shapes (broadcasting is exercise 2).
//   mul:  d(a*b)/da = b, d(a*b)/db = a
//   exp:  d e^x / dx = e^x (the forward's output: reuse it)
//   silu: silu(x) = x * s, s = sigmoid(x); d/dx = s * (1 + x * (1 - s))
Tensor my_mul(const Tensor& a, const Tensor& b);
Tensor my_exp(const Tensor& x);
Tensor my_silu(const Tensor& x);

// ---- Exercise 2: broadcasting backward (ex02_broadcasting.cpp) ---------------
/// Sums g back to `shape`, which broadcasts to g.shape(): sum the leading
/// axes g has and `shape` lacks, then, keeping them, the axes where `shape`
/// has length 1. g (4,2,3) -> shape (2,1) sums axes 0 and 2.
Tensor my_sum_to_shape(const Tensor& g, const Shape& shape);
/// a * b with NumPy broadcasting; each input's gradient has that input's shape:
///   da = my_sum_to_shape(dout * b, a.shape()), db likewise.
Tensor my_mul_broadcast(const Tensor& a, const Tensor& b);

// ---- Exercise 3: reductions (ex03_reductions.cpp) ----------------------------
/// mean along one axis. x [..., n, ...] -> the axis removed (or kept as 1).
///   dx = dout / n, copied along the reduced axis.
Tensor my_mean(const Tensor& x, int axis, bool keepdims = false);
/// max along one axis. The gradient goes to the entries equal to the max,
/// split equally between ties; every other entry gets 0.
Tensor my_max(const Tensor& x, int axis, bool keepdims = false);

// ---- Exercise 4: softmax (ex04_softmax.cpp) ------------------------------------
/// y = softmax(x) along `axis`, any shape.
///   dx = y * (dout - sum(dout * y, axis, keepdims))
Tensor my_softmax(const Tensor& x, int axis = -1);

// ---- Exercise 5: batched matmul (ex05_matmul.cpp) ------------------------------
/// a [..., n, k] @ b [..., k, m] -> [..., n, m]; both at least 2-D, batch
/// axes broadcast (np.matmul).
///   da = dout @ b^T (summed to a's shape), db = a^T @ dout (summed to b's)
Tensor my_matmul(const Tensor& a, const Tensor& b);

// ---- Exercise 6: repeat_kv backward (ex06_repeat_kv.cpp) -----------------------
/// x [B, Hkv, T, D] -> [B, Hkv*n_rep, T, D], heads in the order [0,0,1,1]
/// for n_rep = 2. Output head h is a copy of K/V head h / n_rep, so
///   dx[:, i] = sum over r < n_rep of dout[:, i*n_rep + r]   (the summed copies)
Tensor my_repeat_kv(const Tensor& x, std::size_t n_rep);

// ---- Exercise 7: RMSNorm (ex07_rmsnorm.cpp) ------------------------------------
/// y = x * r, r = 1 / sqrt(mean(x^2, last axis) + eps), x [..., D].
///   dx = r * (dout - y * mean(dout * y, last axis))
Tensor my_rmsnorm(const Tensor& x, double eps = 1e-5);

// ---- Exercise 8: RoPE (ex08_rope.cpp) ------------------------------------------
/// x [..., T, hd] (hd even) at positions start .. start+T-1:
///   y = x * cos + rotate_half(x) * sin, rotate_half(x) = concat(-x2, x1)
/// with x1 = x[..., :hd/2], x2 = x[..., hd/2:], cos/sin as in ops.h's rope.
/// y is linear in x:  dx = dout * cos + rotate_half^T(dout * sin),
///   rotate_half^T(g) = concat(g2, -g1).
Tensor my_rope(const Tensor& x, std::size_t start, double theta = 10000.0);

// ---- Exercise 9: the K/V cache append (ex09_kv_cache.cpp) ----------------------
/// A KVCache::append_fn (model.h): held [B, Hkv, m, hd] (undefined while the
/// cache is empty) and fresh [B, Hkv, T, hd] -> [B, Hkv, m+T, hd], positions
/// 0..m-1 from held and m..m+T-1 from fresh, detached from the graph, held
/// left unchanged.
Tensor my_cache_append(const Tensor& held, const Tensor& fresh);

// ---- Exercise 10: grouped attention (ex10_grouped_attention.cpp) ---------------
/// A GlassLM::custom_attention (model.h, AttentionFn): q [B, H, T, hd], keys
/// and values [B, Hkv, m, hd] -> out [B, H, T, hd], without copying K or V:
/// fold q to [B, Hkv, G*T, hd] (row g*T + t is query t of head i*G + g),
/// scores = q k^T / sqrt(hd), causal mask (query at query_start + t sees key
/// j iff key_start + j <= query_start + t), softmax, @ values, unfold.
Tensor my_grouped_attention(const Tensor& q, const Tensor& keys, const Tensor& values,
                            std::size_t query_start, std::size_t key_start);

}  // namespace glassllm::exercises
