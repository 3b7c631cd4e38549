// ops_shape.cpp: ops that change the shape or the order of elements.
//
// reshape, squeeze and unsqueeze return views: a new node over the same
// storage, no element moved (a contiguous array keeps its row-major order
// under any reshape). Their backward reshapes the gradient back.
// permute, transpose, concat and slice write a new contiguous array with
// plain loops (xtensor's strided views evaluate element by element,
// many times slower at our shapes). concat and slice are block copies: seen as
// [outer, axis, inner], each outer index owns one contiguous run per input.
// Read ops_matmul.cpp next.
#include <algorithm>
#include <cstring>

#include "glassllm/engine/node.h"
#include "glassllm/fast/kernels.h"

namespace glassllm {

namespace {
std::vector<std::int64_t> as_dims(const Shape& s) {
  return {s.begin(), s.end()};
}

// "(0,2,1)": a list of axes spelled like a NumPy tuple.
std::string axes_str(const std::vector<int>& axes) {
  std::string s = "(";
  for (std::size_t i = 0; i < axes.size(); ++i)
    s += (i ? "," : "") + std::to_string(axes[i]);
  return s + (axes.size() == 1 ? ",)" : ")");
}

// The checked, non-negative form of a permutation of x's axes.
std::vector<std::size_t> permutation(const char* op, const Tensor& x,
                                     const std::vector<int>& axes) {
  std::size_t nd = x.ndim();
  auto fail = [&] {
    throw std::invalid_argument(std::string(op) + ": axes " + axes_str(axes) +
                                " are not a permutation of " + std::to_string(nd) +
                                " axes for shape " + shape_str(x.shape()));
  };
  if (axes.size() != nd) fail();
  std::vector<std::size_t> perm(nd);
  std::vector<bool> seen(nd, false);
  for (std::size_t i = 0; i < nd; ++i) {
    perm[i] = normalize_axis(op, axes[i], x.shape());
    if (seen[perm[i]]) fail();
    seen[perm[i]] = true;
  }
  return perm;
}

// out[i0, i1, ...] = x[..] with output axis d reading input axis perm[d]:
// out.shape[d] = x.shape[perm[d]]. An odometer walks the output in order
// (so writes are contiguous) and keeps the matching input offset.
Tensor permute_copy(const Tensor& x, const std::vector<std::size_t>& perm) {
  std::size_t nd = x.ndim();
  Shape out_shape(nd);
  std::vector<std::size_t> in_strides = contiguous_strides(x.shape()), step(nd);
  for (std::size_t d = 0; d < nd; ++d) {
    out_shape[d] = x.shape()[perm[d]];
    step[d] = in_strides[perm[d]];  // input stride along output axis d
  }
  // When only axes of length 1 move, the elements keep their row-major order
  // (e.g. [B, 1, H, hd] -> [B, H, 1, hd] in a one-token decode step): nothing
  // has to move, so the result is a view, as NumPy's would be.
  std::vector<std::size_t> moved;
  for (std::size_t d = 0; d < nd; ++d)
    if (out_shape[d] != 1) moved.push_back(perm[d]);
  if (std::is_sorted(moved.begin(), moved.end())) return view_as_shape(x, out_shape);

  Tensor out = empty(out_shape, x.dtype());
  std::size_t n = out.size();
  if (n == 0) return out;
  if (nd == 0) {  // a 0-d tensor: one element, nothing to reorder
    dispatch(x.dtype(),
             [&](auto zero) { ptr<decltype(zero)>(out)[0] = ptr<decltype(zero)>(x)[0]; });
    return out;
  }
  dispatch(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* in = ptr<T>(x);
    T* o = ptr<T>(out);
    std::size_t inner = out_shape[nd - 1], inner_step = step[nd - 1];
    // Output rows first .. last-1 (each `inner` long), spread over the cores.
    auto rows = [&](std::size_t first, std::size_t last) {
      // Row `first`'s index along each outer axis, and where it reads from.
      std::vector<std::size_t> index(nd, 0);
      std::size_t src = 0;
      for (std::size_t ax = nd - 1, r = first; ax-- > 0;) {
        index[ax] = r % out_shape[ax];
        r /= out_shape[ax];
        src += index[ax] * step[ax];
      }
      for (std::size_t dst = first * inner; dst < last * inner; dst += inner) {
        for (std::size_t j = 0; j < inner; ++j) o[dst + j] = in[src + j * inner_step];
        for (std::size_t ax = nd - 1; ax-- > 0;) {  // advance axes nd-2 .. 0
          src += step[ax];
          if (++index[ax] < out_shape[ax]) break;
          src -= step[ax] * out_shape[ax];
          index[ax] = 0;
        }
      }
    };
    fast::parallel_rows(n / inner, inner, rows);
  });
  return out;
}

// Python's slice bounds: negative values count from the end, then both are
// clamped to [0, n], and an empty range has stop == start.
std::pair<std::size_t, std::size_t> clamp_range(std::int64_t start, std::int64_t stop,
                                                std::size_t n) {
  auto clamp = [n](std::int64_t v) {
    if (v < 0) v += std::int64_t(n);
    return std::size_t(std::clamp<std::int64_t>(v, 0, std::int64_t(n)));
  };
  std::size_t b = clamp(start), e = clamp(stop);
  return {b, std::max(b, e)};
}

// Copies rows [begin, begin + len) of axis `axis` of `big` to or from `small`
// (small.shape[axis] == len, every other axis equal). to_small: slice's
// forward; otherwise: writes `small` into that region of `big` (slice's
// backward and, in reverse, one input of concat).
void copy_region(const Tensor& big, const Tensor& small, std::size_t axis,
                 std::size_t begin, bool to_small) {
  AxisSplit s = split_at(big.shape(), axis);
  std::size_t len = small.shape()[axis];
  dispatch(big.dtype(), [&](auto zero) {
    using T = decltype(zero);
    T* b = ptr<T>(big);
    T* m = ptr<T>(small);
    std::size_t run = len * s.inner;  // one contiguous block per outer index
    if (run == 0) return;
    for (std::size_t o = 0; o < s.outer; ++o) {
      T* big_run = b + (o * s.n + begin) * s.inner;
      T* small_run = m + o * run;
      if (to_small)
        std::memcpy(small_run, big_run, run * sizeof(T));
      else
        std::memcpy(big_run, small_run, run * sizeof(T));
    }
  });
}

// A view with another shape, recorded as `op`; backward reshapes back.
Tensor reshaped_view(const char* op, const Tensor& x, const Shape& shape) {
  Tensor out = view_as_shape(x, shape);
  return finish_op(out, op, {x}, [&] {
    return [in_shape = x.shape()](const Tensor& dout) {
      return std::vector<Tensor>{reshape(dout, as_dims(in_shape))};
    };
  });
}
}  // namespace

