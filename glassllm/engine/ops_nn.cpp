// ops_nn.cpp: the neural-network ops a language model needs around its
// matmuls: softmax and log_softmax, the cross-entropy loss, the embedding
// lookup, and the two selection ops where and masked_fill.
//
// Every kernel is a plain loop over contiguous memory; cross_entropy takes its
// rows' log-sum-exp and softmax from the fast layer's row kernels
// (fast/kernels.h), which run on SIMD lanes.
// softmax, log_softmax and cross_entropy have fused backwards (one loop, no
// temporaries): each could be composed from exp, sum and div, but the
// composed graph would keep several [B, H, T, m] intermediates alive for
// backward, and the fused formulas are short enough to read. The
// attention-specific ops (repeat_kv, rmsnorm, rope) are in ops_attention.cpp.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "glassllm/engine/node.h"
#include "glassllm/fast/kernels.h"

namespace glassllm {

namespace {

// Calls f(first, stride) for every row along the split axis: the row's
// elements are at first, first + stride, ..., first + (n-1) * stride.
template <class F>
void for_each_row(const AxisSplit& s, F f) {
  for (std::size_t a = 0; a < s.outer; ++a)
    for (std::size_t c = 0; c < s.inner; ++c) f(a * s.n * s.inner + c, s.inner);
}

// Walks out_shape in row-major order and calls f(o, offsets), where offsets[k]
// is the element of input k that broadcasts to output element o. An odometer
// over the axes keeps the offsets up to date without any division.
template <std::size_t K, class F>
void broadcast_walk(const Shape& out_shape, const std::array<Shape, K>& in_shapes, F f) {
  std::size_t n = shape_numel(out_shape), nd = out_shape.size();
  if (n == 0) return;
  std::array<std::vector<std::size_t>, K> strides;
  for (std::size_t k = 0; k < K; ++k)
    strides[k] = broadcast_strides(in_shapes[k], out_shape);
  std::vector<std::size_t> index(nd, 0);
  std::array<std::size_t, K> offsets{};
  for (std::size_t o = 0; o < n; ++o) {
    f(o, offsets);
    for (std::size_t ax = nd; ax-- > 0;) {
      for (std::size_t k = 0; k < K; ++k) offsets[k] += strides[k][ax];
      if (++index[ax] < out_shape[ax]) break;
      for (std::size_t k = 0; k < K; ++k) offsets[k] -= strides[k][ax] * out_shape[ax];
      index[ax] = 0;
    }
  }
}

// Where a condition or mask holds: 1 where the element is nonzero (NaN counts
// as nonzero, as bool(nan) in NumPy), read as bytes so that the kernels that
// use it need no second dtype dispatch.
std::vector<unsigned char> nonzero_bytes(const Tensor& t) {
  std::vector<unsigned char> truth(t.size());
  dispatch(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* p = ptr<T>(t);
    for (std::size_t i = 0; i < truth.size(); ++i) truth[i] = p[i] != T(0);
  });
  return truth;
}

// finish_op records an op when any input requires grad. where and
// masked_fill also take a condition that never gets a gradient (as in
// PyTorch, where it is a bool tensor): when only the condition requires
// grad, the result is cut from the graph again, a constant.
Tensor record_only_if(bool differentiable_input_requires_grad, Tensor out) {
  if (!differentiable_input_requires_grad) {
    Node& node = *out.node();
    node.requires_grad = false;
    node.parents.clear();
    node.backward = nullptr;
  }
  return out;
}

// The largest element of a row; -inf for a row of -inf.
template <class T>
T row_max(const T* in, std::size_t first, std::size_t stride, std::size_t n) {
  T best = -std::numeric_limits<T>::infinity();
  for (std::size_t k = 0; k < n; ++k) best = std::max(best, in[first + k * stride]);
  return best;
}

}  // namespace

// ---- softmax -------------------------------------------------------------------

