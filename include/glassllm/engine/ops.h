// ops.h: every differentiable op, as free functions on Tensors.
//
// Each op checks its inputs (errors name the op and the shapes, one line),
// computes its forward and, when grad mode is on and an input requires grad,
// records its backward. Forward and backward of one op sit together in one
// .cpp file under glassllm/ (the file is named in each section below).
//
// Shapes follow NumPy: outermost axis first, negative axes count from the end,
// binary ops broadcast. The output dtype is the inputs' dtype; mixing float32
// and float64 throws. A plain `double` operand (x * 0.5) takes the tensor's
// dtype, as NumPy treats Python scalars.
//
// Every op throws std::invalid_argument for bad input.
#pragma once

#include <cstdint>
#include <vector>

#include "glassllm/engine/tensor.h"

namespace glassllm {

// ---- elementwise, binary, broadcasting (glassllm/engine/ops_elementwise.cpp) --------
// Output shape: NumPy broadcasting of the two shapes; e.g. (4,1,3) with (2,3)
// gives (4,2,3). Incompatible shapes throw
//   "add: shapes (2,3) and (4,) cannot be broadcast: 3 (dim 1) != 4 (dim 0)".
// Backward: each input's gradient is summed back to its own shape (sum_to_shape).

Tensor add(const Tensor& a, const Tensor& b);  ///< a + b
Tensor sub(const Tensor& a, const Tensor& b);  ///< a - b
Tensor mul(const Tensor& a, const Tensor& b);  ///< a * b
Tensor div(const Tensor& a, const Tensor& b);  ///< a / b
Tensor pow(const Tensor& a,
           const Tensor& b);  ///< a ** b (a > 0 where b's gradient is needed)
Tensor pow(const Tensor& a, double exponent);  ///< a ** exponent

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, double b);
Tensor operator-(const Tensor& a, double b);
Tensor operator*(const Tensor& a, double b);
Tensor operator/(const Tensor& a, double b);
Tensor operator+(double a, const Tensor& b);
Tensor operator-(double a, const Tensor& b);
Tensor operator*(double a, const Tensor& b);
Tensor operator/(double a, const Tensor& b);
Tensor operator-(const Tensor& a);

/// The shape two shapes broadcast to; throws naming `op` if they cannot.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op = "broadcast");

/// Sums a gradient of a broadcast result back to an input's shape: the
/// backward of broadcasting. E.g. g (4,2,3) -> shape (2,1) sums axes 0 and 2.
/// Throws if `shape` does not broadcast to g.shape().
Tensor sum_to_shape(const Tensor& g, const Shape& shape);

// ---- elementwise, unary (glassllm/engine/ops_elementwise.cpp) ----------------------

/// The same values in another dtype (x.astype(dtype) in NumPy); float64 ->
/// float32 rounds. The gradient is converted back to x's dtype. A tensor that
/// already has `dtype` is returned as a view.
Tensor astype(const Tensor& x, DType dtype);

Tensor neg(const Tensor& x);      ///< -x
Tensor exp(const Tensor& x);      ///< e^x
Tensor log(const Tensor& x);      ///< natural log
Tensor sqrt(const Tensor& x);     ///< x^(1/2)
Tensor rsqrt(const Tensor& x);    ///< 1 / sqrt(x)
Tensor tanh(const Tensor& x);     ///< hyperbolic tangent
Tensor sigmoid(const Tensor& x);  ///< 1 / (1 + e^-x)
Tensor silu(const Tensor& x);     ///< x * sigmoid(x) (SwiGLU's gate)
Tensor relu(const Tensor& x);     ///< max(x, 0); gradient 0 at x == 0; relu(NaN) = NaN

// ---- reductions (glassllm/engine/ops_reduce.cpp) -----------------------------------
// `axes` empty means every axis. keepdims keeps reduced axes with length 1.
// Repeated or out-of-range axes throw: "sum: axis 3 is out of range for shape (2,3)".

Tensor sum(const Tensor& x, const std::vector<int>& axes = {}, bool keepdims = false);
Tensor mean(const Tensor& x, const std::vector<int>& axes = {}, bool keepdims = false);
/// Maximum value along one axis (np.max(x, axis)). The gradient goes to the
/// maximal entries, split equally between ties (as torch.amax). A NaN in a
/// row makes its maximum NaN and the row's gradient NaN (as torch.amax).
Tensor max(const Tensor& x, int axis, bool keepdims = false);
/// Maximum over all elements (a 0-d tensor).
Tensor max(const Tensor& x);

