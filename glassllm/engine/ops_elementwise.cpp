// ops_elementwise.cpp: elementwise ops, binary (broadcasting) and unary.
//
// The forward kernels are plain loops over contiguous memory: xtensor's
// broadcasting evaluates element by element through generic steppers, which
// is several times slower at our shapes. Every binary op shares one broadcasting loop
// (binary_kernel) and one backward helper (sum_to_shape), so each op below is
// just its formula and its derivative. Large loops are spread over the cores
// in ranges (fast::parallel_elements, parallel_rows); each element is still
// computed alone.
#include <cmath>

#include "glassllm/engine/node.h"
#include "glassllm/fast/kernels.h"

namespace glassllm {

// ---- broadcasting -------------------------------------------------------------

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  // NumPy: align shapes on the right; two lengths are compatible when equal
  // or when one of them is 1.
  std::size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    std::size_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) {
      std::size_t ia = i - (n - a.size()), ib = i - (n - b.size());
      throw std::invalid_argument(
          std::string(op) + ": shapes " + shape_str(a) + " and " + shape_str(b) +
          " cannot be broadcast: " + std::to_string(da) + " (dim " + std::to_string(ia) +
          ") != " + std::to_string(db) + " (dim " + std::to_string(ib) + ")");
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

namespace {

// out[i] = f(a[ia], b[ib]) over the broadcast shape. The innermost axis is a
// tight loop; an odometer walks the outer axes.
template <class T, class F>
void broadcast_loop(const T* a, const Shape& a_shape, const T* b, const Shape& b_shape,
                    T* out, const Shape& out_shape, F f) {
  std::size_t n = shape_numel(out_shape);
  if (n == 0) return;
  // Elements first .. last-1 of the output, for three common cases.
  auto same_shape = [&](std::size_t first, std::size_t last) {
    for (std::size_t i = first; i < last; ++i) out[i] = f(a[i], b[i]);
  };
  auto scalar_b = [&](std::size_t first, std::size_t last) {
    for (std::size_t i = first; i < last; ++i) out[i] = f(a[i], b[0]);
  };
  auto scalar_a = [&](std::size_t first, std::size_t last) {
    for (std::size_t i = first; i < last; ++i) out[i] = f(a[0], b[i]);
  };
  if (a_shape == b_shape) return fast::parallel_elements(n, same_shape);
  if (shape_numel(b_shape) == 1) return fast::parallel_elements(n, scalar_b);
  if (shape_numel(a_shape) == 1) return fast::parallel_elements(n, scalar_a);
  std::size_t nd = out_shape.size();
  auto sa = broadcast_strides(a_shape, out_shape);
  auto sb = broadcast_strides(b_shape, out_shape);
  std::size_t inner = out_shape[nd - 1], ia_step = sa[nd - 1], ib_step = sb[nd - 1];
  // Rows first .. last-1 of the output (each `inner` long).
  auto rows = [&](std::size_t first, std::size_t last) {
    // Row `first`'s index along each outer axis, and where a and b start.
    std::vector<std::size_t> index(nd, 0);
    std::size_t ia = 0, ib = 0;
    for (std::size_t ax = nd - 1, r = first; ax-- > 0;) {
      index[ax] = r % out_shape[ax];
      r /= out_shape[ax];
      ia += index[ax] * sa[ax];
      ib += index[ax] * sb[ax];
    }
    for (std::size_t o = first * inner; o < last * inner; o += inner) {
      if (ia_step == 1 && ib_step == 1)  // both rows contiguous: a loop that vectorises
        for (std::size_t j = 0; j < inner; ++j) out[o + j] = f(a[ia + j], b[ib + j]);
      else
        for (std::size_t j = 0; j < inner; ++j)
          out[o + j] = f(a[ia + j * ia_step], b[ib + j * ib_step]);
      // Advance the odometer over axes nd-2 .. 0.
      for (std::size_t ax = nd - 1; ax-- > 0;) {
        ia += sa[ax];
        ib += sb[ax];
        if (++index[ax] < out_shape[ax]) break;
        ia -= sa[ax] * out_shape[ax];
        ib -= sb[ax] * out_shape[ax];
        index[ax] = 0;
      }
    }
  };
  fast::parallel_rows(n / inner, inner, rows);
}

template <class F>
Tensor binary_forward(const char* op, const Tensor& a, const Tensor& b, F f) {
  check_same_dtype(op, a, b);
  Tensor out = empty(broadcast_shapes(a.shape(), b.shape(), op), a.dtype());
  dispatch(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    broadcast_loop<T>(ptr<T>(a), a.shape(), ptr<T>(b), b.shape(), ptr<T>(out),
                      out.shape(), [&](T x, T y) { return f(x, y); });
  });
  return out;
}

template <class F>
Tensor unary_forward(const Tensor& x, F f) {
  Tensor out = empty(x.shape(), x.dtype());
  dispatch(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* in = ptr<T>(x);
    T* o = ptr<T>(out);
    fast::parallel_elements(x.size(), [&](std::size_t first, std::size_t last) {
      for (std::size_t i = first; i < last; ++i) o[i] = f(in[i]);
    });
  });
  return out;
}