// y = exp(x - max) / sum(exp(x - max)) along `axis`. Subtracting the row's max
// changes nothing mathematically (it cancels in the ratio) and only keeps exp
// from overflowing. A -inf entry (a masked score) gives exp(-inf) = 0 exactly.
// A row that is -inf everywhere has no softmax; it comes out NaN, as in NumPy.
Tensor softmax(const Tensor& x, int axis) {
  check_defined("softmax", x);
  std::size_t ax = normalize_axis("softmax", axis, x.shape());
  AxisSplit s = split_at(x.shape(), ax);
  Tensor out = empty(x.shape(), x.dtype());
  dispatch(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* in = ptr<T>(x);
    T* y = ptr<T>(out);
    for_each_row(s, [&](std::size_t first, std::size_t stride) {
      T m = row_max(in, first, stride, s.n);
      T total = 0;
      for (std::size_t k = 0; k < s.n; ++k) {
        std::size_t j = first + k * stride;
        y[j] = std::exp(in[j] - m);
        total += y[j];
      }
      for (std::size_t k = 0; k < s.n; ++k) y[first + k * stride] /= total;
    });
  });
  // dx_j = sum_i dout_i dy_i/dx_j = sum_i dout_i y_i (delta_ij - y_j)
  //      = y_j (dout_j - sum_i dout_i y_i).
  // Fused: one loop per row, reusing the saved output y and nothing else.
  return finish_op(out, "softmax", {x}, [&] {
    return [y = out.detach(), s](const Tensor& dout) {
      Tensor dx = empty(y.shape(), y.dtype());
      dispatch(y.dtype(), [&](auto zero) {
        using T = decltype(zero);
        const T* yv = ptr<T>(y);
        const T* g = ptr<T>(dout);
        T* d = ptr<T>(dx);
        for_each_row(s, [&](std::size_t first, std::size_t stride) {
          T dot = 0;  // sum(dout * y) over the row
          for (std::size_t k = 0; k < s.n; ++k)
            dot += g[first + k * stride] * yv[first + k * stride];
          for (std::size_t k = 0; k < s.n; ++k) {
            std::size_t j = first + k * stride;
            d[j] = yv[j] * (g[j] - dot);
          }
        });
      });
      return std::vector<Tensor>{dx};
    };
  });
}

// log softmax(x) = (x - max) - log(sum(exp(x - max))): computed this way, never
// as log(softmax(x)), which would give -inf where a probability underflows.
// The parentheses matter: x - (max + log_sum) would round max + log_sum to
// max when |max| is large (1e16 in float64, 1e8 in float32: every output 0).
Tensor log_softmax(const Tensor& x, int axis) {
  check_defined("log_softmax", x);
  std::size_t ax = normalize_axis("log_softmax", axis, x.shape());
  AxisSplit s = split_at(x.shape(), ax);
  Tensor out = empty(x.shape(), x.dtype());
  dispatch(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* in = ptr<T>(x);
    T* y = ptr<T>(out);
    for_each_row(s, [&](std::size_t first, std::size_t stride) {
      T m = row_max(in, first, stride, s.n);
      T total = 0;
      for (std::size_t k = 0; k < s.n; ++k) total += std::exp(in[first + k * stride] - m);
      T log_total = std::log(total);  // log(sum(exp(x - max)))
      for (std::size_t k = 0; k < s.n; ++k)
        y[first + k * stride] = (in[first + k * stride] - m) - log_total;
    });
  });
  // y_i = x_i - log_z, d log_z / dx_j = softmax_j, so
  // dx_j = dout_j - softmax_j * sum_i dout_i, with softmax_j = exp(y_j).
  // Fused: softmax is recomputed from the saved output, not stored.
  return finish_op(out, "log_softmax", {x}, [&] {
    return [y = out.detach(), s](const Tensor& dout) {
      Tensor dx = empty(y.shape(), y.dtype());
      dispatch(y.dtype(), [&](auto zero) {
        using T = decltype(zero);
        const T* yv = ptr<T>(y);
        const T* g = ptr<T>(dout);
        T* d = ptr<T>(dx);
        for_each_row(s, [&](std::size_t first, std::size_t stride) {
          T total = 0;  // sum(dout) over the row
          for (std::size_t k = 0; k < s.n; ++k) total += g[first + k * stride];
          for (std::size_t k = 0; k < s.n; ++k) {
            std::size_t j = first + k * stride;
            d[j] = g[j] - std::exp(yv[j]) * total;
          }
        });
      });
      return std::vector<Tensor>{dx};
    };
  });
}