// ---- shape ops (glassllm/engine/ops_shape.cpp) -------------------------------------
// reshape, squeeze and unsqueeze return views that share the input's data (no
// element moves, as in NumPy for contiguous arrays); concat and slice write a
// new contiguous array, and so do permute and transpose unless they only move
// axes of length 1 (then no element moves and the result is a view).

/// New shape with the same number of elements; one entry may be -1 (inferred).
/// "reshape: cannot reshape (2,3) (6 elements) into (4,2) (8 elements)".
Tensor reshape(const Tensor& x, const std::vector<std::int64_t>& shape);
/// Reorders axes: permute(x, {0, 2, 1, 3}) is x.transpose(0, 2, 1, 3) in NumPy.
Tensor permute(const Tensor& x, const std::vector<int>& axes);
/// Swaps two axes (np.swapaxes).
Tensor transpose(const Tensor& x, int axis0, int axis1);
/// Removes an axis of length 1.
Tensor squeeze(const Tensor& x, int axis);
/// Inserts an axis of length 1 at `axis` (np.expand_dims); axis may be ndim.
Tensor unsqueeze(const Tensor& x, int axis);
/// Joins tensors along an existing axis; the other axes must match.
Tensor concat(const std::vector<Tensor>& xs, int axis);
/// x[..., start:stop, ...] along one axis, step 1. Negative start/stop count
/// from the end and out-of-range bounds are clamped, as in Python slicing.
Tensor slice(const Tensor& x, int axis, std::int64_t start, std::int64_t stop);

// ---- matmul (glassllm/engine/ops_matmul.cpp) ---------------------------------------

/// np.matmul: [..., n, k] @ [..., k, m] -> [..., n, m], batch axes broadcast.
/// A 1-D operand is promoted to a matrix and the added axis removed again.
/// "matmul: shapes (2,3) and (4,5) are not aligned: 3 (dim 1) != 4 (dim 0)".
Tensor matmul(const Tensor& a, const Tensor& b);
/// a @ b^T with b's last two axes swapped: a [..., n, k], b [..., m, k] ->
/// [..., n, m], batch axes broadcast as in matmul; equal to
/// matmul(a, transpose(b, -2, -1)) without the transposed copy. Attention's
/// scores, q @ k^T. Both operands need at least 2 axes.
/// "matmul_t: shapes (2,3) and (4,5) are not aligned: 3 (dim 1) != 5 (dim 1); ...".
Tensor matmul_t(const Tensor& a, const Tensor& b);
/// PyTorch's Linear without bias: x @ weight^T. x [..., in], weight [out, in]
/// -> [..., out]. One GEMM, no transposed copy of the weight.
Tensor linear(const Tensor& x, const Tensor& weight);

// ---- neural-network ops (glassllm/engine/ops_nn.cpp) -------------------------------

/// Softmax along `axis`: exp(x - max) / sum(exp(x - max)). Entries equal to
/// -inf get probability exactly 0.
Tensor softmax(const Tensor& x, int axis = -1);
/// log(softmax(x)), computed stably as (x - max) - log(sum(exp(x - max))).
Tensor log_softmax(const Tensor& x, int axis = -1);
/// Mean cross-entropy of logits [..., C] against integer targets, one per
/// row (targets.size() == logits.size() / C), skipping rows whose target is
/// `ignore_index`. A target outside [0, C) throws naming its position.
/// Returns a 0-d tensor (0 when every row is ignored).
Tensor cross_entropy(const Tensor& logits, const std::vector<std::int64_t>& targets,
                     std::int64_t ignore_index = -100);
/// Rows of weight [V, D] picked by integer ids: result ids_shape + [D].
/// Backward scatter-adds into weight's rows; a repeated id accumulates.
Tensor embedding(const Tensor& weight, const std::vector<std::int64_t>& ids,
                 const Shape& ids_shape);
/// np.where(condition, a, b): condition is any tensor, true where nonzero;
/// the three shapes broadcast. No gradient flows to the condition, and the
/// result requires grad only if a or b does.
Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b);
/// x where mask is zero, `value` where mask is nonzero (mask broadcasts to x).
/// The mask gets no gradient; the result requires grad only if x does.
Tensor masked_fill(const Tensor& x, const Tensor& mask, double value);

