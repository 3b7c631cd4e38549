// ops_attention.cpp: the pieces of a Llama attention block that are not
// matmuls: repeat_kv (sharing K/V heads between query heads), rmsnorm (the
// normalisation before each sub-block), rope (rotary position embedding) and
// causal_softmax (softmax with the causal mask applied on the fly), and
// grouped_attention, attention's core on the path that shares K/V heads
// without copying them. docs/design.md fixes their math; this file follows
// it line by line.
//
// The first four have fused backwards written as loops: each is a simple
// linear map of dout (a sum over copies, a projection, a rotation), and a
// loop says so more plainly than a chain of Tensor ops would.
// grouped_attention is made of ops, and autograd differentiates them. Read
// ops_nn.cpp for softmax, which the attention block uses next.
#include <algorithm>
#include <cmath>

#include "glassllm/engine/node.h"
#include "glassllm/fast/kernels.h"

namespace glassllm {

// ---- repeat_kv ---------------------------------------------------------------------

// [B, Hkv, T, D] -> [B, Hkv*n_rep, T, D]: output head h*n_rep + r is a copy
// of input head h, for r < n_rep (np.repeat(x, n_rep, axis=1): heads
// [0,0,1,1] for n_rep = 2). One head is a contiguous [T, D] block, so the
// copy is one block copy per output head.
Tensor repeat_kv(const Tensor& x, std::size_t n_rep) {
  check_defined("repeat_kv", x);
  if (x.ndim() != 4)
    throw std::invalid_argument("repeat_kv: expected x of shape [B, Hkv, T, D], got " +
                                shape_str(x.shape()));
  if (n_rep == 0)
    throw std::invalid_argument(
        "repeat_kv: n_rep must be at least 1, got 0 for x of shape " +
        shape_str(x.shape()));
  std::size_t B = x.shape()[0], Hkv = x.shape()[1];
  std::size_t block = x.shape()[2] * x.shape()[3];  // one head: T * D elements
  Tensor out = empty({B, Hkv * n_rep, x.shape()[2], x.shape()[3]}, x.dtype());
  dispatch(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* in = ptr<T>(x);
    T* o = ptr<T>(out);
    // Output head (b*Hkv + h)*n_rep + r copies input head b*Hkv + h, which
    // is its number divided by n_rep. On one thread: copied on two, a large
    // cache's heads slowed down the steps that followed (docs/bench-notes.md).
    for (std::size_t head = 0; head < B * Hkv * n_rep; ++head)
      std::copy_n(in + head / n_rep * block, block, o + head * block);
  });
  // Each input head feeds n_rep output heads, so its gradient is the sum of
  // theirs: dx[b, h] = sum over r of dout[b, h*n_rep + r].
  return finish_op(out, "repeat_kv", {x}, [&] {
    return [x_shape = x.shape(), n_rep, B, Hkv, block](const Tensor& dout) {
      Tensor dx = empty(x_shape, dout.dtype());
      dispatch(dout.dtype(), [&](auto zero) {
        using T = decltype(zero);
        const T* g = ptr<T>(dout);
        T* d = ptr<T>(dx);
        // Input heads first .. last-1: the first copy's gradient, plus the others'.
        auto sum_copies = [&](std::size_t first, std::size_t last) {
          for (std::size_t bh = first; bh < last; ++bh) {
            T* dst = d + bh * block;
            std::copy_n(g + bh * n_rep * block, block, dst);
            for (std::size_t r = 1; r < n_rep; ++r) {
              const T* src = g + (bh * n_rep + r) * block;
              for (std::size_t i = 0; i < block; ++i) dst[i] += src[i];
            }
          }
        };
        fast::parallel_rows(B * Hkv, block * n_rep, sum_copies);
      });
      return std::vector<Tensor>{dx};
    };
  });
}

// ---- rmsnorm -----------------------------------------------------------------------

