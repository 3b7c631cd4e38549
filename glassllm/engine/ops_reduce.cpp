// ops_reduce.cpp: sum, mean and max over axes.
//
// Every reduction here is phrased on a [outer, n, inner] view of the input:
// reducing one axis of length n of a contiguous array means combining
// elements that are `inner` apart. Reducing several axes reduces them one at a
// time (the sum is the same in any order).
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "glassllm/engine/node.h"

namespace glassllm {

namespace {

// Sums one axis, keeping it with length 1.
Tensor sum_one_axis(const Tensor& x, std::size_t axis) {
  AxisSplit s = split_at(x.shape(), axis);
  Shape out_shape = x.shape();
  out_shape[axis] = 1;
  Tensor out = zeros(out_shape, x.dtype());
  dispatch(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* in = ptr<T>(x);
    T* o = ptr<T>(out);
    for (std::size_t a = 0; a < s.outer; ++a)
      for (std::size_t k = 0; k < s.n; ++k) {
        const T* row = in + (a * s.n + k) * s.inner;
        T* dst = o + a * s.inner;
        for (std::size_t c = 0; c < s.inner; ++c) dst[c] += row[c];
      }
  });
  return out;
}

// The sorted, distinct, non-negative axes to reduce ({} means all).
std::vector<std::size_t> reduction_axes(const char* op, const Tensor& x,
                                        const std::vector<int>& axes) {
  std::vector<std::size_t> result;
  if (axes.empty()) {
    result.resize(x.ndim());
    std::iota(result.begin(), result.end(), 0);
    return result;
  }
  for (int axis : axes) {
    std::size_t a = normalize_axis(op, axis, x.shape());
    if (std::find(result.begin(), result.end(), a) != result.end())
      throw std::invalid_argument(std::string(op) + ": axis " + std::to_string(axis) +
                                  " is repeated for shape " + shape_str(x.shape()));
    result.push_back(a);
  }
  std::sort(result.begin(), result.end());
  return result;
}

Shape reduced_shape(const Shape& shape, const std::vector<std::size_t>& axes,
                    bool keepdims) {
  Shape out;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    bool reduced = std::find(axes.begin(), axes.end(), i) != axes.end();
    if (!reduced)
      out.push_back(shape[i]);
    else if (keepdims)
      out.push_back(1);
  }
  return out;
}

// Undoes the dropping of reduced axes: the keepdims shape of a reduction.
Shape keepdims_shape(const Shape& shape, const std::vector<std::size_t>& axes) {
  return reduced_shape(shape, axes, true);
}

std::vector<std::int64_t> as_dims(const Shape& s) {
  return {s.begin(), s.end()};
}

// Broadcasting a reduced gradient back over the input: g (keepdims shape) * 1.
Tensor expand_to(const Tensor& g, const Shape& shape) {
  return mul(g, ones(shape, g.dtype()));
}

}  // namespace

// d(sum x)/dx_i = 1: the gradient is dout broadcast back over the summed axes.
Tensor sum(const Tensor& x, const std::vector<int>& axes, bool keepdims) {
  check_defined("sum", x);
  std::vector<std::size_t> ax = reduction_axes("sum", x, axes);
  Tensor acc = x;
  {
    no_grad inner;  // the reduction steps are one op, recorded once below
    if (ax.empty()) acc = mul(x, ones({}, x.dtype()));  // a copy, never a view
    for (std::size_t a : ax) acc = sum_one_axis(acc, a);
  }
  Tensor out = view_as_shape(acc, reduced_shape(x.shape(), ax, keepdims));
  return finish_op(out, "sum", {x}, [&] {
    return [in_shape = x.shape(),
            kshape = keepdims_shape(x.shape(), ax)](const Tensor& dout) {
      return std::vector<Tensor>{expand_to(reshape(dout, as_dims(kshape)), in_shape)};
    };
  });
}