// ---- attention pieces (glassllm/engine/ops_attention.cpp) ---------------------------

/// x [B, Hkv, T, D] -> [B, Hkv*n_rep, T, D], each head repeated n_rep times in
/// place: heads [0,0,1,1] for n_rep = 2 (np.repeat(x, n_rep, axis=1)). The
/// copy is materialised. Backward sums the gradients of the n_rep copies.
Tensor repeat_kv(const Tensor& x, std::size_t n_rep);
/// x / sqrt(mean(x^2, last axis) + eps), without a weight (multiply by one).
Tensor rmsnorm(const Tensor& x, double eps = 1e-5);
/// Rotary position embedding, rotate-half convention, on x [..., T, hd] (hd
/// even) at positions start, ..., start+T-1:
///   inv_freq[i] = theta^(-2i/hd), angle[p, i] = p * inv_freq[i],
///   rope(x) = x * cos + rotate_half(x) * sin,
///   rotate_half(x) = concat(-x[hd/2:], x[:hd/2]).
Tensor rope(const Tensor& x, std::size_t start, double theta = 10000.0);
/// The same rotation with the hd/2 inverse frequencies given: angle[p, i] =
/// p * inv_freq[i]. Scaled RoPE variants (Llama 3's "llama3", "linear") only
/// change these frequencies; the model computes them (model.h, rope_inv_freq).
Tensor rope(const Tensor& x, std::size_t start, const std::vector<double>& inv_freq);

/// Softmax along the last axis under a causal mask, for attention scores
/// x [..., R, m] of R query rows against m keys. Row r is the query at
/// position query_start + r % queries (queries = 0 means R; the grouped
/// attention path stacks G heads of T queries as rows g*T + t and passes T);
/// key j is at position key_start + j. A query sees a key iff the key's
/// position <= the query's; hidden keys get probability exactly 0. Equal, up
/// to rounding (~1 ulp), to softmax(masked_fill(x, hidden, -inf)), without
/// building the mask; a row whose visible scores hold a NaN, or are all -inf,
/// is NaN in every entry, as that softmax's would be.
/// With window > 0 (a sliding-window layer, e.g. EXAONE 4.0's local ones) the
/// query at position i sees only the keys i - window < j <= i: the last
/// `window` positions, itself included; window = 0 is the full causal mask.
/// Throws if the first query sees no key (key_start > query_start) or R is not
/// a multiple of queries.
///   probs = causal_softmax(scores, start);  // scores [B, H, T, m], keys from position 0
Tensor causal_softmax(const Tensor& x, std::size_t query_start, std::size_t key_start = 0,
                      std::size_t queries = 0, std::size_t window = 0);

/// What grouped_attention computed on its way, for a caller that shows it
/// (the tracer): scores (scaled) and probs, [B, Hkv, G*T, m] each, a view
/// of [B, H, T, m] (row g*T + t of group i is query t of head i*G + g).
struct AttentionParts {
  Tensor scores, probs;
};

/// Grouped-query attention without copying K/V heads (docs/design.md, "Two
/// ways to share K/V heads"): q [B, H, T, hd] at positions query_start ..
/// query_start+T-1, keys and values [B, Hkv, m, hd] with key j at position
/// key_start + j, Hkv dividing H, G = H / Hkv. Query head h meets K/V head
/// h / G:
///   out = causal_softmax(q k^T / sqrt(hd)) v                   [B, H, T, hd]
/// Made of the ops reshape, matmul_t, mul, causal_softmax and matmul, so
/// autograd differentiates it. A decode step (at most 8 query rows per K/V
/// head) that nothing watches -- no `parts` asked for, no OpObserver, no
/// input that needs a gradient -- runs as one fused kernel per K/V head
/// instead, with the same bits; its result's op() is then
/// "grouped_decode_attention". window > 0 limits each query to its last
/// `window` keys (causal_softmax's window); such a step always takes the ops.
Tensor grouped_attention(const Tensor& q, const Tensor& keys, const Tensor& values,
                         std::size_t query_start, std::size_t key_start,
                         AttentionParts* parts = nullptr, std::size_t window = 0);

}  // namespace glassllm