// y = x * r along the last axis (length D), r = 1 / sqrt(mean(x^2) + eps):
// each row scaled to unit root-mean-square. No weight: the model multiplies
// by its *_layernorm.weight afterwards. The per-row r is saved for backward.
Tensor rmsnorm(const Tensor& x, double eps) {
  check_defined("rmsnorm", x);
  if (x.ndim() == 0)
    throw std::invalid_argument("rmsnorm: x of shape () has no last axis to normalise");
  if (x.shape().back() == 0)
    throw std::invalid_argument("rmsnorm: x of shape " + shape_str(x.shape()) +
                                " has a last axis of length 0; the root mean square of "
                                "no elements is undefined");
  if (!(eps >= 0))
    throw std::invalid_argument("rmsnorm: eps must be >= 0, got " + std::to_string(eps));
  std::size_t D = x.shape().back(), rows = x.size() / D;
  Shape r_shape(x.shape().begin(), x.shape().end() - 1);  // [...]
  Tensor out = empty(x.shape(), x.dtype());
  Tensor r = empty(std::move(r_shape), x.dtype());
  dispatch(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* in = ptr<T>(x);
    T* y = ptr<T>(out);
    T* rr = ptr<T>(r);
    fast::parallel_rows(rows, D, [&](std::size_t first, std::size_t last) {
      for (std::size_t row = first; row < last; ++row) {
        const T* xr = in + row * D;
        const T squares = fast::dot(xr, xr, D);
        const T r_row = T(1) / std::sqrt(squares / T(D) + T(eps));
        rr[row] = r_row;
        for (std::size_t j = 0; j < D; ++j) y[row * D + j] = xr[j] * r_row;
      }
    });
  });
  // Derivation, for one row: y_j = x_j r with r = (mean(x^2) + eps)^(-1/2), so
  //   dr/dx_k  = -1/2 (mean(x^2) + eps)^(-3/2) * 2 x_k / D = -r^3 x_k / D
  //   dy_j/dx_k = r [j == k] - x_j r^3 x_k / D
  //   dx_k = sum_j dout_j dy_j/dx_k = r dout_k - r (x_k r) sum_j dout_j (x_j r) / D
  //        = r (dout_k - y_k mean(dout * y)).
  // Fused: one pass per row using the saved output y and r.
  return finish_op(out, "rmsnorm", {x}, [&] {
    return [y = out.detach(), r, D, rows](const Tensor& dout) {
      Tensor dx = empty(y.shape(), y.dtype());
      dispatch(y.dtype(), [&](auto zero) {
        using T = decltype(zero);
        const T* yv = ptr<T>(y);
        const T* rr = ptr<T>(r);
        const T* g = ptr<T>(dout);
        T* d = ptr<T>(dx);
        fast::parallel_rows(rows, D, [&](std::size_t first, std::size_t last) {
          for (std::size_t row = first; row < last; ++row) {
            std::size_t o = row * D;
            T mean_gy = fast::dot(g + o, yv + o, D) / T(D);  // mean(dout * y)
            const T r_row = rr[row];
            for (std::size_t j = 0; j < D; ++j)
              d[o + j] = r_row * (g[o + j] - yv[o + j] * mean_gy);
          }
        });
      });
      return std::vector<Tensor>{dx};
    };
  });
}

// ---- rope --------------------------------------------------------------------------

