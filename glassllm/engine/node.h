// node.h (private): what a Tensor handle points to, and the helpers every op
// file uses. Only the engine's own files include this header (the layer
// check, cmake/check_layers.cmake, fails the build otherwise); it is the one
// place that sees xtensor together with the Tensor type. Other layers use
// the public API: tensor.h, ops.h, op_observer.h.
//
// Data layout: every tensor is contiguous and row-major. Its elements live in
// a Storage (a flat xtensor array of float or double) that views may share:
// reshape, squeeze, unsqueeze and detach make a new Node over the same
// Storage with another shape. Every other op writes a new Storage.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>
#include <xtensor/xtensor.hpp>

#include "glassllm/engine/op_observer.h"
#include "glassllm/engine/ops.h"
#include "glassllm/engine/tensor.h"

namespace glassllm {

/// The elements of one or more tensors: a flat (1-D) xtensor array. The
/// shape is the Node's; a fixed-rank array is made without the dynamic shape
/// and strides an xt::xarray would set up for every op's result.
struct Storage {
  std::variant<xt::xtensor<float, 1>, xt::xtensor<double, 1>> array;
  /// Counts writes from outside the ops (Tensor::mutable_data): an op's
  /// backward that reads a tensor it saved checks that the count has not
  /// moved since the forward (PyTorch's version counter).
  std::uint64_t version = 0;
};

/// Given the gradient of an op's output, returns one gradient per input (an
/// undefined Tensor for an input that needs none). Runs with grad mode off.
using BackwardFn = std::function<std::vector<Tensor>(const Tensor& dout)>;

struct Node {
  DType dtype = DType::float32;
  Shape shape;
  std::size_t numel = 0;
  std::shared_ptr<Storage> storage;

  Tensor grad;  // accumulated by backward() for leaves and retain_grad() nodes
  bool requires_grad = false;
  bool retains_grad = false;

  std::string op;               // "" for a tensor no op produced
  std::vector<Tensor> parents;  // set only when the op was recorded
  BackwardFn backward;          // likewise
  // The storage versions of the parents and of this node when the op ran,
  // checked by backward() (autograd.cpp, check_saved_versions).
  std::vector<std::uint64_t> parent_versions;
  std::uint64_t version_at_op = 0;

  template <class T>
  T* data() {
    return std::get<xt::xtensor<T, 1>>(storage->array).data();
  }
};

// ---- creating results ---------------------------------------------------------

/// A new node sharing x's storage with another shape of the same size.
Tensor view_as_shape(const Tensor& x, const Shape& shape);

template <class T>
constexpr DType dtype_of() {
  return std::is_same_v<T, float> ? DType::float32 : DType::float64;
}

template <class T>
T* ptr(const Tensor& t) {
  return t.node()->data<T>();
}

// ---- recording the graph ------------------------------------------------------

/// Notes the storage versions of a just-recorded node's parents and output,
/// for backward() to see whether one was written since (autograd.cpp).
void remember_versions(Node& node);

/// True when an op with these inputs must record its backward.
bool should_record(std::initializer_list<const Tensor*> inputs);
bool should_record(const std::vector<Tensor>& inputs);

/// Names `out` after its op and, when recording, attaches the parents and the
/// backward. `make_backward` is a lambda returning the BackwardFn; it is only
/// called when the graph is recorded, so inference pays nothing for it.
template <class MakeBackward>
Tensor finish_op(Tensor out, const char* op, const std::vector<Tensor>& inputs,
                 MakeBackward&& make_backward) {
  Node& node = *out.node();
  node.op = op;
  if (should_record(inputs)) {
    node.requires_grad = true;
    node.parents = inputs;
    node.backward = make_backward();
    remember_versions(node);
  }
  if (detail::op_observer) detail::op_observer->on_op(out, inputs.data(), inputs.size());
  return out;
}

// The usual spelling, finish_op(out, "mul", {a, b}, ...). The list holds
// references, not copies: copying a Tensor counts its node up and down
// again (two atomic operations each), a noticeable share of a small op.
// Unless the op is recorded, nothing is copied and no vector is built.
template <class MakeBackward>
Tensor finish_op(Tensor out, const char* op,
                 std::initializer_list<std::reference_wrapper<const Tensor>> inputs,
                 MakeBackward&& make_backward) {
  Node& node = *out.node();
  node.op = op;
  bool record = false;
  if (grad_enabled())
    for (const Tensor& t : inputs) record = record || t.node()->requires_grad;
  if (record) {
    node.requires_grad = true;
    node.parents.assign(inputs.begin(), inputs.end());
    node.backward = make_backward();
    remember_versions(node);
  }
  if (detail::op_observer) {
    const std::vector<Tensor> copies(inputs.begin(), inputs.end());
    detail::op_observer->on_op(out, copies.data(), copies.size());
  }
  return out;
}

// ---- checks shared by the ops -------------------------------------------------

/// Throws "op: tensor is undefined" for an empty handle.
void check_defined(const char* op, const Tensor& t);
/// Throws "op: dtypes float32 and float64 differ; convert one with astype".
void check_same_dtype(const char* op, const Tensor& a, const Tensor& b);
/// Maps a possibly negative axis into [0, ndim) or throws
/// "op: axis 3 is out of range for shape (2,3)".
std::size_t normalize_axis(const char* op, int axis, const Shape& shape);
/// Like normalize_axis, for an insertion point in [0, ndim].
std::size_t normalize_insert_axis(const char* op, int axis, const Shape& shape);

/// Row-major strides (in elements) of a contiguous array of this shape.
std::vector<std::size_t> contiguous_strides(const Shape& shape);

/// Strides (in elements) with which an input of `shape` is read when
/// broadcast to `out_shape`: 0 along the axes it is repeated on (NumPy's rule).
std::vector<std::size_t> broadcast_strides(const Shape& shape, const Shape& out_shape);

/// A shape seen around one axis as [outer, n, inner]: reducing or slicing that
/// axis of a contiguous array touches elements `inner` apart.
struct AxisSplit {
  std::size_t outer = 1, n = 1, inner = 1;
};
AxisSplit split_at(const Shape& shape, std::size_t axis);

}  // namespace glassllm
