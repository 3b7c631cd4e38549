// optim.cpp: SGD, AdamW, clip_grad_norm and lr_at (see optim.h for the
// formulas). Each update is one plain loop per parameter over its elements,
// reading the gradient and writing the weight (and the optimizer's buffers)
// in place: no tensors are allocated and no graph is recorded.
#include "glassllm/train/optim.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

#include "glassllm/engine/ops.h"

namespace glassllm {

namespace {

// The gradient of params[i], checked against its parameter.
Tensor checked_grad(const char* op, const std::string& name, const Tensor& w) {
  Tensor g = w.grad();
  if (g.defined() && (g.shape() != w.shape() || g.dtype() != w.dtype()))
    throw std::invalid_argument(std::string(op) + ": gradient of '" + name + "' is " +
                                shape_str(g.shape()) + " " + dtype_name(g.dtype()) +
                                " but the parameter is " + shape_str(w.shape()) + " " +
                                dtype_name(w.dtype()));
  return g;
}

// The elements of a parameter, a gradient or a state tensor, for reading or
// writing in place (the handles are const; the arrays are the optimizer's).
template <class T>
T* elements(Tensor t) {
  return t.mutable_data<T>();
}

Tensor copy_of(const Tensor& t) {
  Tensor c = zeros_like(t);
  dispatch(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    std::copy_n(elements<T>(t), t.size(), elements<T>(c));
  });
  return c;
}

Tensor step_tensor(std::size_t t) {
  return from_vector({double(t)}, {1}, DType::float64);
}

// state[name], checked to have `like`'s shape and dtype; a copy.
Tensor find_state(const char* op, const NamedTensors& state, const std::string& name,
                  const Tensor& like) {
  for (const auto& [n, t] : state) {
    if (n != name) continue;
    if (t.shape() != like.shape() || t.dtype() != like.dtype())
      throw std::invalid_argument(std::string(op) + ": state '" + name + "' is " +
                                  shape_str(t.shape()) + " " + dtype_name(t.dtype()) +
                                  ", expected " + shape_str(like.shape()) + " " +
                                  dtype_name(like.dtype()));
    return copy_of(t);  // the caller's tensor is not kept
  }
  throw std::invalid_argument(std::string(op) + ": state has no '" + name + "'");
}

std::size_t find_step(const char* op, const NamedTensors& state) {
  Tensor t = find_state(op, state, "step", step_tensor(0));
  return std::size_t(t.item());
}

}  // namespace

void Optimizer::zero_grad() {
  for (auto& [name, w] : params_) w.zero_grad();
}

// ---- SGD
// -------------------------------------------------------------------------------

SGD::SGD(NamedTensors params, double lr, double momentum, double weight_decay)
    : Optimizer(std::move(params), lr), momentum(momentum), weight_decay(weight_decay) {
  buf_.resize(params_.size());
}

void SGD::step() {
  ++t_;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    // Plain references, not a structured binding: clang 14 (the fuzz build)
    // cannot capture a binding in the lambdas below.
    const std::string& name = params_[i].first;
    const Tensor& w = params_[i].second;
    Tensor g = checked_grad("SGD", name, w);
    if (!g.defined()) continue;
    if (momentum != 0 && !buf_[i].defined()) buf_[i] = zeros_like(w);
    const bool first = t_ == 1 || !buf_[i].defined();
    dispatch(w.dtype(), [&](auto zero) {
      using T = decltype(zero);
      const T lr_ = T(lr), mu = T(momentum), wd = T(weight_decay);
      T* wp = elements<T>(w);
      const T* gp = elements<T>(g);
      T* bp = momentum != 0 ? elements<T>(buf_[i]) : nullptr;
      for (std::size_t j = 0, n = w.size(); j < n; ++j) {
        T d = gp[j] + wd * wp[j];  // g + weight_decay * w
        if (bp) d = bp[j] = first ? d : mu * bp[j] + d;
        wp[j] -= lr_ * d;
      }
    });
  }
}

NamedTensors SGD::state() const {
  NamedTensors s{{"step", step_tensor(t_)}};
  for (std::size_t i = 0; i < params_.size(); ++i)
    if (buf_[i].defined())
      s.emplace_back("momentum_buffer." + params_[i].first, copy_of(buf_[i]));
  return s;
}

void SGD::load_state(const NamedTensors& state) {
  t_ = find_step("SGD", state);
  for (std::size_t i = 0; i < params_.size(); ++i) {
    buf_[i] = Tensor();
    if (momentum == 0 || t_ == 0) continue;
    buf_[i] = find_state("SGD", state, "momentum_buffer." + params_[i].first,
                         params_[i].second);
  }
}

// ---- AdamW
// -----------------------------------------------------------------------------