namespace {

// cos(a[p, i]) and sin(a[p, i]) for positions p = start .. start+T-1 and
// i < hd/2, row-major [T, hd/2]: a[p, i] = p * inv_freq[i], where plain RoPE
// has inv_freq[i] = theta^(-2i/hd). Computed in double so that large
// positions do not lose the angle's low digits, then cast by the kernel to
// the tensor's dtype. (docs/design.md's cos and sin of length hd are these halves
// written twice; the kernel reads each half once.)
struct RopeTables {
  std::size_t T = 0, start = 0;
  std::vector<double> inv_freq;
  std::vector<double> cos, sin;
};

std::vector<double> plain_inv_freq(std::size_t hd, double theta) {
  std::vector<double> inv_freq(hd / 2);
  for (std::size_t i = 0; i < hd / 2; ++i)
    inv_freq[i] = std::pow(theta, -2.0 * double(i) / double(hd));
  return inv_freq;
}

// The tables are remembered for the last (T, start, inv_freq) asked for on
// this thread: a model rotates q and k of every layer at the same positions,
// so one forward pass computes them once instead of 2 * n_layers times. The
// reference is valid until the next call on the same thread.
const RopeTables& rope_tables(std::size_t T, std::size_t start,
                              const std::vector<double>& inv_freq) {
  thread_local RopeTables tab;
  if (tab.T == T && tab.start == start && tab.inv_freq == inv_freq && !tab.cos.empty())
    return tab;
  std::size_t half = inv_freq.size();
  tab.T = T, tab.start = start, tab.inv_freq = inv_freq;
  tab.cos.assign(T * half, 0.0);
  tab.sin.assign(T * half, 0.0);
  for (std::size_t i = 0; i < half; ++i) {
    for (std::size_t t = 0; t < T; ++t) {
      double angle = double(start + t) * inv_freq[i];
      tab.cos[t * half + i] = std::cos(angle);
      tab.sin[t * half + i] = std::sin(angle);
    }
  }
  return tab;
}

// For every [T, hd] slice of a [..., T, hd] buffer and every pair (i, i+hd/2):
//   out[i]        = x1 * c - x2 * s * sign
//   out[i + hd/2] = x2 * c + x1 * s * sign
// with x1 = in[i], x2 = in[i + hd/2]. sign = +1 is the rotation by a (the
// forward), sign = -1 the rotation by -a (its inverse, the backward).
// Rows of hd values are independent: row r is position t = r % T_len.
template <class T>
void rotate_pairs(const T* in, T* out, std::size_t n, std::size_t T_len, std::size_t hd,
                  const RopeTables& tab, T sign) {
  if (n == 0) return;  // no rows (and hd or T_len may be 0: nothing to divide by)
  std::size_t half = hd / 2;
  auto rotate_rows = [&](std::size_t first, std::size_t last) {
    for (std::size_t row = first; row < last; ++row) {
      const std::size_t t = row % T_len;
      const T* xr = in + row * hd;
      T* yr = out + row * hd;
      for (std::size_t i = 0; i < half; ++i) {
        T c = T(tab.cos[t * half + i]);
        T s = sign * T(tab.sin[t * half + i]);
        T x1 = xr[i], x2 = xr[i + half];
        yr[i] = x1 * c - x2 * s;
        yr[i + half] = x2 * c + x1 * s;
      }
    }
  };
  fast::parallel_rows(n / hd, hd, rotate_rows);
}

}  // namespace

// rope(x) = x * cos + rotate_half(x) * sin, rotate_half(x) = concat(-x2, x1),
// x1 = x[..., :hd/2], x2 = x[..., hd/2:]. Written out per pair (i, i+hd/2):
//   out[i]        = x1 cos a - x2 sin a
//   out[i + hd/2] = x2 cos a + x1 sin a
// which is the 2-D rotation of the point (x1, x2) by the angle a[p, i].
Tensor rope(const Tensor& x, std::size_t start, double theta) {
  if (!(theta > 0))
    throw std::invalid_argument("rope: theta must be positive, got " +
                                std::to_string(theta));
  return rope(x, start, plain_inv_freq(x.defined() ? x.shape().back() : 0, theta));
}

