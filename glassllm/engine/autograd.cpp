// autograd.cpp: reverse-mode automatic differentiation over the recorded graph.
//
// Every op that ran with grad mode on left, on its output node, its inputs
// (parents) and a backward function mapping the output's gradient to one
// gradient per input. backward() visits the nodes in reverse topological
// order (every node after all the nodes that use it), so when a node's
// backward runs, its gradient is complete: the sum of the contributions of
// every use. That sum is the multivariable chain rule: if x feeds both f and
// g, dL/dx = dL/df * df/dx + dL/dg * dg/dx.
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "glassllm/engine/node.h"

namespace glassllm {

namespace {

// Post-order depth-first search from the root, iterative so that a deep graph
// (hundreds of layers of ops) cannot overflow the call stack.
std::vector<Node*> topological_order(Node* root) {
  std::vector<Node*> order;
  std::unordered_set<Node*> visited;
  std::vector<std::pair<Node*, std::size_t>> stack{{root, 0}};
  visited.insert(root);
  while (!stack.empty()) {
    auto& [node, next_parent] = stack.back();
    if (next_parent < node->parents.size()) {
      Node* parent = node->parents[next_parent++].node();
      if (parent->requires_grad && visited.insert(parent).second)
        stack.push_back({parent, 0});
    } else {
      order.push_back(node);
      stack.pop_back();
    }
  }
  return order;  // parents before children; the root is last
}

void accumulate(Tensor& slot, const Tensor& g) {
  slot = slot.defined() ? add(slot, g) : g;
}

// True when nothing but `g` can see its elements: no other handle to its
// node, and no other node (a view, the seed, another input's gradient, a
// saved output) on its storage.
bool owns_memory(const Tensor& g) {
  return g.node_ptr().use_count() == 1 && g.node()->storage.use_count() == 1;
}

// A gradient kept in a tensor's grad() must own its memory, as in PyTorch:
// the backward of add hands the same dout to both inputs, reshape's is a
// view of dout, and the seed passed to backward(dout) is the caller's. A
// student who zeroes or clips one grad() by hand must not change another
// tensor's gradient or the seed. So the first contribution is copied unless
// it is already owned; later ones are added into a new tensor anyway.
void keep_gradient(Tensor& slot, Tensor g) {
  if (slot.defined()) {
    slot = add(slot, g);
  } else if (owns_memory(g)) {
    slot = std::move(g);
  } else {
    slot = mul(g, ones({}, g.dtype()));  // a copy (mul writes a new array)
  }
}

// What each op's backward reads besides dout: which inputs' values (bit i
// for input i) and whether its own output. A write into one of those
// tensors between the forward and backward() would silently change the
// gradient (y = x * x, then x[0] = 10: dx = 2 * 10), so backward() refuses,
// as PyTorch does. Ops that only need shapes (add, reshape, ...) read
// nothing; an op not listed here (a custom op) is taken to read everything.
struct SavedValues {
  unsigned inputs;  // bit mask
  bool output;
};

SavedValues saved_values(const std::string& op) {
  static const std::unordered_map<std::string, SavedValues> table = {
      {"add", {0, false}},        {"sub", {0, false}},
      {"neg", {0, false}},        {"astype", {0, false}},
      {"sum", {0, false}},        {"mean", {0, false}},
      {"reshape", {0, false}},    {"squeeze", {0, false}},
      {"unsqueeze", {0, false}},  {"permute", {0, false}},
      {"transpose", {0, false}},  {"concat", {0, false}},
      {"slice", {0, false}},      {"repeat_kv", {0, false}},
      {"rope", {0, false}},       {"embedding", {0, false}},
      {"mul", {0b11, false}},     {"div", {0b11, false}},
      {"pow", {0b11, true}},      {"exp", {0, true}},
      {"log", {0b1, false}},      {"sqrt", {0, true}},
      {"rsqrt", {0, true}},       {"tanh", {0, true}},
      {"sigmoid", {0, true}},     {"silu", {0b1, false}},
      {"relu", {0b1, false}},     {"max", {0b1, true}},
      {"matmul", {0b11, false}},  {"matmul_t", {0b11, false}},
      {"linear", {0b11, false}},  {"softmax", {0, true}},
      {"log_softmax", {0, true}}, {"cross_entropy", {0b1, false}},
      {"where", {0b1, false}},    {"masked_fill", {0b10, false}},
      {"rmsnorm", {0, true}},     {"causal_softmax", {0, true}}};
  auto found = table.find(op);
  return found != table.end() ? found->second : SavedValues{~0u, true};
}

// "a leaf (3,) float32" or "the output of 'exp' (3,) float32".
std::string describe(const Node& t) {
  std::string what = t.op.empty() ? "a leaf" : "the output of '" + t.op + "'";
  return what + " " + shape_str(t.shape) + " " + dtype_name(t.dtype);
}

std::string written_after(const Node& n, std::uint64_t now, std::uint64_t saved) {
  return " was written (mutable_data) after '" + n.op +
         "' saved it for backward: " + "version " + std::to_string(now) +
         ", saved at version " + std::to_string(saved) +
         "; run the forward again after the write, or write into a copy";
}

// Throws naming the op and the tensor if something n's backward reads was
// written since n's forward.
void check_saved_versions(const Node& n) {
  SavedValues reads = saved_values(n.op);
  for (std::size_t i = 0; i < n.parents.size() && i < n.parent_versions.size(); ++i) {
    bool read = reads.inputs == ~0u || (i < 32 && (reads.inputs >> i & 1u));
    if (!read) continue;
    const Node& parent = *n.parents[i].node();
    if (parent.storage->version != n.parent_versions[i])
      throw std::invalid_argument(
          "backward: input " + std::to_string(i) + " of '" + n.op + "' (" +
          describe(parent) + ")" +
          written_after(n, parent.storage->version, n.parent_versions[i]));
  }
  if (reads.output && n.storage->version != n.version_at_op)
    throw std::invalid_argument("backward: " + describe(n) +
                                written_after(n, n.storage->version, n.version_at_op));
}

}  // namespace

void remember_versions(Node& node) {
  node.parent_versions.clear();
  for (const Tensor& parent : node.parents)
    node.parent_versions.push_back(parent.node()->storage->version);
  node.version_at_op = node.storage->version;
}

void Tensor::backward() const {
  if (!defined()) throw std::invalid_argument("backward: tensor is undefined");
  if (size() != 1)
    throw std::invalid_argument(
        "backward: output of shape " + shape_str(shape()) +
        " is not a scalar; pass the upstream gradient: backward(dout)");
  backward(ones(shape(), dtype()));
}

void Tensor::backward(const Tensor& dout) const {
  if (!defined()) throw std::invalid_argument("backward: tensor is undefined");
  check_defined("backward", dout);
  if (dout.shape() != shape() || dout.dtype() != dtype())
    throw std::invalid_argument("backward: upstream gradient " + shape_str(dout.shape()) +
                                " " + dtype_name(dout.dtype()) +
                                " does not match the output " + shape_str(shape()) + " " +
                                dtype_name(dtype()));
  if (!requires_grad())
    throw std::invalid_argument(
        "backward: tensor " + shape_str(shape()) +
        " does not require grad (no input had requires_grad_(), or it was computed "
        "under no_grad)");

  no_grad guard;  // backward functions are built from ops; record none of them
  std::vector<Node*> order = topological_order(node());
  std::unordered_map<Node*, Tensor> grads;  // gradients still being summed
  grads[node()] = dout;

  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Node* n = *it;
    auto found = grads.find(n);
    if (found == grads.end()) continue;  // nothing downstream reached it
    Tensor g = std::move(found->second);
    grads.erase(found);  // intermediate gradients are freed as soon as used
    if (!n->backward) {  // a leaf: the gradient ends here
      keep_gradient(n->grad, std::move(g));
      continue;
    }
    if (n->retains_grad) keep_gradient(n->grad, g);  // g goes on too: kept as a copy
    check_saved_versions(*n);

    std::vector<Tensor> input_grads = n->backward(g);
    if (input_grads.size() != n->parents.size())
      throw std::logic_error("backward of '" + n->op + "' returned " +
                             std::to_string(input_grads.size()) + " gradients for " +
                             std::to_string(n->parents.size()) + " inputs");
    for (std::size_t i = 0; i < n->parents.size(); ++i) {
      const Tensor& parent = n->parents[i];
      const Tensor& gi = input_grads[i];
      if (!parent.node()->requires_grad || !gi.defined()) continue;
      if (gi.shape() != parent.shape() || gi.dtype() != parent.dtype())
        throw std::logic_error(
            "backward of '" + n->op + "' returned a gradient " + shape_str(gi.shape()) +
            " " + dtype_name(gi.dtype()) + " for input " + std::to_string(i) +
            " of shape " + shape_str(parent.shape()) + " " + dtype_name(parent.dtype()));
      accumulate(grads[parent.node()], gi);
    }
  }
}

}  // namespace glassllm
