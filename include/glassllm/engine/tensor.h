// tensor.h: the Tensor handle, how to create one, and reverse-mode autograd.
//
// A Tensor is a cheap handle (a shared pointer) to a node that holds:
//   - data: a contiguous, row-major xtensor array of float or double;
//   - grad: the gradient accumulated by backward(), once there is one;
//   - requires_grad, and - for tensors produced by an op while grad mode is
//     on - the op's name, its input tensors (parents) and its backward.
// Copying a Tensor copies the handle, not the data (like Python names).
//
// This header includes only the standard library: the node and its xtensor
// arrays live in the private header glassllm/engine/node.h. The ops themselves are
// declared in ops.h; read that next, then autograd.cpp for backward().
#pragma once

#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "glassllm/engine/dtype.h"

namespace glassllm {

struct Node;  // defined in glassllm/engine/node.h (private)

class Tensor {
 public:
  /// An undefined handle (like a Python None): defined() is false.
  Tensor() = default;

  // ---- what it is ---------------------------------------------------------
  bool defined() const { return node_ != nullptr; }
  const Shape& shape() const;
  std::size_t ndim() const;
  std::size_t size() const;    ///< number of elements
  std::size_t nbytes() const;  ///< size() * dtype_size(dtype())
  DType dtype() const;
  /// Length of one axis; negative axes count from the end (-1 is the last).
  /// Throws std::invalid_argument if the axis is out of range.
  std::size_t dim(int axis) const;

  // ---- reading values -----------------------------------------------------
  /// The value of a tensor with exactly one element; throws otherwise.
  double item() const;
  /// The element at a multi-index, e.g. t.at({0, 2}); throws std::out_of_range
  /// naming the index and the shape if it is outside.
  double at(const std::vector<std::size_t>& index) const;
  /// All elements in row-major order, converted to double.
  std::vector<double> to_vector() const;
  /// Raw pointer to the contiguous data; T must match dtype() (float for
  /// float32, double for float64) or std::invalid_argument is thrown.
  template <class T>
  const T* data() const;
  /// The same pointer, for writing. Each call counts as a write to the
  /// data (and to every view of it): backward() then refuses an op that
  /// saved this tensor before the write, naming the op (docs/02-autograd.md).
  template <class T>
  T* mutable_data();

  // ---- autograd -----------------------------------------------------------
  bool requires_grad() const;
  /// Marks a leaf tensor as a parameter/input whose gradient backward() should
  /// compute. Returns *this so it chains: auto w = randn(...).requires_grad_();
  Tensor& requires_grad_(bool on = true);
  /// The accumulated gradient (same shape and dtype), or an undefined Tensor
  /// if backward() has not reached this tensor.
  Tensor grad() const;
  /// Forgets the accumulated gradient (PyTorch's zero_grad(set_to_none=True)).
  void zero_grad();
  /// Keeps this non-leaf tensor's gradient after backward() (PyTorch's
  /// retain_grad). Leaf tensors always keep theirs.
  void retain_grad();
  /// Reverse-mode autodiff from a tensor with one element: walks the graph in
  /// reverse topological order and *sums* each op's input gradients into
  /// grad(), so a tensor used twice receives both contributions. Throws
  /// std::invalid_argument for a tensor with more than one element.
  void backward() const;
  /// The same from any tensor, with an explicit upstream gradient `dout` of
  /// this tensor's shape and dtype (the vector in a vector-Jacobian product).
  void backward(const Tensor& dout) const;
  /// A new leaf sharing this tensor's data, cut from the graph.
  Tensor detach() const;
  /// True when no op made this tensor (while grad mode was on).
  bool is_leaf() const;
  /// The name of the op that produced this tensor ("" for a leaf), e.g. "matmul".
  const std::string& op() const;
  /// The tensors this one was computed from (empty for a leaf).
  const std::vector<Tensor>& parents() const;
  /// Replaces the accumulated gradient with g, of this tensor's shape and
  /// dtype (an undefined g forgets it, as zero_grad does), for code that
  /// rescales gradients (clip_grad_norm). Throws std::invalid_argument for
  /// another shape or dtype.
  void set_grad(const Tensor& g);

  // ---- printing -----------------------------------------------------------
  /// NumPy's str(): "[[1. 2.]\n [3. 4.]]"; large tensors are summarised with "...".
  std::string str() const;
  /// NumPy's repr() plus dtype: "array([[1., 2.],\n       [3., 4.]], dtype=float32)".
  std::string repr() const;