AdamW::AdamW(NamedTensors params, double lr, double beta1, double beta2, double eps,
             double weight_decay)
    : Optimizer(std::move(params), lr),
      beta1(beta1),
      beta2(beta2),
      eps(eps),
      weight_decay(weight_decay) {
  for (const auto& [name, w] : params_) {
    m_.push_back(zeros_like(w));
    v_.push_back(zeros_like(w));
  }
}

void AdamW::step() {
  ++t_;
  // Bias corrections: m and v start at 0, so early averages are too small by
  // the factors 1 - beta^t; dividing by them removes that bias.
  const double bias1 = 1 - std::pow(beta1, double(t_));
  const double bias2 = 1 - std::pow(beta2, double(t_));
  const double step_size = lr / bias1;
  const double sqrt_bias2 = std::sqrt(bias2);
  for (std::size_t i = 0; i < params_.size(); ++i) {
    // Plain references, not a structured binding: clang 14 (the fuzz build)
    // cannot capture a binding in the lambdas below.
    const std::string& name = params_[i].first;
    const Tensor& w = params_[i].second;
    Tensor g = checked_grad("AdamW", name, w);
    if (!g.defined()) continue;
    const double decay = decays(w) ? 1 - lr * weight_decay : 1.0;
    dispatch(w.dtype(), [&](auto zero) {
      using T = decltype(zero);
      const T b1 = T(beta1), b2 = T(beta2), e = T(eps), keep = T(decay),
              ss = T(step_size), sb2 = T(sqrt_bias2);
      T* wp = elements<T>(w);
      T* mp = elements<T>(m_[i]);
      T* vp = elements<T>(v_[i]);
      const T* gp = elements<T>(g);
      // One fused pass: decay, both moments, the update.
      for (std::size_t j = 0, n = w.size(); j < n; ++j) {
        const T gj = gp[j];
        mp[j] = b1 * mp[j] + (T(1) - b1) * gj;
        vp[j] = b2 * vp[j] + (T(1) - b2) * gj * gj;
        wp[j] = wp[j] * keep - ss * mp[j] / (std::sqrt(vp[j]) / sb2 + e);
      }
    });
  }
}

NamedTensors AdamW::state() const {
  NamedTensors s{{"step", step_tensor(t_)}};
  for (std::size_t i = 0; i < params_.size(); ++i) {
    s.emplace_back("exp_avg." + params_[i].first, copy_of(m_[i]));
    s.emplace_back("exp_avg_sq." + params_[i].first, copy_of(v_[i]));
  }
  return s;
}

void AdamW::load_state(const NamedTensors& state) {
  t_ = find_step("AdamW", state);
  for (std::size_t i = 0; i < params_.size(); ++i) {
    m_[i] = find_state("AdamW", state, "exp_avg." + params_[i].first, params_[i].second);
    v_[i] =
        find_state("AdamW", state, "exp_avg_sq." + params_[i].first, params_[i].second);
  }
}

// ---- clipping
// --------------------------------------------------------------------------

double clip_grad_norm(const std::vector<Tensor>& params, double max_norm) {
  double sum_sq = 0;  // accumulated in double whatever the dtype
  for (const Tensor& w : params) {
    Tensor g = w.grad();
    if (!g.defined()) continue;
    dispatch(g.dtype(), [&](auto zero) {
      using T = decltype(zero);
      const T* gp = elements<T>(g);
      double s = 0;
      for (std::size_t j = 0, n = g.size(); j < n; ++j)
        s += double(gp[j]) * double(gp[j]);
      sum_sq += s;
    });
  }
  const double norm = std::sqrt(sum_sq);
  if (max_norm <= 0 || !std::isfinite(norm)) return norm;
  const double scale = max_norm / (norm + 1e-6);
  if (scale >= 1) return norm;
  no_grad guard;
  for (const Tensor& w : params) {
    Tensor g = w.grad();
    if (!g.defined()) continue;
    // A new tensor, never g scaled in place: g's data may be shared (a view
    // of another gradient, or an op's dout passed straight through).
    Tensor(w).set_grad(g * scale);
  }
  return norm;
}

double clip_grad_norm(const NamedTensors& params, double max_norm) {
  std::vector<Tensor> ps;
  for (const auto& [name, w] : params) ps.push_back(w);
  return clip_grad_norm(ps, max_norm);
}

// ---- the schedule
// ----------------------------------------------------------------------

double lr_at(std::size_t step, double base_lr, std::size_t warmup, std::size_t total,
             double min_lr_ratio) {
  const double min_lr = base_lr * min_lr_ratio;
  if (step < warmup) return base_lr * double(step + 1) / double(warmup);
  if (step >= total) return min_lr;
  const double p = double(step - warmup) / double(total - warmup);  // 0 .. 1
  return min_lr + (base_lr - min_lr) * (1 + std::cos(std::numbers::pi * p)) / 2;
}

}  // namespace glassllm
