// evaluate.cpp: held-out evaluation (train.h's evaluate and EvalResult): the
// mean loss over fixed held-out batches and, for the synthetic tasks,
// exact-match accuracy per task. The training loop (train.cpp) calls it every
// eval_every steps; `glassllm eval` calls it on a saved checkpoint.
#include <algorithm>
#include <cstdio>
#include <map>

#include "glassllm/engine/ops.h"
#include "glassllm/train/train.h"

namespace glassllm {

namespace {

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace

std::string EvalResult::summary() const {
  std::string s = "loss " + fixed(loss, 4);
  if (accuracy) {
    s += " | accuracy " + fixed(100 * *accuracy, 1) + "% (";
    bool first = true;
    for (const auto& [task, acc] : task_accuracy) {
      s += (first ? "" : ", ") + task + " " + fixed(100 * acc, 1) + "%";
      first = false;
    }
    s += ")";
  }
  return s;
}

EvalResult evaluate(const GlassLM& model, const Task& task, const Tokenizer& tokenizer,
                    std::uint64_t seed, std::size_t batches, std::size_t batch_size) {
  no_grad guard;
  EvalResult r;
  double loss_sum = 0;
  std::map<std::string, std::pair<std::size_t, std::size_t>>
      right;  // task -> (correct, total)
  for (const std::string& p : task.parts()) right[p] = {0, 0};
  const std::size_t T = model.config().max_len;
  for (std::size_t i = 0; i < batches; ++i) {
    Batch b = make_batch(task, tokenizer, seed, i, batch_size, T, Split::heldout);
    Tensor logits = model.forward(b.tokens);  // [B, T, V]
    std::vector<std::int64_t> flat;
    for (const auto& row : b.targets) flat.insert(flat.end(), row.begin(), row.end());
    const std::size_t n = b.counted();
    if (n == 0) continue;
    loss_sum += cross_entropy(logits, flat, -100).item() * double(n);
    r.targets += n;
    const std::size_t V = logits.dim(-1);
    std::vector<double> values = logits.to_vector();
    auto argmax = [&](std::size_t row, std::size_t pos) {
      const double* z = values.data() + (row * T + pos) * V;
      return std::int64_t(std::max_element(z, z + V) - z);
    };
    for (const ExampleSpan& e : b.examples) {
      bool ok = true;
      for (std::size_t p = e.first; p < e.last && ok; ++p)
        ok = argmax(e.row, p) == b.targets[e.row][p];
      right[e.task].first += ok;
      right[e.task].second += 1;
    }
  }
  r.loss = r.targets ? loss_sum / double(r.targets) : 0.0;
  if (task.synthetic()) {
    std::size_t correct = 0;
    for (const auto& [name, ct] : right) {
      correct += ct.first;
      r.examples += ct.second;
      r.task_accuracy[name] = ct.second ? double(ct.first) / double(ct.second) : 0.0;
    }
    r.accuracy = r.examples ? double(correct) / double(r.examples) : 0.0;
  }
  return r;
}

}  // namespace glassllm
