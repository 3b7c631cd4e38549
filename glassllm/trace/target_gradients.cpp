// target_gradients.cpp: the loss of a target continuation and its gradient by
// input position (target_gradients.h says what and why).
#include "glassllm/trace/target_gradients.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "glassllm/engine/ops.h"
#include "glassllm/model/forward_observer.h"

namespace glassllm {

namespace {

// Keeps the residual stream entering block 0 -- the token embeddings
// [1, T, d_model] -- with its gradient retained. The model reports it through
// the same hook the Tracer uses; the other hooks have nothing to do here.
struct EmbeddingCatcher final : ForwardObserver {
  Tensor embeddings;
  ForwardObserver* previous = trace::active;
  EmbeddingCatcher() { trace::active = this; }
  ~EmbeddingCatcher() override { trace::active = previous; }
  void begin_step(const GlassLM&, const std::vector<std::int64_t>&, std::size_t,
                  std::size_t, std::size_t, const Cache*) override {}
  void end_step(const Tensor&, const Cache*) override {}
  void abort_step() override {}
  void set_layer(int) override {}
  void record(const char* name, std::size_t layer, const Tensor& x,
              const Shape&) override {
    if (layer != 0 || std::string(name) != "resid.in") return;
    embeddings = x;
    if (embeddings.requires_grad()) embeddings.retain_grad();
  }
  void record_scores(std::size_t, const Tensor&, const Shape&, std::size_t,
                     std::size_t) override {}
};

}  // namespace

TargetGradients target_gradients(
    const GlassLM& model, const std::vector<std::int64_t>& prompt,
    const std::vector<std::int64_t>& target,
    const std::function<std::string(std::int64_t)>& token_text) {
  if (prompt.empty()) throw std::invalid_argument("gradients: the prompt is empty");
  if (target.empty()) throw std::invalid_argument("gradients: the target is empty");
  const std::size_t max_len = model.config().max_len;
  // The forward reads prompt + target[:-1]; target's last token is only predicted.
  std::vector<std::int64_t> input = prompt;
  input.insert(input.end(), target.begin(), target.end() - 1);
  if (input.size() > max_len)
    throw std::invalid_argument(
        "gradients: the prompt (" + std::to_string(prompt.size()) +
        " tokens) and target (" + std::to_string(target.size()) + ") need " +
        std::to_string(input.size()) + " positions; the model reads at most " +
        std::to_string(max_len));
  // Position t predicts input[t + 1]: the prompt's positions but its last
  // predict nothing we score (-100 is ignored by cross_entropy).
  std::vector<std::int64_t> labels(input.size(), -100);
  for (std::size_t i = 0; i < target.size(); ++i)
    labels[prompt.size() - 1 + i] = target[i];

  EmbeddingCatcher catcher;
  Tensor logits = model.forward(input);  // [1, T, vocab_size]
  Tensor loss = cross_entropy(logits, labels, -100);
  if (!catcher.embeddings.defined() || !catcher.embeddings.requires_grad())
    throw std::logic_error("gradients: the forward recorded no graph (grad mode is off)");
  loss.backward();

  TargetGradients out;
  out.prompt_length = prompt.size();
  out.loss = loss.item();
  for (std::int64_t id : input) out.tokens.push_back({id, token_text(id)});
  for (std::int64_t id : target) out.target.push_back({id, token_text(id)});
  // -log p(target[i]) = logsumexp(row) - row[target[i]], from the logits row
  // that predicts it, in double.
  const std::vector<double> z = logits.to_vector();
  const std::size_t V = model.config().vocab_size;
  for (std::size_t i = 0; i < target.size(); ++i) {
    const double* row = z.data() + (prompt.size() - 1 + i) * V;
    double top = row[0], sum = 0;
    for (std::size_t v = 1; v < V; ++v) top = std::max(top, row[v]);
    for (std::size_t v = 0; v < V; ++v) sum += std::exp(row[v] - top);
    out.token_loss.push_back(top + std::log(sum) - row[target[i]]);
  }
  const std::vector<double> g = catcher.embeddings.grad().to_vector();  // [1, T, d]
  const std::size_t d = model.config().d_model;
  for (std::size_t t = 0; t < input.size(); ++t) {
    double sq = 0;
    for (std::size_t k = 0; k < d; ++k) sq += g[t * d + k] * g[t * d + k];
    out.grad_norm.push_back(std::sqrt(sq));
  }
  for (auto& [name, w] : model.named_parameters()) w.zero_grad();
  return out;
}

std::string to_json(const TargetGradients& g) {
  nlohmann::ordered_json j;
  j["format"] = "glassllm-gradients";
  j["prompt_length"] = g.prompt_length;
  j["loss"] = g.loss;
  j["tokens"] = nlohmann::ordered_json::array();
  for (std::size_t t = 0; t < g.tokens.size(); ++t)
    j["tokens"].push_back({{"id", g.tokens[t].id},
                           {"text", g.tokens[t].text},
                           {"grad_norm", g.grad_norm[t]}});
  j["target"] = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < g.target.size(); ++i)
    j["target"].push_back(
        {{"id", g.target[i].id}, {"text", g.target[i].text}, {"loss", g.token_loss[i]}});
  // Token texts may hold bytes that are not UTF-8 on their own: replace them.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace glassllm