// ---- cross-entropy loss ------------------------------------------------------------

// loss = mean over counted rows r of  -log softmax(logits[r])[target[r]]
//      = mean over counted rows of    log_z[r] - logits[r, target[r]].
// logits [..., C] are read as [rows, C]; targets hold one class per row.
// long-function: one op in one place: its checks, forward and backward
// side by side (docs/design.md), which splitting would pull apart.
Tensor cross_entropy(const Tensor& logits, const std::vector<std::int64_t>& targets,
                     std::int64_t ignore_index) {
  check_defined("cross_entropy", logits);
  if (logits.ndim() == 0 || logits.shape().back() == 0)
    throw std::invalid_argument("cross_entropy: logits of shape " +
                                shape_str(logits.shape()) +
                                " have no class axis; expected [..., C] with C > 0");
  std::size_t C = logits.shape().back();
  std::size_t rows = logits.size() / C;
  if (targets.size() != rows)
    throw std::invalid_argument("cross_entropy: " + std::to_string(targets.size()) +
                                " targets for logits of shape " +
                                shape_str(logits.shape()) + ", which have " +
                                std::to_string(rows) + " rows; pass one target per row");
  std::size_t count = 0;  // rows that are not ignored
  for (std::size_t r = 0; r < rows; ++r) {
    std::int64_t t = targets[r];
    if (t == ignore_index) continue;
    if (t < 0 || t >= std::int64_t(C))
      throw std::invalid_argument(
          "cross_entropy: target " + std::to_string(t) + " at position " +
          std::to_string(r) + " is out of range for " + std::to_string(C) + " classes");
    ++count;
  }
  Tensor out = empty({}, logits.dtype());
  dispatch(logits.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* z = ptr<T>(logits);
    T total = 0;
    for (std::size_t r = 0; r < rows; ++r) {
      if (targets[r] == ignore_index) continue;
      const T* row = z + r * C;
      // -log softmax(row)[target] = log sum exp(row - max) - (row[target] - max);
      // not (max + log sum) - row[target], which rounds log sum away for large
      // logits.
      const fast::LogSumExp<T> lse = fast::log_sum_exp(row, C);
      total += lse.log_sum - (row[targets[r]] - lse.largest);
    }
    // Every row ignored: nothing to average; 0 keeps a training loop going.
    ptr<T>(out)[0] = count > 0 ? total / T(count) : T(0);
  });
  // dlogits[r, c] = dout * (softmax(logits[r])[c] - [c == target[r]]) / count
  // on counted rows, 0 on ignored rows. Fused: softmax is recomputed from the
  // logits rather than saved, since a [B, T, vocab] probability array is the
  // largest activation of the model, and the logits are kept alive anyway.
  return finish_op(out, "cross_entropy", {logits}, [&] {
    return [logits, targets, ignore_index, C, rows, count](const Tensor& dout) {
      Tensor dlogits = zeros(logits.shape(), logits.dtype());
      if (count == 0) return std::vector<Tensor>{dlogits};
      dispatch(logits.dtype(), [&](auto zero) {
        using T = decltype(zero);
        const T* z = ptr<T>(logits);
        T* d = ptr<T>(dlogits);
        T scale = ptr<T>(dout)[0] / T(count);
        fast::parallel_rows(rows, C, [&](std::size_t first, std::size_t last) {
          for (std::size_t r = first; r < last; ++r) {
            if (targets[r] == ignore_index) continue;
            T* drow = d + r * C;
            fast::softmax_row(z + r * C, drow, C, scale);  // softmax(row) * scale
            drow[targets[r]] -= scale;
          }
        });
      });
      return std::vector<Tensor>{dlogits};
    };
  });
}

