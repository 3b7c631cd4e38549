// target_gradients.h: how much each token of a text mattered for a target
// continuation -- the inspector's live Gradients view.
//
// Teacher forcing: the model reads prompt + target in one forward, the loss
// is the mean cross-entropy of the target's tokens (each predicted from the
// tokens before it), and one backward gives, for every input position t,
// d loss / d x_t where x_t is the token's embedding (the residual stream
// entering block 0). A position whose gradient is large is one the loss
// depends on: change that token and the target's probability moves most.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "glassllm/trace/tracer.h"

namespace glassllm {

struct TargetGradients {
  /// Every input token: the prompt's, then the target's but its last (the
  /// forward reads prompt + target[:-1] and predicts target).
  std::vector<TokenText> tokens;
  std::size_t prompt_length = 0;  ///< how many of `tokens` are the prompt's
  std::vector<TokenText> target;  ///< the target's tokens, each one predicted
  /// -log p(target[i] | everything before it), in nats; loss is their mean.
  std::vector<double> token_loss;
  double loss = 0;
  /// Per input position: the L2 norm of d loss / d x_t over the model's width.
  std::vector<double> grad_norm;
};

/// Teacher-forced loss of `target` after `prompt` and its gradient by input
/// position. Throws std::invalid_argument for an empty prompt or target, or
/// when prompt + target is longer than the model's max_len (naming both
/// lengths). Never changes the model: its weights' gradients are zeroed after.
TargetGradients target_gradients(
    const GlassLM& model, const std::vector<std::int64_t>& prompt,
    const std::vector<std::int64_t>& target,
    const std::function<std::string(std::int64_t)>& token_text);

/// As JSON: {"format": "glassllm-gradients", "prompt_length", "loss",
/// "tokens": [{"id", "text", "grad_norm"}], "target": [{"id", "text", "loss"}]}.
std::string to_json(const TargetGradients& g);

}  // namespace glassllm
