// gradcheck.h: checking a backward function against finite differences.
//
// For a function f of tensors, the checker compares, for every element x_j of
// every input, the gradient backward() computes (analytic) with the central
// difference (numeric)
//     (L(x_j + eps) - L(x_j - eps)) / (2 eps),
// where L = sum(f(inputs) * R) and R is a fixed random tensor: one backward
// pass then checks the whole vector-Jacobian product R^T J, and a random R
// leaves a wrong entry of J nowhere to hide. An element passes when
//     |analytic - numeric| <= atol + rtol * |numeric|
// (PyTorch's gradcheck rule and defaults). Inputs must be float64: in float32
// the rounding error of the difference quotient (~1e-7 / eps) swamps the check.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "glassllm/engine/tensor.h"

namespace glassllm {

struct GradCheckOptions {
  double eps = 1e-6;       ///< finite-difference step
  double atol = 1e-5;      ///< absolute tolerance
  double rtol = 1e-3;      ///< relative tolerance
  std::uint64_t seed = 0;  ///< seed of the projection R
};

/// What the checker found for one input.
struct InputCheck {
  std::size_t input = 0;  ///< position in the inputs vector
  Shape shape;
  double max_abs_err = 0;  ///< max |analytic - numeric|
  double max_rel_err = 0;  ///< max |analytic - numeric| / max(|numeric|, tiny)
  std::vector<std::size_t> worst_index;  ///< multi-index of the worst element
  double analytic = 0, numeric = 0;      ///< the two values at worst_index
  bool passed = true;
};

struct GradCheckResult {
  std::string op;  ///< the name given to gradcheck(), e.g. "softmax"
  bool passed = true;
  std::vector<InputCheck> inputs;
  GradCheckOptions options;
  /// One line per input, for a failure: op, input, worst index, analytic,
  /// numeric, both errors, eps, dtype.
  std::string message() const;
};

using TensorFn = std::function<Tensor(const std::vector<Tensor>&)>;

/// Checks the gradient of `f` with respect to every input. The inputs are
/// copied (the caller's tensors are not modified) and must be float64;
/// otherwise std::invalid_argument is thrown. `f` may return any shape.
///   auto r = gradcheck([](const std::vector<Tensor>& x) { return exp(x[0]); },
///                      {randn({3}, 0, DType::float64)}, {}, "exp");
///   if (!r.passed) std::cerr << r.message();
GradCheckResult gradcheck(const TensorFn& f, const std::vector<Tensor>& inputs,
                          const GradCheckOptions& options = {},
                          const std::string& op = "");

/// One entry of the built-in suite that `glassllm gradcheck` runs: an op on
/// small random float64 inputs.
struct OpCheckCase {
  std::string op;         ///< op name as in ops.h, e.g. "matmul"
  std::string case_name;  ///< what this case covers, e.g. "broadcast batch"
  std::function<GradCheckResult(const GradCheckOptions&)> run;
};

/// Every op of ops.h, with broadcasting cases and a tensor used twice.
const std::vector<OpCheckCase>& builtin_gradchecks();

}  // namespace glassllm