// ---- embedding ---------------------------------------------------------------------

// out[p, :] = weight[ids[p], :]: a row lookup, result ids_shape + [D].
Tensor embedding(const Tensor& weight, const std::vector<std::int64_t>& ids,
                 const Shape& ids_shape) {
  check_defined("embedding", weight);
  if (weight.ndim() != 2)
    throw std::invalid_argument("embedding: weight must be 2-D [V, D], got shape " +
                                shape_str(weight.shape()));
  if (ids.size() != shape_numel(ids_shape))
    throw std::invalid_argument("embedding: " + std::to_string(ids.size()) +
                                " ids do not fill ids_shape " + shape_str(ids_shape) +
                                " (" + std::to_string(shape_numel(ids_shape)) +
                                " elements)");
  std::size_t V = weight.shape()[0], D = weight.shape()[1];
  for (std::size_t p = 0; p < ids.size(); ++p)
    if (ids[p] < 0 || ids[p] >= std::int64_t(V))
      throw std::invalid_argument("embedding: id " + std::to_string(ids[p]) +
                                  " at position " + std::to_string(p) +
                                  " is out of range for " + std::to_string(V) + " rows");
  Shape out_shape = ids_shape;
  out_shape.push_back(D);  // ids_shape + [D]
  Tensor out = empty(std::move(out_shape), weight.dtype());
  dispatch(weight.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* w = ptr<T>(weight);
    T* o = ptr<T>(out);
    for (std::size_t p = 0; p < ids.size(); ++p)
      std::copy_n(w + std::size_t(ids[p]) * D, D, o + p * D);
  });
  // dweight[v, :] = sum of dout[p, :] over the positions p with ids[p] == v:
  // a scatter-add, so a token that occurs twice gets both gradients. Rows of
  // tokens that never occur stay 0. A loop: there is no Tensor op for it.
  return finish_op(out, "embedding", {weight}, [&] {
    return [ids, w_shape = weight.shape(), D](const Tensor& dout) {
      Tensor dweight = zeros(w_shape, dout.dtype());
      dispatch(dout.dtype(), [&](auto zero) {
        using T = decltype(zero);
        const T* g = ptr<T>(dout);
        T* d = ptr<T>(dweight);
        for (std::size_t p = 0; p < ids.size(); ++p) {
          T* row = d + std::size_t(ids[p]) * D;
          for (std::size_t c = 0; c < D; ++c) row[c] += g[p * D + c];
        }
      });
      return std::vector<Tensor>{dweight};
    };
  });
}

// ---- where and masked_fill ---------------------------------------------------------

