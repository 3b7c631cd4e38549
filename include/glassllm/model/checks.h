// checks.h: the model's equivalence checks, as `glassllm check` runs them.
//
// Each compares two computations that must agree and reports the largest
// difference it saw, next to the tolerance. Run in float64, real bugs show up
// as differences many orders of magnitude above rounding (~1e-16 per op).
#pragma once

#include <string>
#include <vector>

#include "glassllm/model/model.h"

namespace glassllm {

struct CheckLine {
  std::string name;      ///< e.g. "incremental == full"
  std::string detail;    ///< what was compared, e.g. "prompt 8 + 8 steps, every logit"
  double max_diff = 0;   ///< largest absolute difference
  double tolerance = 0;  ///< passes when max_diff <= tolerance
  bool passed = false;
};

struct ModelCheckOptions {
  std::size_t prompt_len = 8;  ///< tokens prefilled before decoding
  std::size_t steps = 8;       ///< decode steps compared one by one
  std::uint64_t seed = 0;      ///< random tokens
};

/// Runs, on `model` converted to float64:
///  1. full forward == prefill then one-token decode steps (every logit);
///  2. repeat_kv == grouped (logits and the gradient of every weight);
///  3. concatenating cache == preallocated cache (every logit);
///  4. a whole-model gradient check of the loss on a tiny config.
/// Throws std::invalid_argument if prompt_len + steps exceeds max_len or is 0.
std::vector<CheckLine> check_model(const GlassLM& model,
                                   const ModelCheckOptions& options = {});

}  // namespace glassllm
