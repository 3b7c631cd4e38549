// custom_op.h: defining a new differentiable op from outside the engine.
//
// A custom op has a forward, computed from existing ops (or from raw data via
// Tensor::data / mutable_data), and a backward that you write. The forward
// runs with grad mode off, so the engine records the custom op as ONE node
// with your backward, exactly like a built-in op; the gradient checker then
// tests your backward like any other. See docs/ for "adding an op".
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "glassllm/engine/tensor.h"

namespace glassllm {

/// Computes the output from the inputs.
using CustomForward = std::function<Tensor(const std::vector<Tensor>& inputs)>;
/// Given the inputs, the forward's output and the gradient of the loss with
/// respect to that output (dout, the output's shape), returns one gradient per
/// input, each of that input's shape (an undefined Tensor means "no gradient").
using CustomBackward = std::function<std::vector<Tensor>(
    const std::vector<Tensor>& inputs, const Tensor& output, const Tensor& dout)>;

/// Runs `forward` on `inputs` and, when grad mode is on and an input requires
/// grad, records the result as one node named `name` whose backward is
/// `backward`. Example, square(x) = x*x with d/dx = 2x:
///   Tensor y = custom_op("square", {x},
///       [](const std::vector<Tensor>& in) { return in[0] * in[0]; },
///       [](const std::vector<Tensor>& in, const Tensor&, const Tensor& dout) {
///         return std::vector<Tensor>{dout * in[0] * 2.0};
///       });
/// A backward that returns the wrong number of gradients, or a gradient of the
/// wrong shape, makes backward() throw std::logic_error naming `name`.
Tensor custom_op(const std::string& name, const std::vector<Tensor>& inputs,
                 const CustomForward& forward, const CustomBackward& backward);

}  // namespace glassllm