// The same for a function that has a kernel of its own (fast/kernels.h:
// exp, sigmoid, silu), called as kernel(in, out, n) on each range.
template <class Kernel>
Tensor unary_forward_kernel(const Tensor& x, Kernel kernel) {
  Tensor out = empty(x.shape(), x.dtype());
  dispatch(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* in = ptr<T>(x);
    T* o = ptr<T>(out);
    fast::parallel_elements(x.size(), [&](std::size_t first, std::size_t last) {
      kernel(in + first, o + first, last - first);
    });
  });
  return out;
}

// A gradient is needed for input i only if it requires grad; skipping the
// others saves work (and avoids log(a) of a negative base in pow).
bool needs(const Tensor& t) {
  return t.node()->requires_grad;
}

}  // namespace

Tensor sum_to_shape(const Tensor& g, const Shape& shape) {
  // Nothing to sum: g itself, or under no_grad a view cut from the graph (an
  // op's result under no_grad never requires grad).
  if (g.shape() == shape) return grad_enabled() ? g : g.detach();
  Shape target = broadcast_shapes(shape, g.shape(), "sum_to_shape");
  if (target != g.shape())
    throw std::invalid_argument("sum_to_shape: shape " + shape_str(shape) +
                                " does not broadcast to the gradient's shape " +
                                shape_str(g.shape()));
  // Sum the leading axes the input did not have, and (keeping them) the axes
  // where it had length 1 but the gradient does not.
  std::size_t lead = g.ndim() - shape.size();
  std::vector<int> axes;
  for (std::size_t i = 0; i < g.ndim(); ++i)
    if (i < lead || (shape[i - lead] == 1 && g.shape()[i] != 1)) axes.push_back(int(i));
  Tensor summed = sum(g, axes, /*keepdims=*/true);
  std::vector<std::int64_t> s(shape.begin(), shape.end());
  return reshape(summed, s);
}

// ---- binary ops -------------------------------------------------------------------

// d(a+b)/da = 1, d(a+b)/db = 1
Tensor add(const Tensor& a, const Tensor& b) {
  Tensor out = binary_forward("add", a, b, [](auto x, auto y) { return x + y; });
  return finish_op(out, "add", {a, b}, [&] {
    // Keeps a and b only for their shapes; as the op's parents they are kept anyway.
    return [a, b](const Tensor& dout) {
      return std::vector<Tensor>{sum_to_shape(dout, a.shape()),
                                 sum_to_shape(dout, b.shape())};
    };
  });
}

// d(a-b)/da = 1, d(a-b)/db = -1
Tensor sub(const Tensor& a, const Tensor& b) {
  Tensor out = binary_forward("sub", a, b, [](auto x, auto y) { return x - y; });
  return finish_op(out, "sub", {a, b}, [&] {
    return [a, b](const Tensor& dout) {  // for their shapes, as in add
      return std::vector<Tensor>{sum_to_shape(dout, a.shape()),
                                 sum_to_shape(neg(dout), b.shape())};
    };
  });
}

// d(ab)/da = b, d(ab)/db = a
Tensor mul(const Tensor& a, const Tensor& b) {
  Tensor out = binary_forward("mul", a, b, [](auto x, auto y) { return x * y; });
  return finish_op(out, "mul", {a, b}, [&] {
    return [a, b](const Tensor& dout) {  // saves both inputs
      return std::vector<Tensor>{
          needs(a) ? sum_to_shape(mul(dout, b), a.shape()) : Tensor(),
          needs(b) ? sum_to_shape(mul(dout, a), b.shape()) : Tensor()};
    };
  });
}

// d(a/b)/da = 1/b, d(a/b)/db = -a/b^2
Tensor div(const Tensor& a, const Tensor& b) {
  Tensor out = binary_forward("div", a, b, [](auto x, auto y) { return x / y; });
  return finish_op(out, "div", {a, b}, [&] {
    return [a, b](const Tensor& dout) {
      return std::vector<Tensor>{
          needs(a) ? sum_to_shape(div(dout, b), a.shape()) : Tensor(),
          needs(b) ? sum_to_shape(neg(mul(dout, div(a, mul(b, b)))), b.shape())
                   : Tensor()};
    };
  });
}

