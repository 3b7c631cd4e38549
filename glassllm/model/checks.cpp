// checks.cpp: the equivalence checks of checks.h.
#include "glassllm/model/checks.h"

#include <cmath>

#include "glassllm/engine/gradcheck.h"
#include "glassllm/engine/ops.h"

namespace glassllm {

namespace {

// Every check runs in float64, so both are float64 arrays: read in place (a
// float64 copy of a SmolLM2-sized embedding gradient is 226 MB).
double max_abs_diff(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape())
    throw std::logic_error("check: shapes " + shape_str(a.shape()) + " and " +
                           shape_str(b.shape()) + " differ");
  const double* x = a.data<double>();
  const double* y = b.data<double>();
  // A nan anywhere makes the difference nan, so the check fails: std::max
  // alone would skip it (every comparison with nan is false) and report 0.
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = std::fabs(x[i] - y[i]);
    if (std::isnan(d)) return d;
    m = std::max(m, d);
  }
  return m;
}

CheckLine line(std::string name, std::string detail, double diff, double tol) {
  return {std::move(name), std::move(detail), diff, tol, diff <= tol};
}

// Prefill `prompt_len` tokens, then decode the rest one at a time; returns the
// logits of every position, [1, n, vocab], assembled from the steps.
Tensor incremental_logits(const GlassLM& m, const std::vector<std::int64_t>& tokens,
                          std::size_t prompt_len, CacheMode mode) {
  Cache cache = m.new_cache(mode);
  std::vector<Tensor> parts;
  std::vector<std::int64_t> prompt(tokens.begin(),
                                   tokens.begin() + std::ptrdiff_t(prompt_len));
  parts.push_back(m.forward(prompt, &cache, 0));
  for (std::size_t i = prompt_len; i < tokens.size(); ++i)
    parts.push_back(m.forward(std::vector<std::int64_t>{tokens[i]}, &cache, i));
  return concat(parts, 1);
}

// repeat_kv == grouped: the logits and the gradient of every weight of the
// loss, through each path.
CheckLine paths_agree(const GlassLM& m, const std::vector<std::int64_t>& tokens,
                      const std::vector<std::int64_t>& targets) {
  const std::size_t n = tokens.size();
  auto run = [&](Attention path, std::vector<Tensor>& grads) {
    GlassLM g = m.to(DType::float64);  // fresh weights: their own gradients
    g.attention = path;
    auto params = g.named_parameters();
    for (auto& [name, w] : params) w.requires_grad_();
    Tensor logits = g.forward(tokens);
    Tensor loss = cross_entropy(logits, targets);
    loss.backward();
    for (auto& [name, w] : params) grads.push_back(w.grad());
    return logits.detach();
  };
  std::vector<Tensor> g_ref, g_grp;
  Tensor l_ref = run(Attention::repeat_kv, g_ref), l_grp = run(Attention::grouped, g_grp);
  double diff = max_abs_diff(l_ref, l_grp);
  for (std::size_t i = 0; i < g_ref.size(); ++i)
    if (!std::isnan(diff)) diff = std::max(diff, max_abs_diff(g_ref[i], g_grp[i]));
  return line("repeat_kv == grouped",
              std::to_string(n) + " tokens, logits and " + std::to_string(g_ref.size()) +
                  " weight gradients",
              diff, 1e-10);
}

// A tiny model of the same shape family, every weight checked against
// central differences of the loss.
CheckLine whole_model_gradcheck(std::uint64_t seed) {
  Config tiny;
  tiny.vocab_size = 7;
  tiny.d_model = 8;
  tiny.n_layers = 2;
  tiny.n_heads = 2;
  tiny.n_kv_heads = 1;
  tiny.d_ff = 12;
  tiny.max_len = 6;
  GlassLM t(tiny, seed, DType::float64);
  std::vector<std::int64_t> tt{1, 5, 2, 6, 0}, tg{5, 2, 6, 0, 3};
  std::vector<std::string> names;
  std::vector<Tensor> weights;
  for (auto& [name, w] : t.named_parameters()) {
    names.push_back(name);
    weights.push_back(w);
  }
  GradCheckResult r = gradcheck(
      [&](const std::vector<Tensor>& inputs) {
        for (std::size_t i = 0; i < inputs.size(); ++i) t.parameter(names[i]) = inputs[i];
        return t.loss({tt}, {tg});
      },
      weights, GradCheckOptions{}, "model");
  double worst = 0;
  for (const auto& in : r.inputs) worst = std::max(worst, in.max_abs_err);
  CheckLine l = line("whole-model gradient check",
                     "tiny config, 2 layers, all " + std::to_string(weights.size()) +
                         " weights, max abs err",
                     worst, GradCheckOptions{}.atol);
  l.passed = r.passed;
  return l;
}

}  // namespace

std::vector<CheckLine> check_model(const GlassLM& model, const ModelCheckOptions& opt) {
  const Config& cfg = model.config();
  // Compared without adding first: prompt_len + steps could wrap around.
  if (opt.prompt_len == 0 || opt.prompt_len > cfg.max_len ||
      opt.steps > cfg.max_len - opt.prompt_len)
    throw std::invalid_argument("check: prompt length " + std::to_string(opt.prompt_len) +
                                " + steps " + std::to_string(opt.steps) +
                                " must be between 1 and max_len " +
                                std::to_string(cfg.max_len));
  const std::size_t n = opt.prompt_len + opt.steps;
  GlassLM m = model.to(DType::float64);
  Rng rng(opt.seed);
  std::vector<std::int64_t> tokens(n), targets(n);
  for (auto& t : tokens) t = std::int64_t(rng.randint(cfg.vocab_size));
  for (auto& t : targets) t = std::int64_t(rng.randint(cfg.vocab_size));
  std::string split = "prompt " + std::to_string(opt.prompt_len) + " + " +
                      std::to_string(opt.steps) + " decode steps";
  std::vector<CheckLine> lines;

  {
    no_grad guard;
    Tensor full = m.forward(tokens);
    Tensor inc = incremental_logits(m, tokens, opt.prompt_len, CacheMode::concat);
    lines.push_back(line("incremental == full", split + ", every logit",
                         max_abs_diff(inc, full), 1e-10));
  }

  lines.push_back(paths_agree(m, tokens, targets));

  {
    no_grad guard;
    Tensor a = incremental_logits(m, tokens, opt.prompt_len, CacheMode::concat);
    Tensor b = incremental_logits(m, tokens, opt.prompt_len, CacheMode::preallocated);
    lines.push_back(line("concat cache == preallocated cache", split + ", every logit",
                         max_abs_diff(a, b), 1e-10));
  }

  lines.push_back(whole_model_gradcheck(opt.seed));
  return lines;
}

}  // namespace glassllm