Tensor rope(const Tensor& x, std::size_t start, const std::vector<double>& inv_freq) {
  check_defined("rope", x);
  if (x.ndim() < 2)
    throw std::invalid_argument("rope: expected x of shape [..., T, hd], got " +
                                shape_str(x.shape()));
  std::size_t T_len = x.shape()[x.ndim() - 2], hd = x.shape().back();
  if (hd % 2 != 0)
    throw std::invalid_argument("rope: head dim hd=" + std::to_string(hd) + " of x " +
                                shape_str(x.shape()) +
                                " must be even (rotate-half pairs i with i + hd/2)");
  if (inv_freq.size() != hd / 2)
    throw std::invalid_argument("rope: " + std::to_string(inv_freq.size()) +
                                " inverse frequencies for head dim " +
                                std::to_string(hd) +
                                "; expected hd/2 = " + std::to_string(hd / 2));
  const RopeTables& tab = rope_tables(T_len, start, inv_freq);
  Tensor out = empty(x.shape(), x.dtype());
  dispatch(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    rotate_pairs<T>(ptr<T>(x), ptr<T>(out), x.size(), T_len, hd, tab, T(1));
  });
  // rope is linear and, per pair, a rotation R(a); its Jacobian is R(a), so
  // dx = R(a)^T dout = R(-a) dout: rotate dout back. In docs/design.md's terms,
  //   dx = dout * cos + rotate_half^T(dout * sin),
  //   rotate_half^T(y) = concat(y[hd/2:], -y[:hd/2]),
  // i.e. dx[i] = g1 cos + g2 sin, dx[i + hd/2] = g2 cos - g1 sin: the same
  // kernel with sin negated. The tables are recomputed (T * hd/2 values)
  // rather than saved, unless they are still remembered.
  return finish_op(out, "rope", {x}, [&] {
    return [T_len, hd, start, inv_freq](const Tensor& dout) {
      const RopeTables& tab = rope_tables(T_len, start, inv_freq);
      Tensor dx = empty(dout.shape(), dout.dtype());
      dispatch(dout.dtype(), [&](auto zero) {
        using T = decltype(zero);
        rotate_pairs<T>(ptr<T>(dout), ptr<T>(dx), dout.size(), T_len, hd, tab, T(-1));
      });
      return std::vector<Tensor>{dx};
    };
  });
}

// ---- causal_softmax ----------------------------------------------------------------

namespace {

// The keys each of T queries at positions query_start .. query_start+T-1
// sees, among m keys whose first is at position key_start: a query at
// position i sees key position p iff p <= i (causal) and, with window > 0,
// p > i - window (a sliding window of the last `window` positions). The
// visible keys are one run of columns, first .. end-1:
//   end   = min(m, i - key_start + 1)                  (key_start <= query_start)
//   first = max(0, i - window + 1 - key_start), or 0 without a window.
struct KeyRange {
  std::size_t first = 0, end = 0;
};

std::vector<KeyRange> visible_keys(std::size_t T, std::size_t query_start,
                                   std::size_t key_start, std::size_t m,
                                   std::size_t window) {
  std::vector<KeyRange> visible(T);
  for (std::size_t t = 0; t < T; ++t) {
    const std::size_t i = query_start + t;  // the query's position
    visible[t].end = std::min(m, i - key_start + 1);
    if (window > 0 && i + 1 > key_start + window)
      visible[t].first = std::min(visible[t].end, i + 1 - window - key_start);
  }
  return visible;
}

}  // namespace

