// ops_shape.cpp: ops that change the shape or the order of elements.
//
// reshape, squeeze and unsqueeze return views: a new node over the same
// storage, no element moved (a contiguous array keeps its row-major order
// under any reshape). Their backward reshapes the gradient back.
// permute, transpose, concat and slice write a new contiguous array with
// plain loops (xtensor's strided views evaluate element by element).
#include <algorithm>

#include "glassllm/node.h"

namespace glassllm {

namespace {
std::vector<std::int64_t> as_dims(const Shape& s) { return {s.begin(), s.end()}; }

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
    for (std::size_t i = 0; i < shape.size(); ++i)
      requested += (i ? "," : "") + std::to_string(shape[i]);
    requested += shape.size() == 1 ? ",)" : ")";
    throw std::invalid_argument("reshape: cannot reshape " + shape_str(x.shape()) + " (" +
                                std::to_string(x.size()) + " elements) into " + requested +
                                why);
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

}  // namespace glassllm