Tensor reshape(const Tensor& x, const std::vector<std::int64_t>& shape) {
  check_defined("reshape", x);
  Shape out(shape.size());
  std::size_t known = 1;
  int infer = -1;
  auto fail = [&](const std::string& why) {
    std::string requested = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) {
      if (i > 0) requested += ",";
      requested += std::to_string(shape[i]);
    }
    requested += shape.size() == 1 ? ",)" : ")";
    throw std::invalid_argument("reshape: cannot reshape " + shape_str(x.shape()) + " (" +
                                std::to_string(x.size()) + " elements) into " +
                                requested + why);
  };
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0) fail(": only one axis may be -1");
      infer = int(i);
    } else if (shape[i] < 0) {
      fail(": negative length " + std::to_string(shape[i]));
    } else {
      out[i] = std::size_t(shape[i]);
      known *= out[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || x.size() % known != 0) fail(": the -1 axis cannot be inferred");
    out[std::size_t(infer)] = x.size() / known;
  } else if (known != x.size()) {
    fail(" (" + std::to_string(known) + " elements)");
  }
  return reshaped_view("reshape", x, out);
}

Tensor squeeze(const Tensor& x, int axis) {
  check_defined("squeeze", x);
  std::size_t a = normalize_axis("squeeze", axis, x.shape());
  if (x.shape()[a] != 1)
    throw std::invalid_argument("squeeze: axis " + std::to_string(axis) + " of shape " +
                                shape_str(x.shape()) + " has length " +
                                std::to_string(x.shape()[a]) + ", not 1");
  Shape s = x.shape();
  s.erase(s.begin() + std::ptrdiff_t(a));
  return reshaped_view("squeeze", x, s);
}

Tensor unsqueeze(const Tensor& x, int axis) {
  check_defined("unsqueeze", x);
  std::size_t a = normalize_insert_axis("unsqueeze", axis, x.shape());
  Shape s = x.shape();
  s.insert(s.begin() + std::ptrdiff_t(a), 1);
  return reshaped_view("unsqueeze", x, s);
}