// probs = softmax(masked_fill(x, hidden, -inf)) along the last axis, in one
// pass and without a mask tensor. x is [..., R, m]: row r is the query at
// position query_start + r % T, column j the key at position key_start + j.
// Its visible keys are one run of columns (visible_keys: a prefix, or with a
// sliding window the last `window` positions), so the kernel is softmax over
// that run with zeros either side: exactly what the -inf entries would give,
// since exp(-inf - max) = 0.
// long-function: one op in one place: its checks, forward and backward
// side by side (docs/design.md), which splitting would pull apart.
Tensor causal_softmax(const Tensor& x, std::size_t query_start, std::size_t key_start,
                      std::size_t queries, std::size_t window) {
  check_defined("causal_softmax", x);
  if (x.ndim() < 2)
    throw std::invalid_argument(
        "causal_softmax: expected scores of shape [..., R, m], got " +
        shape_str(x.shape()));
  const std::size_t R = x.shape()[x.ndim() - 2], m = x.shape().back();
  const std::size_t T = queries == 0 ? R : queries;
  if (R % T != 0)
    throw std::invalid_argument("causal_softmax: " + std::to_string(R) +
                                " rows of scores " + shape_str(x.shape()) +
                                " are not a whole number of groups of " +
                                std::to_string(T) + " queries");
  if (key_start > query_start && R > 0 && m > 0)
    throw std::invalid_argument(
        "causal_softmax: the first query (position " + std::to_string(query_start) +
        ") sees no key: keys start at position " + std::to_string(key_start));
  // Visible keys per row of one group of T queries (the same for every group).
  const std::vector<KeyRange> visible =
      visible_keys(T, query_start, key_start, m, window);
  const std::size_t rows = m == 0 ? 0 : x.size() / m;
  Tensor out = empty(x.shape(), x.dtype());
  dispatch(x.dtype(), [&](auto zero) {
    using T_ = decltype(zero);
    const T_* in = ptr<T_>(x);
    T_* y = ptr<T_>(out);
    fast::parallel_rows(rows, m, [&](std::size_t first, std::size_t last) {
      for (std::size_t row = first; row < last; ++row) {
        const KeyRange k = visible[row % T];
        const std::size_t o = row * m, n = k.end - k.first;
        fast::softmax_row(in + o + k.first, y + o + k.first, n);
        // A visible NaN or +inf, or every visible key -inf, makes the visible
        // entries NaN; then the whole row is NaN, as softmax(masked_fill(...))
        // gives. Otherwise the hidden keys are 0.
        const T_ hidden =
            n > 0 && y[o + k.first] != y[o + k.first] ? y[o + k.first] : T_(0);
        std::fill(y + o, y + o + k.first, hidden);
        std::fill(y + o + k.end, y + o + m, hidden);
      }
    });
  });
  // softmax's backward, dx_j = y_j (dout_j - sum_i dout_i y_i), on the
  // visible run; hidden entries have y_j = 0 and so get dx_j = 0: no
  // gradient reaches a masked score. Saves the output, as softmax does.
  return finish_op(out, "causal_softmax", {x}, [&] {
    return [y = out.detach(), visible, T, m, rows](const Tensor& dout) {
      Tensor dx = empty(y.shape(), y.dtype());
      dispatch(y.dtype(), [&](auto zero) {
        using T_ = decltype(zero);
        const T_* yv = ptr<T_>(y);
        const T_* g = ptr<T_>(dout);
        T_* d = ptr<T_>(dx);
        fast::parallel_rows(rows, m, [&](std::size_t first, std::size_t last) {
          for (std::size_t row = first; row < last; ++row) {
            const KeyRange k = visible[row % T];
            const std::size_t o = row * m;
            const T_ dot = fast::dot(g + o + k.first, yv + o + k.first, k.end - k.first);
            for (std::size_t j = k.first; j < k.end; ++j)
              d[o + j] = yv[o + j] * (g[o + j] - dot);
            // hidden keys get no gradient
            std::fill(d + o, d + o + k.first, T_(0));
            std::fill(d + o + k.end, d + o + m, T_(0));
          }
        });
      });
      return std::vector<Tensor>{dx};
    };
  });
}

// ---- grouped_attention -------------------------------------------------------------

namespace {

// Speed only. Whether grouped_attention may run as
// fast::grouped_decode_attention (fast/kernels.h), which gives the same bits
// as the ops: a few query rows per K/V head (a decode step), and nothing
// that must see the ops (a caller asking for the parts, an op graph) or
// differentiate them. Anything else, bad input included, takes the ops.
bool fused_decode_applies(const Tensor& q, const Tensor& keys, const Tensor& values,
                          std::size_t query_start, std::size_t key_start,
                          const AttentionParts* parts, std::size_t window) {
  const std::size_t B = q.dim(0), H = q.dim(1), T = q.dim(2), hd = q.dim(3);
  const std::size_t Hkv = keys.dim(1), m = keys.dim(2), rows = H / Hkv * T;
  if (rows == 0 || rows > fast::kDecodeRowsMax || m == 0 || hd == 0 ||
      key_start > query_start || q.dtype() != keys.dtype() ||
      keys.dtype() != values.dtype())
    return false;
  // The fused kernel attends over a prefix of the keys; a sliding window's
  // run that starts later takes the ops.
  if (window > 0 || parts || op_observed()) return false;
  if (should_record({&q, &keys, &values})) return false;
  return fast::grouped_decode_pays(B * Hkv, rows, m, hd);
}

// The four ops' result through fast::grouped_decode_attention: q
// [B, H, T, hd] over keys, values [B, Hkv, m, hd] -> [B, H, T, hd].
Tensor fused_decode(const Tensor& q, const Tensor& keys, const Tensor& values,
                    std::size_t query_start, std::size_t key_start, double scale) {
  const std::size_t B = q.dim(0), H = q.dim(1), T = q.dim(2), hd = q.dim(3);
  const std::size_t Hkv = keys.dim(1), m = keys.dim(2);
  std::vector<std::size_t> visible;  // a prefix per query (no window here)
  for (const KeyRange& k : visible_keys(T, query_start, key_start, m, 0))
    visible.push_back(k.end);
  Tensor out = empty(q.shape(), q.dtype());
  dispatch(q.dtype(), [&](auto zero) {
    using V = decltype(zero);
    fast::grouped_decode_attention<V>(B * Hkv, H / Hkv * T, T, m, hd, V(scale), ptr<V>(q),
                                      ptr<V>(keys), ptr<V>(values), visible.data(),
                                      ptr<V>(out));
  });
  out.node()->op = "grouped_decode_attention";
  return out;
}

}  // namespace