// d(a^b)/da = b a^(b-1), d(a^b)/db = a^b ln(a)
// As in PyTorch, a^0 is the constant 1 (d/da = 0, also at a = 0, where
// b a^(b-1) would be 0 * inf), and d/db = 0 where a = 0 and b >= 0 (0^b is
// 0 or 1 there; a^b ln(a) would be 0 * -inf or -inf). Both are selected, not
// multiplied by a 0/1 mask, so an inf or NaN in dout does not leak through.
Tensor pow(const Tensor& a, const Tensor& b) {
  Tensor out = binary_forward("pow", a, b, [](auto x, auto y) { return std::pow(x, y); });
  return finish_op(out, "pow", {a, b}, [&] {
    return [a, b, out = out.detach()](const Tensor& dout) {
      Tensor da, db;
      if (needs(a)) {
        Tensor full = mul(dout, mul(b, pow(a, sub(b, ones_like(b)))));
        Tensor exponent_zero =
            binary_forward("pow", a, b, [](auto, auto y) { return decltype(y)(y == 0); });
        da = sum_to_shape(where(exponent_zero, zeros({}, a.dtype()), full), a.shape());
      }
      if (needs(b)) {
        Tensor full = mul(dout, mul(out, log(a)));
        Tensor base_zero = binary_forward(
            "pow", a, b, [](auto x, auto y) { return decltype(x)(x == 0 && y >= 0); });
        db = sum_to_shape(where(base_zero, zeros({}, b.dtype()), full), b.shape());
      }
      return std::vector<Tensor>{da, db};
    };
  });
}

Tensor pow(const Tensor& a, double exponent) {
  check_defined("pow", a);
  return pow(a, scalar(exponent, a.dtype()));
}

// A double operand takes the tensor's dtype, as NumPy treats Python scalars.
static Tensor like(double v, const Tensor& t) {
  check_defined("scalar", t);
  return scalar(v, t.dtype());
}

Tensor operator+(const Tensor& a, const Tensor& b) {
  return add(a, b);
}
Tensor operator-(const Tensor& a, const Tensor& b) {
  return sub(a, b);
}
Tensor operator*(const Tensor& a, const Tensor& b) {
  return mul(a, b);
}
Tensor operator/(const Tensor& a, const Tensor& b) {
  return div(a, b);
}
Tensor operator+(const Tensor& a, double b) {
  return add(a, like(b, a));
}
Tensor operator-(const Tensor& a, double b) {
  return sub(a, like(b, a));
}
Tensor operator*(const Tensor& a, double b) {
  return mul(a, like(b, a));
}
Tensor operator/(const Tensor& a, double b) {
  return div(a, like(b, a));
}
Tensor operator+(double a, const Tensor& b) {
  return add(like(a, b), b);
}
Tensor operator-(double a, const Tensor& b) {
  return sub(like(a, b), b);
}
Tensor operator*(double a, const Tensor& b) {
  return mul(like(a, b), b);
}
Tensor operator/(double a, const Tensor& b) {
  return div(like(a, b), b);
}
Tensor operator-(const Tensor& a) {
  return neg(a);
}

// ---- unary ops ----------------------------------------------------------------------
// `out` below is the forward result, detached: a backward that reuses it must
// not keep the output node (and so the whole graph) alive through itself.

// Converting is the identity on values, so the gradient is dout converted back.
Tensor astype(const Tensor& x, DType dtype) {
  check_defined("astype", x);
  Tensor out;
  if (x.dtype() == dtype) {
    out = view_as_shape(x, x.shape());
  } else {
    out = empty(x.shape(), dtype);
    dispatch(x.dtype(), [&](auto from) {
      dispatch(dtype, [&](auto to) {
        using From = decltype(from);
        using To = decltype(to);
        const From* in = ptr<From>(x);
        To* o = ptr<To>(out);
        for (std::size_t i = 0, n = x.size(); i < n; ++i) o[i] = To(in[i]);
      });
    });
  }
  return finish_op(out, "astype", {x}, [&] {
    return [from = x.dtype()](const Tensor& dout) {
      return std::vector<Tensor>{astype(dout, from)};
    };
  });
}

// d(-x)/dx = -1
Tensor neg(const Tensor& x) {
  check_defined("neg", x);
  Tensor out = unary_forward(x, [](auto v) { return -v; });
  return finish_op(out, "neg", {x}, [&] {
    return [](const Tensor& dout) { return std::vector<Tensor>{neg(dout)}; };
  });
}

// d(e^x)/dx = e^x: reuse the output
Tensor exp(const Tensor& x) {
  check_defined("exp", x);
  Tensor out = unary_forward_kernel(
      x, [](const auto* from, auto* to, std::size_t n) { fast::exp(from, to, n); });
  return finish_op(out, "exp", {x}, [&] {
    return [out = out.detach()](const Tensor& dout) {
      return std::vector<Tensor>{mul(dout, out)};
    };
  });
}

