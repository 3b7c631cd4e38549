// optim.h: the optimizers that train a GlassLM (SGD with momentum, AdamW),
// gradient clipping by global norm, and the learning-rate schedule.
//
// Each formula is PyTorch's (torch.optim.SGD, torch.optim.AdamW,
// torch.nn.utils.clip_grad_norm_), so a student can check an update against
// PyTorch by hand. An optimizer step writes the weights' data in place
// (Tensor::mutable_data) and records no graph: it is arithmetic on numbers,
// not part of the model. Gradients are only read; clipping replaces them with
// new tensors, because a gradient may share its data with another tensor.
//
// An optimizer's state (momentum buffers, Adam's moments, its step count) is
// exported as named tensors so a training checkpoint can store it in
// optimizer.safetensors and a resumed run continue exactly where it stopped.
// The sources are glassllm/train/optim.cpp; the training loop that uses them is
// train.h.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "glassllm/engine/tensor.h"

namespace glassllm {

/// Tensors by name, as GlassLM::named_parameters() returns them.
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

/// What every optimizer does: one update of its parameters from their grad(),
/// and its state as named tensors.
class Optimizer {
 public:
  virtual ~Optimizer() = default;
  /// "sgd" or "adamw".
  virtual const char* name() const = 0;
  /// Learning rate of the next step(); the training loop sets it from the
  /// schedule (lr_at) before each step.
  double lr = 1e-3;
  /// One update of every parameter from its gradient. A parameter without a
  /// gradient is skipped (as PyTorch skips p.grad is None). Throws
  /// std::invalid_argument if a gradient's shape or dtype differs from its
  /// parameter's.
  virtual void step() = 0;
  /// Number of step() calls so far.
  std::size_t steps_taken() const { return t_; }
  /// The state: "step" (shape (1,), float64) and one or two buffers per
  /// parameter, named "<buffer>.<parameter name>", in the parameter's dtype.
  virtual NamedTensors state() const = 0;
  /// Restores a state() (a copy; the tensors given are not kept). Throws
  /// std::invalid_argument naming a missing tensor or a wrong shape/dtype.
  virtual void load_state(const NamedTensors& state) = 0;
  /// Forgets every parameter's gradient (PyTorch's zero_grad(set_to_none=True)).
  void zero_grad();
  /// The parameters it updates, by name.
  const NamedTensors& params() const { return params_; }

 protected:
  explicit Optimizer(NamedTensors params, double lr)
      : lr(lr), params_(std::move(params)) {}
  NamedTensors params_;
  std::size_t t_ = 0;  // steps taken
};

/// Stochastic gradient descent with momentum (torch.optim.SGD, dampening 0,
/// not Nesterov). With g the gradient, at step t:
///   g = g + weight_decay * w            (L2, added to the gradient as PyTorch's SGD
///   does) buf = g                   at t = 1 buf = momentum * buf + g  after w = w - lr
///   * buf                    (momentum 0: w = w - lr * g, no buffer)
/// weight_decay applies to every parameter.
///   SGD opt(model.named_parameters(), /*lr=*/0.1, /*momentum=*/0.9);
class SGD : public Optimizer {
 public:
  SGD(NamedTensors params, double lr, double momentum = 0.0, double weight_decay = 0.0);
  const char* name() const override { return "sgd"; }
  double momentum, weight_decay;
  void step() override;
  /// "step" and "momentum_buffer.<name>" (once step() has run with momentum).
  NamedTensors state() const override;
  void load_state(const NamedTensors& state) override;

 private:
  std::vector<Tensor> buf_;  // one per parameter; undefined until the first step
};

/// Adam with decoupled weight decay (torch.optim.AdamW, amsgrad off). With g
/// the gradient, at step t (from 1):
///   w = w - lr * weight_decay * w       (decoupled: not part of g, not scaled by Adam)
///   m = beta1 * m + (1 - beta1) * g
///   v = beta2 * v + (1 - beta2) * g^2
///   w = w - (lr / (1 - beta1^t)) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
/// The last line is Adam's bias-corrected m_hat / (sqrt(v_hat) + eps), written
/// as PyTorch computes it.
///
/// Defaults: beta2 = 0.95, not Adam's 0.999. v then averages over about 20
/// steps instead of 1,000, so it follows the gradient's scale as it shrinks
/// during a short run; a stale, too-large v would slow learning, a stale,
/// too-small one (after a quiet stretch) would let one large gradient make a
/// huge step. GPT-3, Llama and nanoGPT train with 0.95 for this reason.
///
/// Weight decay applies only to parameters with two or more axes (the
/// projections, the embedding and lm_head), never to the RMSNorm weights:
/// pulling a norm's scale toward 0 would shrink its whole output, not
/// regularise it. This is nanoGPT's rule (decay iff p.dim() >= 2).
///   AdamW opt(model.named_parameters(), /*lr=*/1e-3);
class AdamW : public Optimizer {
 public:
  AdamW(NamedTensors params, double lr, double beta1 = 0.9, double beta2 = 0.95,
        double eps = 1e-8, double weight_decay = 0.1);
  const char* name() const override { return "adamw"; }
  double beta1, beta2, eps, weight_decay;
  void step() override;
  /// "step", "exp_avg.<name>" (m) and "exp_avg_sq.<name>" (v), PyTorch's names.
  NamedTensors state() const override;
  void load_state(const NamedTensors& state) override;
  /// Whether weight decay applies to this parameter (it has >= 2 axes).
  static bool decays(const Tensor& param) { return param.ndim() >= 2; }

 private:
  std::vector<Tensor> m_, v_;  // one per parameter, zeros at first
};

/// Clips gradients by their global norm, as torch.nn.utils.clip_grad_norm_:
///   norm = sqrt(sum over every parameter of sum(grad^2))
///   if max_norm / (norm + 1e-6) < 1: every grad = grad * max_norm / (norm + 1e-6)
/// Returns the norm *before* clipping (what to log). The clipped gradients
/// are new tensors that replace grad(); the old ones are not written.
/// max_norm <= 0 only measures. Parameters without a gradient are skipped.
/// A non-finite norm (a nan or inf gradient) is returned and nothing is
/// scaled.
///   double norm = clip_grad_norm(params, 1.0);
double clip_grad_norm(const std::vector<Tensor>& params, double max_norm);
double clip_grad_norm(const NamedTensors& params, double max_norm);

/// The learning rate at `step` (counted from 0): linear warm-up over the
/// first `warmup` steps, then a cosine from base_lr down to
/// min_lr = base_lr * min_lr_ratio at step `total`, and min_lr after it:
///   step < warmup:           base_lr * (step + 1) / warmup
///   warmup <= step < total:  min_lr + (base_lr - min_lr) * (1 + cos(pi * p)) / 2,
///                            p = (step - warmup) / (total - warmup)
///   step >= total:           min_lr
///   double lr = lr_at(step, 1e-3, 100, 2000, 0.1);
double lr_at(std::size_t step, double base_lr, std::size_t warmup, std::size_t total,
             double min_lr_ratio);

}  // namespace glassllm
