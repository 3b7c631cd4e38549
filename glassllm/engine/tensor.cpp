// tensor.cpp: the Tensor handle's accessors, creation functions, the seeded
// random generator, grad mode, and the checks every op shares. Printing is in
// print.cpp, backward() in autograd.cpp.
#include <algorithm>
#include <sstream>

#include "glassllm/engine/node.h"
#include "glassllm/fast/kernels.h"

namespace glassllm {

// ---- dtypes and shapes ----------------------------------------------------------

const char* dtype_name(DType dtype) {
  return dtype == DType::float32 ? "float32" : "float64";
}

std::size_t dtype_size(DType dtype) {
  return dtype == DType::float32 ? 4 : 8;
}

DType parse_dtype(const std::string& name) {
  if (name == "float32" || name == "f32") return DType::float32;
  if (name == "float64" || name == "f64") return DType::float64;
  throw std::invalid_argument("dtype: unknown dtype '" + name +
                              "'; expected float32 or float64");
}

std::string shape_str(const Shape& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ",";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

std::size_t shape_numel(const Shape& shape) {
  std::size_t n = 1;
  for (std::size_t d : shape) n *= d;
  return n;
}

std::vector<std::size_t> contiguous_strides(const Shape& shape) {
  std::vector<std::size_t> strides(shape.size(), 1);
  for (std::size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

std::vector<std::size_t> broadcast_strides(const Shape& shape, const Shape& out_shape) {
  std::vector<std::size_t> own = contiguous_strides(shape);
  std::vector<std::size_t> strides(out_shape.size(), 0);
  std::size_t offset = out_shape.size() - shape.size();
  for (std::size_t i = 0; i < shape.size(); ++i)
    strides[offset + i] = shape[i] == 1 ? 0 : own[i];
  return strides;
}

AxisSplit split_at(const Shape& shape, std::size_t axis) {
  AxisSplit s;
  for (std::size_t i = 0; i < axis; ++i) s.outer *= shape[i];
  s.n = shape[axis];
  for (std::size_t i = axis + 1; i < shape.size(); ++i) s.inner *= shape[i];
  return s;
}

// ---- making nodes ---------------------------------------------------------------

Tensor empty(Shape shape, DType dtype) {
  auto node = std::make_shared<Node>();
  node->dtype = dtype;
  node->numel = shape_numel(shape);
  node->shape = std::move(shape);
  // The Storage is built from its array: a default-constructed one would
  // first allocate an array of one element, only to free it again.
  dispatch(dtype, [&](auto zero) {
    using T = decltype(zero);
    node->storage =
        std::make_shared<Storage>(Storage{xt::xtensor<T, 1>::from_shape({node->numel})});
    // Nothing has written the array yet: how its memory is kept and paged
    // is the fast layer's choice (fast/kernels.h).
    fast::apply_allocation_policy(node->data<T>(), node->numel * sizeof(T));
  });
  return Tensor(std::move(node));
}

Tensor view_as_shape(const Tensor& x, const Shape& shape) {
  auto node = std::make_shared<Node>();
  node->dtype = x.dtype();
  node->shape = shape;
  node->numel = shape_numel(shape);
  node->storage = x.node()->storage;
  return Tensor(std::move(node));
}

// ---- accessors ------------------------------------------------------------------

static Node& checked(const Tensor& t, const char* what) {
  if (!t.defined())
    throw std::invalid_argument(std::string(what) + ": tensor is undefined");
  return *t.node();
}

const Shape& Tensor::shape() const {
  return checked(*this, "shape").shape;
}
std::size_t Tensor::ndim() const {
  return checked(*this, "ndim").shape.size();
}
std::size_t Tensor::size() const {
  return checked(*this, "size").numel;
}
std::size_t Tensor::nbytes() const {
  return size() * dtype_size(dtype());
}
DType Tensor::dtype() const {
  return checked(*this, "dtype").dtype;
}

std::size_t Tensor::dim(int axis) const {
  return shape()[normalize_axis("dim", axis, shape())];
}

double Tensor::item() const {
  if (size() != 1)
    throw std::invalid_argument("item: tensor of shape " + shape_str(shape()) + " has " +
                                std::to_string(size()) +
                                " elements; item() needs exactly one");
  return dispatch(dtype(),
                  [&](auto zero) { return double(ptr<decltype(zero)>(*this)[0]); });
}

double Tensor::at(const std::vector<std::size_t>& index) const {
  const Shape& s = shape();
  bool ok = index.size() == s.size();
  for (std::size_t i = 0; ok && i < s.size(); ++i) ok = index[i] < s[i];
  if (!ok) {
    throw std::out_of_range("at: index " + shape_str(index) +
                            " is out of range for shape " + shape_str(s));
  }
  std::size_t flat = 0;
  for (std::size_t i = 0; i < s.size(); ++i) flat = flat * s[i] + index[i];
  return dispatch(dtype(),
                  [&](auto zero) { return double(ptr<decltype(zero)>(*this)[flat]); });
}

std::vector<double> Tensor::to_vector() const {
  return dispatch(dtype(), [&](auto zero) {
    const auto* p = ptr<decltype(zero)>(*this);
    return std::vector<double>(p, p + size());
  });
}

template <class T>
const T* Tensor::data() const {
  if (dtype() != dtype_of<T>())
    throw std::invalid_argument(std::string("data: tensor is ") + dtype_name(dtype()) +
                                ", not " + dtype_name(dtype_of<T>()));
  return ptr<T>(*this);
}

template <class T>
T* Tensor::mutable_data() {
  T* p = const_cast<T*>(data<T>());
  ++node()->storage->version;  // a write: a backward that saved this tensor must know
  return p;
}

template const float* Tensor::data<float>() const;
template const double* Tensor::data<double>() const;
template float* Tensor::mutable_data<float>();
template double* Tensor::mutable_data<double>();

bool Tensor::requires_grad() const {
  return checked(*this, "requires_grad").requires_grad;
}

Tensor& Tensor::requires_grad_(bool on) {
  Node& n = checked(*this, "requires_grad_");
  if (!on && n.backward)
    throw std::invalid_argument(
        "requires_grad_: cannot turn off requires_grad on the result of op '" + n.op +
        "'; use detach()");
  n.requires_grad = on;
  return *this;
}

Tensor Tensor::grad() const {
  return checked(*this, "grad").grad;
}
void Tensor::zero_grad() {
  checked(*this, "zero_grad").grad = Tensor();
}
void Tensor::set_grad(const Tensor& g) {
  Node& node = checked(*this, "set_grad");
  if (g.defined() && (g.shape() != node.shape || g.dtype() != node.dtype))
    throw std::invalid_argument("set_grad: gradient " + shape_str(g.shape()) + " " +
                                dtype_name(g.dtype()) + " for a tensor " +
                                shape_str(node.shape) + " " + dtype_name(node.dtype) +
                                "; expected the tensor's shape and dtype");
  node.grad = g;
}
std::shared_ptr<const void> Tensor::data_owner() const {
  return checked(*this, "data_owner").storage;
}
void Tensor::retain_grad() {
  checked(*this, "retain_grad").retains_grad = true;
}
bool Tensor::is_leaf() const {
  return !checked(*this, "is_leaf").backward;
}
const std::string& Tensor::op() const {
  return checked(*this, "op").op;
}
const std::vector<Tensor>& Tensor::parents() const {
  return checked(*this, "parents").parents;
}

Tensor Tensor::detach() const {
  Tensor out = view_as_shape(*this, shape());
  return out;
}

// ---- creation -------------------------------------------------------------------

Tensor full(const Shape& shape, double value, DType dtype) {
  Tensor t = empty(shape, dtype);
  dispatch(dtype, [&](auto zero) {
    using T = decltype(zero);
    std::fill_n(ptr<T>(t), t.size(), T(value));
  });
  return t;
}

Tensor zeros(const Shape& shape, DType dtype) {
  return full(shape, 0.0, dtype);
}
Tensor ones(const Shape& shape, DType dtype) {
  return full(shape, 1.0, dtype);
}
Tensor scalar(double value, DType dtype) {
  return full({}, value, dtype);
}
Tensor zeros_like(const Tensor& t) {
  return zeros(t.shape(), t.dtype());
}
Tensor ones_like(const Tensor& t) {
  return ones(t.shape(), t.dtype());
}
Tensor full_like(const Tensor& t, double value) {
  return full(t.shape(), value, t.dtype());
}

Tensor from_vector(const std::vector<double>& values, const Shape& shape, DType dtype) {
  if (values.size() != shape_numel(shape))
    throw std::invalid_argument("from_vector: " + std::to_string(values.size()) +
                                " values do not fill shape " + shape_str(shape) + " (" +
                                std::to_string(shape_numel(shape)) + " elements)");
  Tensor t = empty(shape, dtype);
  dispatch(dtype, [&](auto zero) {
    using T = decltype(zero);
    std::copy(values.begin(), values.end(), ptr<T>(t));
  });
  return t;
}

Tensor arange(double start, double stop, double step, DType dtype) {
  if (step == 0) throw std::invalid_argument("arange: step must not be zero");
  double count = std::ceil((stop - start) / step);
  std::size_t n = count > 0 ? static_cast<std::size_t>(count) : 0;
  std::vector<double> values(n);
  for (std::size_t i = 0; i < n; ++i) values[i] = start + double(i) * step;
  return from_vector(values, {n}, dtype);
}

Tensor arange(std::size_t n, DType dtype) {
  return arange(0.0, double(n), 1.0, dtype);
}

// Nested values: flatten, checking that every row at one depth has one length.
namespace {
void flatten(const NestedValues& v, std::vector<double>& out, Shape& shape,
             std::size_t depth, std::size_t& leaf_depth) {
  if (!v.is_list) {
    if (leaf_depth == std::size_t(-1)) leaf_depth = depth;
    if (leaf_depth != depth)
      throw std::invalid_argument("tensor: ragged nested values: a number at depth " +
                                  std::to_string(depth) + " where lists nest " +
                                  std::to_string(leaf_depth) + " deep");
    out.push_back(v.value);
    return;
  }
  if (shape.size() <= depth) shape.push_back(v.items.size());
  if (shape[depth] != v.items.size())
    throw std::invalid_argument("tensor: ragged nested values: a row of length " +
                                std::to_string(v.items.size()) + " at depth " +
                                std::to_string(depth) + " where " +
                                std::to_string(shape[depth]) + " was expected");
  for (const NestedValues& item : v.items)
    flatten(item, out, shape, depth + 1, leaf_depth);
}
}  // namespace

Tensor tensor(const NestedValues& values, DType dtype) {
  std::vector<double> flat;
  Shape shape;
  std::size_t leaf_depth = std::size_t(-1);
  flatten(values, flat, shape, 0, leaf_depth);
  if (leaf_depth != std::size_t(-1) && leaf_depth != shape.size())
    throw std::invalid_argument("tensor: ragged nested values: numbers at depth " +
                                std::to_string(leaf_depth) + " but lists nest " +
                                std::to_string(shape.size()) + " deep");
  return from_vector(flat, shape, dtype);
}

// ---- random ---------------------------------------------------------------------

Tensor Rng::normal(const Shape& shape, double mean, double std, DType dtype) {
  std::normal_distribution<double> dist(mean, std);
  std::vector<double> values(shape_numel(shape));
  for (double& v : values) v = dist(engine_);
  return from_vector(values, shape, dtype);
}

Tensor Rng::uniform(const Shape& shape, double low, double high, DType dtype) {
  std::uniform_real_distribution<double> dist(low, high);
  std::vector<double> values(shape_numel(shape));
  for (double& v : values) v = dist(engine_);
  return from_vector(values, shape, dtype);
}

std::uint64_t Rng::randint(std::uint64_t n) {
  if (n == 0) throw std::invalid_argument("randint: n must be positive");
  return std::uniform_int_distribution<std::uint64_t>(0, n - 1)(engine_);
}

Tensor randn(const Shape& shape, std::uint64_t seed, DType dtype) {
  return Rng(seed).normal(shape, 0.0, 1.0, dtype);
}

Tensor rand(const Shape& shape, std::uint64_t seed, DType dtype) {
  return Rng(seed).uniform(shape, 0.0, 1.0, dtype);
}

// ---- grad mode ------------------------------------------------------------------

namespace {
thread_local bool grad_mode_enabled = true;
}

no_grad::no_grad() : previous_(grad_mode_enabled) {
  grad_mode_enabled = false;
}
no_grad::~no_grad() {
  grad_mode_enabled = previous_;
}
bool grad_enabled() {
  return grad_mode_enabled;
}

bool should_record(std::initializer_list<const Tensor*> inputs) {
  if (!grad_mode_enabled) return false;
  for (const Tensor* t : inputs)
    if (t->node()->requires_grad) return true;
  return false;
}

bool should_record(const std::vector<Tensor>& inputs) {
  if (!grad_mode_enabled) return false;
  for (const Tensor& t : inputs)
    if (t.node()->requires_grad) return true;
  return false;
}

// ---- checks ---------------------------------------------------------------------

void check_defined(const char* op, const Tensor& t) {
  if (!t.defined())
    throw std::invalid_argument(std::string(op) + ": tensor is undefined");
}

void check_same_dtype(const char* op, const Tensor& a, const Tensor& b) {
  check_defined(op, a);
  check_defined(op, b);
  if (a.dtype() != b.dtype())
    throw std::invalid_argument(std::string(op) + ": dtypes " + dtype_name(a.dtype()) +
                                " " + shape_str(a.shape()) + " and " +
                                dtype_name(b.dtype()) + " " + shape_str(b.shape()) +
                                " differ; convert one with astype()");
}

std::size_t normalize_axis(const char* op, int axis, const Shape& shape) {
  int n = static_cast<int>(shape.size());
  if (axis < -n || axis >= n)
    throw std::invalid_argument(std::string(op) + ": axis " + std::to_string(axis) +
                                " is out of range for shape " + shape_str(shape));
  return static_cast<std::size_t>(axis < 0 ? axis + n : axis);
}

std::size_t normalize_insert_axis(const char* op, int axis, const Shape& shape) {
  int n = static_cast<int>(shape.size()) + 1;
  if (axis < -n || axis >= n)
    throw std::invalid_argument(std::string(op) + ": axis " + std::to_string(axis) +
                                " is out of range for inserting into shape " +
                                shape_str(shape));
  return static_cast<std::size_t>(axis < 0 ? axis + n : axis);
}

}  // namespace glassllm