// mean = sum / count, so d(mean)/dx_i = 1 / count.
Tensor mean(const Tensor& x, const std::vector<int>& axes, bool keepdims) {
  check_defined("mean", x);
  std::vector<std::size_t> ax = reduction_axes("mean", x, axes);
  std::size_t count = 1;
  for (std::size_t a : ax) count *= x.shape()[a];
  Tensor out;
  {
    no_grad inner;
    out = mul(sum(x, axes, keepdims), scalar(1.0 / double(count), x.dtype()));
  }
  return finish_op(out, "mean", {x}, [&] {
    return [in_shape = x.shape(), kshape = keepdims_shape(x.shape(), ax),
            count](const Tensor& dout) {
      Tensor g = reshape(dout, as_dims(kshape)) * (1.0 / double(count));
      return std::vector<Tensor>{expand_to(g, in_shape)};
    };
  });
}

// max along one axis. The gradient flows to the positions holding the maximum,
// split equally between ties (so the check sum of gradients == dout holds).
// A NaN anywhere in a row makes its maximum NaN (np.max, torch.amax) and, as
// torch.amax's backward does, its whole row of gradients NaN.
Tensor max(const Tensor& x, int axis, bool keepdims) {
  check_defined("max", x);
  std::size_t a = normalize_axis("max", axis, x.shape());
  if (x.shape()[a] == 0)
    throw std::invalid_argument("max: cannot reduce axis " + std::to_string(axis) +
                                " of length 0 in shape " + shape_str(x.shape()));
  AxisSplit s = split_at(x.shape(), a);
  Shape kshape = x.shape();
  kshape[a] = 1;
  Tensor kept = empty(kshape, x.dtype());
  dispatch(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* in = ptr<T>(x);
    T* o = ptr<T>(kept);
    for (std::size_t i = 0; i < s.outer; ++i)
      for (std::size_t c = 0; c < s.inner; ++c) {
        T best = in[i * s.n * s.inner + c];
        for (std::size_t k = 1; k < s.n; ++k) {
          T v = in[(i * s.n + k) * s.inner + c];
          if (v > best || v != v) best = v;  // a NaN wins, as in np.max
          if (best != best) break;
        }
        o[i * s.inner + c] = best;
      }
  });
  Shape out_shape = kshape;
  if (!keepdims) out_shape.erase(out_shape.begin() + static_cast<std::ptrdiff_t>(a));
  Tensor out = view_as_shape(kept, out_shape);
  return finish_op(out, "max", {x}, [&] {
    return [x, kept = kept.detach(), kshape, s](const Tensor& dout) {
      // Mask of the maxima, each divided by the number of ties in its row.
      Tensor share = zeros_like(x);
      dispatch(x.dtype(), [&](auto zero) {
        using T = decltype(zero);
        const T* in = ptr<T>(x);
        const T* m = ptr<T>(kept);
        T* w = ptr<T>(share);
        for (std::size_t i = 0; i < s.outer; ++i)
          for (std::size_t c = 0; c < s.inner; ++c) {
            T best = m[i * s.inner + c];
            if (best != best) {  // a NaN maximum: the whole row's gradient is NaN
              for (std::size_t k = 0; k < s.n; ++k) w[(i * s.n + k) * s.inner + c] = best;
              continue;
            }
            std::size_t ties = 0;
            for (std::size_t k = 0; k < s.n; ++k)
              ties += in[(i * s.n + k) * s.inner + c] == best;
            for (std::size_t k = 0; k < s.n; ++k) {
              std::size_t j = (i * s.n + k) * s.inner + c;
              w[j] = in[j] == best ? T(1) / T(ties) : T(0);
            }
          }
      });
      return std::vector<Tensor>{mul(reshape(dout, as_dims(kshape)), share)};
    };
  });
}

Tensor max(const Tensor& x) {
  check_defined("max", x);
  if (x.size() == 0)
    throw std::invalid_argument("max: cannot reduce an empty tensor of shape " +
                                shape_str(x.shape()));
  // Flatten (a view), then reduce the one axis.
  return max(reshape(x, {-1}), 0, false);
}

}  // namespace glassllm
