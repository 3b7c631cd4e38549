// dtype.h: the two element types a Tensor can hold, and the shape type.
//
// dtype is a run-time property of a Tensor (as in NumPy), not a template
// parameter: a student writes `Tensor`, never `Tensor<float>`. An op's output
// has the dtype of its inputs; mixing float32 and float64 is an error, never a
// silent promotion. Read tensor.h next.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace glassllm {

/// The element type of a Tensor.
enum class DType { float32, float64 };

/// "float32" or "float64".
const char* dtype_name(DType dtype);

/// Bytes per element: 4 or 8.
std::size_t dtype_size(DType dtype);

/// Parses "float32"/"f32" or "float64"/"f64"; throws std::invalid_argument
/// naming the bad value otherwise.
DType parse_dtype(const std::string& name);

/// A shape in NumPy order, outermost axis first: {B, T, d_model}.
using Shape = std::vector<std::size_t>;

/// NumPy's spelling of a shape: "(2,3)", "(3,)", "()".
std::string shape_str(const Shape& shape);

/// Number of elements of a shape (1 for the 0-d shape "()").
std::size_t shape_numel(const Shape& shape);

/// Calls f with a value of the element type of `dtype` (0.0f or 0.0), so one
/// templated lambda body is compiled for float and for double:
///   dispatch(x.dtype(), [&](auto zero) { using T = decltype(zero); ... });
template <class F>
decltype(auto) dispatch(DType dtype, F&& f) {
  if (dtype == DType::float32) return f(float{});
  return f(double{});
}

}  // namespace glassllm