// np.where(condition, a, b): a where condition is nonzero, else b; all three
// shapes broadcast together (NumPy's rule, applied to three shapes at once).
// long-function: one op in one place: its checks, forward and backward
// side by side (docs/design.md), which splitting would pull apart.
Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b) {
  check_defined("where", condition);
  check_same_dtype("where", a, b);
  const Shape& cs = condition.shape();
  const Shape& as = a.shape();
  const Shape& bs = b.shape();
  std::size_t nd = std::max({cs.size(), as.size(), bs.size()});
  Shape out_shape(nd, 1);
  for (std::size_t i = 0; i < nd; ++i)
    for (const Shape* s : {&cs, &as, &bs}) {
      if (i < nd - s->size()) continue;  // a missing leading axis has length 1
      std::size_t len = (*s)[i - (nd - s->size())];
      if (len == 1) continue;
      if (out_shape[i] != 1 && out_shape[i] != len)
        throw std::invalid_argument(
            "where: shapes " + shape_str(cs) + ", " + shape_str(as) + " and " +
            shape_str(bs) + " cannot be broadcast together: lengths " +
            std::to_string(out_shape[i]) + " and " + std::to_string(len) +
            " meet at output dim " + std::to_string(i));
      out_shape[i] = len;
    }
  std::vector<unsigned char> truth = nonzero_bytes(condition);
  Tensor out = empty(out_shape, a.dtype());
  dispatch(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* av = ptr<T>(a);
    const T* bv = ptr<T>(b);
    T* o = ptr<T>(out);
    broadcast_walk<3>(out_shape, {cs, as, bs}, [&](std::size_t i, const auto& off) {
      o[i] = truth[off[0]] ? av[off[1]] : bv[off[2]];
    });
  });
  // d out / d a = 1 where the condition holds, else 0; d out / d b the
  // opposite. Each is then summed back to its input's shape (sum_to_shape).
  // The split is a fused loop that selects (rather than multiplies by a 0/1
  // mask) so that an inf or NaN in dout never leaks into the other branch.
  // The condition gets no gradient.
  Tensor result = finish_op(out, "where", {condition, a, b}, [&] {
    return [condition, a_shape = as, b_shape = bs, out_shape,
            need_a = a.node()->requires_grad,
            need_b = b.node()->requires_grad](const Tensor& dout) {
      std::vector<unsigned char> truth = nonzero_bytes(condition);
      Tensor da_full = empty(out_shape, dout.dtype());
      Tensor db_full = empty(out_shape, dout.dtype());
      dispatch(dout.dtype(), [&](auto zero) {
        using T = decltype(zero);
        const T* g = ptr<T>(dout);
        T* da = ptr<T>(da_full);
        T* db = ptr<T>(db_full);
        broadcast_walk<1>(out_shape, {condition.shape()},
                          [&](std::size_t i, const auto& off) {
                            bool t = truth[off[0]];
                            da[i] = t ? g[i] : T(0);
                            db[i] = t ? T(0) : g[i];
                          });
      });
      return std::vector<Tensor>{Tensor(),
                                 need_a ? sum_to_shape(da_full, a_shape) : Tensor(),
                                 need_b ? sum_to_shape(db_full, b_shape) : Tensor()};
    };
  });
  return record_only_if(a.requires_grad() || b.requires_grad(), result);
}

// x with `value` written wherever mask is nonzero. The mask broadcasts to x
// (e.g. a causal mask [T, T] over scores [B, H, T, T]) and may have either
// dtype; the output has x's shape and dtype.
Tensor masked_fill(const Tensor& x, const Tensor& mask, double value) {
  check_defined("masked_fill", x);
  check_defined("masked_fill", mask);
  bool fits = mask.ndim() <= x.ndim();
  for (std::size_t i = 0; fits && i < mask.ndim(); ++i) {
    std::size_t m = mask.shape()[i], n = x.shape()[x.ndim() - mask.ndim() + i];
    fits = m == n || m == 1;
  }
  if (!fits)
    throw std::invalid_argument("masked_fill: mask of shape " + shape_str(mask.shape()) +
                                " does not broadcast to x's shape " +
                                shape_str(x.shape()));
  std::vector<unsigned char> filled = nonzero_bytes(mask);
  Tensor out = empty(x.shape(), x.dtype());
  dispatch(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* in = ptr<T>(x);
    T* o = ptr<T>(out);
    T v = T(value);
    broadcast_walk<1>(x.shape(), {mask.shape()}, [&](std::size_t i, const auto& off) {
      o[i] = filled[off[0]] ? v : in[i];
    });
  });
  // dx = dout where the mask is zero, 0 where a constant was written (the
  // output there does not depend on x). A select loop, as in where.
  Tensor result = finish_op(out, "masked_fill", {x, mask}, [&] {
    return [mask](const Tensor& dout) {
      std::vector<unsigned char> filled = nonzero_bytes(mask);
      Tensor dx = empty(dout.shape(), dout.dtype());
      dispatch(dout.dtype(), [&](auto zero) {
        using T = decltype(zero);
        const T* g = ptr<T>(dout);
        T* d = ptr<T>(dx);
        broadcast_walk<1>(
            dout.shape(), {mask.shape()},
            [&](std::size_t i, const auto& off) { d[i] = filled[off[0]] ? T(0) : g[i]; });
      });
      return std::vector<Tensor>{dx, Tensor()};
    };
  });
  return record_only_if(x.requires_grad(), result);
}

}  // namespace glassllm