// docs/design.md's attention on the grouped path, which copies no K/V head:
//   scores = q k^T / sqrt(hd), probs = causal softmax of the scores,
//   out = probs v,
// with the G query heads that share K/V head i stacked as the rows of one
// product. A decode step that nothing watches runs the same four steps
// fused per K/V head, with the same bits (MLX's "fast op with a fallback
// built from ops": here the ops are the definition and the fused kernel the
// shortcut).
Tensor grouped_attention(const Tensor& q, const Tensor& keys, const Tensor& values,
                         std::size_t query_start, std::size_t key_start,
                         AttentionParts* parts, std::size_t window) {
  check_defined("grouped_attention", q);
  check_defined("grouped_attention", keys);
  check_defined("grouped_attention", values);
  if (q.ndim() != 4 || keys.ndim() != 4 || keys.shape() != values.shape() ||
      q.dim(0) != keys.dim(0) || q.dim(3) != keys.dim(3) || keys.dim(1) == 0 ||
      q.dim(1) % keys.dim(1) != 0)
    throw std::invalid_argument(
        "grouped_attention: expected q [B, H, T, hd] and keys, values [B, Hkv, m, hd] "
        "with Hkv dividing H, got " +
        shape_str(q.shape()) + ", " + shape_str(keys.shape()) + ", " +
        shape_str(values.shape()));
  const std::int64_t B = std::int64_t(q.dim(0)), H = std::int64_t(q.dim(1));
  const std::int64_t T = std::int64_t(q.dim(2)), hd = std::int64_t(q.dim(3));
  const std::int64_t Hkv = std::int64_t(keys.dim(1)), G = H / Hkv;
  const double scale = 1.0 / std::sqrt(double(hd));
  if (fused_decode_applies(q, keys, values, query_start, key_start, parts, window))
    return fused_decode(q, keys, values, query_start, key_start, scale);
  // The G query heads of one group are neighbours in q, so
  // [B, H, T, hd] -> [B, Hkv, G*T, hd] is a view: row g*T + t of group i is
  // query t of head i*G + g.
  Tensor q_grouped = reshape(q, {B, Hkv, G * T, hd});
  // [B, Hkv, G*T, hd] @ [B, Hkv, m, hd]^T -> [B, Hkv, G*T, m] (a view of
  // [B, H, T, m]: the same numbers as the repeat_kv path's scores)
  Tensor scores = matmul_t(q_grouped, keys) * scale;
  // Row g*T + t is query t: the mask repeats every T rows.
  Tensor probs = causal_softmax(scores, query_start, key_start, std::size_t(T), window);
  // [B, Hkv, G*T, m] @ [B, Hkv, m, hd] -> [B, Hkv, G*T, hd] -> [B, H, T, hd]
  Tensor out = reshape(matmul(probs, values), {B, H, T, hd});
  if (parts) *parts = AttentionParts{scores, probs};
  return out;
}

}  // namespace glassllm