  /// Two handles are the same tensor (not: equal values).
  bool is(const Tensor& other) const { return node_ == other.node_; }

  /// The array holding the elements, shared by a tensor and its views
  /// (reshape, detach and the other ops that move no data): two tensors
  /// share their elements iff their data_owner()s are equal. For tools that
  /// follow data through a graph (the tracer's op graph).
  std::shared_ptr<const void> data_owner() const;

  /// For the engine and extensions: the node behind the handle.
  Node* node() const { return node_.get(); }
  const std::shared_ptr<Node>& node_ptr() const { return node_; }
  explicit Tensor(std::shared_ptr<Node> node) : node_(std::move(node)) {}

 private:
  std::shared_ptr<Node> node_;
};

/// Prints t.str().
std::ostream& operator<<(std::ostream& os, const Tensor& t);

// ---- creating tensors -------------------------------------------------------
// Every creator takes the dtype last, float32 by default, as NumPy's float32
// arrays would be spelled in the model code.

/// np.empty: elements not initialised, for code that writes every one next
/// (a file's contents, a kernel's output). Pass a shape the caller no longer
/// needs with std::move: the tensor then keeps it without a copy.
Tensor empty(Shape shape, DType dtype = DType::float32);
Tensor zeros(const Shape& shape, DType dtype = DType::float32);
Tensor ones(const Shape& shape, DType dtype = DType::float32);
Tensor full(const Shape& shape, double value, DType dtype = DType::float32);
/// A 0-d tensor holding one value.
Tensor scalar(double value, DType dtype = DType::float32);
/// np.arange(start, stop, step): 1-D, values start, start+step, ... < stop.
Tensor arange(double start, double stop, double step = 1.0, DType dtype = DType::float32);
/// np.arange(n): 0, 1, ..., n-1.
Tensor arange(std::size_t n, DType dtype = DType::float32);
/// Values in row-major order with a shape; throws if the counts differ.
Tensor from_vector(const std::vector<double>& values, const Shape& shape,
                   DType dtype = DType::float32);
/// Nested values as written in a brace list: a number, or a list of them.
/// It exists so that tensor() can take any depth, like np.array.
struct NestedValues {
  NestedValues(double v) : value(v) {}
  NestedValues(std::initializer_list<NestedValues> list) : items(list), is_list(true) {}
  double value = 0;
  std::vector<NestedValues> items;
  bool is_list = false;
};

/// Nested values, like np.array: tensor({{1, 2}, {3, 4}}) has shape (2,2),
/// tensor({{1}, {2}}) shape (2,1), tensor(5) shape (). Ragged rows throw
/// std::invalid_argument.
Tensor tensor(const NestedValues& values, DType dtype = DType::float32);
Tensor zeros_like(const Tensor& t);
Tensor ones_like(const Tensor& t);
Tensor full_like(const Tensor& t, double value);

/// A seeded random generator: the same seed gives the same numbers on every
/// machine with the same standard library. One Rng draws a stream of tensors,
/// as a model's initialisation does.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : engine_(seed) {}
  /// Normal(mean, std) samples.
  Tensor normal(const Shape& shape, double mean = 0.0, double std = 1.0,
                DType dtype = DType::float32);
  /// Uniform samples in [low, high).
  Tensor uniform(const Shape& shape, double low = 0.0, double high = 1.0,
                 DType dtype = DType::float32);
  /// A uniform integer in [0, n).
  std::uint64_t randint(std::uint64_t n);
  std::mt19937_64& engine() { return engine_; }

 private:
  std::mt19937_64 engine_;
};

/// Standard normal samples from a seed: randn({2, 3}, 0).
Tensor randn(const Shape& shape, std::uint64_t seed, DType dtype = DType::float32);
/// Uniform [0, 1) samples from a seed.
Tensor rand(const Shape& shape, std::uint64_t seed, DType dtype = DType::float32);

// ---- grad mode ----------------------------------------------------------------

/// RAII guard: while one is alive (on this thread) ops record no graph, so
/// their results have no parents and requires_grad() is false. Use it for
/// inference:  { no_grad guard; auto logits = model.forward(tokens); }
class no_grad {
 public:
  no_grad();
  ~no_grad();
  no_grad(const no_grad&) = delete;
  no_grad& operator=(const no_grad&) = delete;

 private:
  bool previous_;
};

/// True unless a no_grad guard is alive on this thread.
bool grad_enabled();

}  // namespace glassllm