// The gradient moves every element back where it came from: output axis d
// is input axis perm[d], so dx = permute(dout, inv) with inv[perm[d]] = d.
Tensor permute(const Tensor& x, const std::vector<int>& axes) {
  check_defined("permute", x);
  std::vector<std::size_t> perm = permutation("permute", x, axes);
  Tensor out = permute_copy(x, perm);
  return finish_op(out, "permute", {x}, [&] {
    std::vector<int> inv(perm.size());
    for (std::size_t d = 0; d < perm.size(); ++d) inv[perm[d]] = int(d);
    return [inv](const Tensor& dout) { return std::vector<Tensor>{permute(dout, inv)}; };
  });
}

// Swapping two axes is a permutation that undoes itself: dx = swap(dout).
Tensor transpose(const Tensor& x, int axis0, int axis1) {
  check_defined("transpose", x);
  std::size_t a0 = normalize_axis("transpose", axis0, x.shape());
  std::size_t a1 = normalize_axis("transpose", axis1, x.shape());
  std::vector<std::size_t> perm(x.ndim());
  for (std::size_t d = 0; d < perm.size(); ++d) perm[d] = d;
  std::swap(perm[a0], perm[a1]);
  Tensor out = permute_copy(x, perm);
  return finish_op(out, "transpose", {x}, [&] {
    return [a0, a1](const Tensor& dout) {
      return std::vector<Tensor>{transpose(dout, int(a0), int(a1))};
    };
  });
}

// out = [x0 | x1 | ...] along `axis`. Each input's gradient is its own
// stretch of dout: dx_i = dout[..., off_i : off_i + n_i, ...].
Tensor concat(const std::vector<Tensor>& xs, int axis) {
  if (xs.empty())
    throw std::invalid_argument("concat: needs at least one tensor, got none");
  for (const Tensor& x : xs) check_same_dtype("concat", xs[0], x);
  const Shape& first = xs[0].shape();
  std::size_t a = normalize_axis("concat", axis, first);
  Shape out_shape = first;
  out_shape[a] = 0;
  for (const Tensor& x : xs) {
    bool same = x.ndim() == first.size();
    for (std::size_t d = 0; same && d < first.size(); ++d)
      same = d == a || x.shape()[d] == first[d];
    if (!same)
      throw std::invalid_argument("concat: shapes " + shape_str(first) + " and " +
                                  shape_str(x.shape()) + " differ outside axis " +
                                  std::to_string(axis));
    out_shape[a] += x.shape()[a];
  }
  Tensor out = empty(out_shape, xs[0].dtype());
  std::size_t offset = 0;
  for (const Tensor& x : xs) {
    copy_region(out, x, a, offset, /*to_small=*/false);
    offset += x.shape()[a];
  }
  return finish_op(out, "concat", xs, [&] {
    std::vector<std::size_t> lengths;
    for (const Tensor& x : xs) lengths.push_back(x.shape()[a]);
    return [lengths, a](const Tensor& dout) {
      std::vector<Tensor> dxs;
      std::int64_t begin = 0;
      for (std::size_t n : lengths) {
        dxs.push_back(slice(dout, int(a), begin, begin + std::int64_t(n)));
        begin += std::int64_t(n);
      }
      return dxs;
    };
  });
}

// out = x[..., b:e, ...]. The sliced-away elements do not reach the output,
// so their gradient is 0; the others receive dout in place:
// dx = zeros(x.shape); dx[..., b:e, ...] = dout.
Tensor slice(const Tensor& x, int axis, std::int64_t start, std::int64_t stop) {
  check_defined("slice", x);
  std::size_t a = normalize_axis("slice", axis, x.shape());
  // Plain variables, not a structured binding: clang 14 cannot capture one in
  // the backward lambda below.
  auto [begin, end] = clamp_range(start, stop, x.shape()[a]);
  std::size_t b = begin, e = end;
  Shape out_shape = x.shape();
  out_shape[a] = e - b;
  Tensor out = empty(std::move(out_shape), x.dtype());
  copy_region(x, out, a, b, /*to_small=*/true);
  return finish_op(out, "slice", {x}, [&] {
    return [in_shape = x.shape(), a, b = b](const Tensor& dout) {
      Tensor dx = zeros(in_shape, dout.dtype());
      copy_region(dx, dout, a, b, /*to_small=*/false);  // scatter dout into its region
      return std::vector<Tensor>{dx};
    };
  });
}

}  // namespace glassllm
