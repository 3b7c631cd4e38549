// custom_op.cpp: the extension point of custom_op.h.
#include "glassllm/engine/custom_op.h"

#include "glassllm/engine/node.h"

namespace glassllm {

Tensor custom_op(const std::string& name, const std::vector<Tensor>& inputs,
                 const CustomForward& forward, const CustomBackward& backward) {
  for (const Tensor& t : inputs) check_defined(name.c_str(), t);
  Tensor out;
  {
    no_grad guard;  // the forward's own ops are not recorded: this is one op
    out = forward(inputs);
  }
  check_defined(name.c_str(), out);
  // The forward may return one of its inputs or a view of one: give the
  // custom op a node of its own so that recording it changes nothing else.
  out = view_as_shape(out, out.shape());
  Node& node = *out.node();
  node.op = name;
  if (should_record(inputs)) {
    node.requires_grad = true;
    node.parents = inputs;
    node.backward = [inputs, output = out.detach(), backward](const Tensor& dout) {
      return backward(inputs, output, dout);
    };
    remember_versions(node);
  }
  if (detail::op_observer) detail::op_observer->on_op(out, inputs.data(), inputs.size());
  return out;
}

}  // namespace glassllm