// d(ln x)/dx = 1/x
Tensor log(const Tensor& x) {
  check_defined("log", x);
  Tensor out = unary_forward(x, [](auto v) { return std::log(v); });
  return finish_op(out, "log", {x}, [&] {
    return [x](const Tensor& dout) { return std::vector<Tensor>{div(dout, x)}; };
  });
}

// d(sqrt x)/dx = 1 / (2 sqrt x)
Tensor sqrt(const Tensor& x) {
  check_defined("sqrt", x);
  Tensor out = unary_forward(x, [](auto v) { return std::sqrt(v); });
  return finish_op(out, "sqrt", {x}, [&] {
    return [out = out.detach()](const Tensor& dout) {
      return std::vector<Tensor>{div(dout, out * 2.0)};
    };
  });
}

// d(x^-1/2)/dx = -1/2 x^-3/2 = -1/2 rsqrt(x)^3
Tensor rsqrt(const Tensor& x) {
  check_defined("rsqrt", x);
  Tensor out = unary_forward(x, [](auto v) { return decltype(v)(1) / std::sqrt(v); });
  return finish_op(out, "rsqrt", {x}, [&] {
    return [out = out.detach()](const Tensor& dout) {
      return std::vector<Tensor>{mul(dout, mul(out, mul(out, out)) * -0.5)};
    };
  });
}

// d(tanh x)/dx = 1 - tanh(x)^2
Tensor tanh(const Tensor& x) {
  check_defined("tanh", x);
  Tensor out = unary_forward(x, [](auto v) { return std::tanh(v); });
  return finish_op(out, "tanh", {x}, [&] {
    return [out = out.detach()](const Tensor& dout) {
      return std::vector<Tensor>{mul(dout, 1.0 - mul(out, out))};
    };
  });
}

// d(sigmoid x)/dx = s (1 - s)
Tensor sigmoid(const Tensor& x) {
  check_defined("sigmoid", x);
  Tensor out = unary_forward_kernel(
      x, [](const auto* from, auto* to, std::size_t n) { fast::sigmoid(from, to, n); });
  return finish_op(out, "sigmoid", {x}, [&] {
    return [out = out.detach()](const Tensor& dout) {
      return std::vector<Tensor>{mul(dout, mul(out, 1.0 - out))};
    };
  });
}

// silu(x) = x s, s = sigmoid(x);  d/dx = s + x s (1 - s) = s (1 + x (1 - s)).
// A fused op rather than mul(x, sigmoid(x)): it saves one [B, T, d_ff]
// activation per layer in training.
Tensor silu(const Tensor& x) {
  check_defined("silu", x);
  Tensor out = unary_forward_kernel(
      x, [](const auto* from, auto* to, std::size_t n) { fast::silu(from, to, n); });
  return finish_op(out, "silu", {x}, [&] {
    return [x](const Tensor& dout) {
      // One loop rather than five ops: silu sits on the [B, T, d_ff]
      // activations, the largest of a training step.
      Tensor dx = empty(x.shape(), x.dtype());
      dispatch(x.dtype(), [&](auto zero) {
        using T = decltype(zero);
        const T* xs = ptr<T>(x);
        const T* g = ptr<T>(dout);
        T* o = ptr<T>(dx);
        fast::parallel_elements(x.size(), [&](std::size_t first, std::size_t last) {
          fast::sigmoid(xs + first, o + first, last - first);  // o = s
          for (std::size_t i = first; i < last; ++i) {
            const T s = o[i];
            o[i] = s * (T(1) + xs[i] * (T(1) - s)) * g[i];
          }
        });
      });
      return std::vector<Tensor>{dx};
    };
  });
}

// d(max(x, 0))/dx = 1 where x > 0, else 0 (the subgradient 0 at x == 0).
// NaN propagates as in np.maximum and torch.relu: relu(NaN) is NaN, and (as
// torch's threshold_backward) dout passes through at a NaN, which is not <= 0.
// The backward selects dout, so an inf in dout never meets a 0 (inf * 0 = NaN).
Tensor relu(const Tensor& x) {
  check_defined("relu", x);
  Tensor out =
      unary_forward(x, [](auto v) { return v > 0 || v != v ? v : decltype(v)(0); });
  return finish_op(out, "relu", {x}, [&] {
    return [x](const Tensor& dout) {
      return std::vector<Tensor>{binary_forward(
          "relu", x, dout, [](auto v, auto g) { return v <= 0 ? decltype(g)(0) : g; })};
    };
  });
}

}  // namespace glassllm
