// evaluate.cpp: held-out evaluation (train.h's evaluate and EvalResult): the
// mean loss over fixed held-out batches and, for the synthetic tasks,
// exact-match accuracy per task; and sample_predictions, held-out questions answered by
// greedy generation. The training loop (train.cpp) calls it every eval_every steps;
// `glassllm eval` calls it on a saved checkpoint.
#include <algorithm>
#include <cstdio>
#include <map>

#include "glassllm/engine/ops.h"
#include "glassllm/train/fixed.h"
#include "glassllm/train/train.h"

namespace glassllm {

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

std::string EvalResult::split_summary() const {
  std::string s;
  for (const auto& [label, kind] :
       {std::pair{"ASCII only", &ascii_right}, std::pair{"accented", &accented_right}}) {
    if (kind->empty()) continue;
    s += std::string(label) + ":";
    bool first = true;
    for (const auto& [task, ct] : *kind) {
      s += std::string(first ? " " : ", ") + task + " " +
           fixed(100 * double(ct.first) / double(ct.second), 1) + "% of " +
           std::to_string(ct.second);
      first = false;
    }
    s += "\n";
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
      auto& kind = e.accented ? r.accented_right[e.task] : r.ascii_right[e.task];
      kind.first += ok;
      kind.second += 1;
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

std::vector<SamplePrediction> sample_predictions(const GlassLM& model, const Task& task,
                                                 const Tokenizer& tokenizer,
                                                 std::uint64_t seed,
                                                 std::size_t per_task) {
  std::vector<SamplePrediction> picked;
  if (!task.synthetic() || per_task == 0) return picked;
  std::map<std::string, std::size_t> taken;  // task -> examples picked so far
  const std::size_t T = model.config().max_len;
  // Held-out batch 0, the first one evaluate() scores, so the examples shown
  // are among those counted.
  Batch b = make_batch(task, tokenizer, seed, 0, 16, T, Split::heldout);
  for (const ExampleSpan& e : b.examples) {
    if (taken[e.task] == per_task) continue;
    ++taken[e.task];
    // The example's line up to and including its '=' (position e.first).
    const std::vector<std::int64_t>& row = b.tokens[e.row];
    std::size_t start = e.first;
    while (start > 0 && tokenizer.token_text(row[start - 1]) != "\n") --start;
    SamplePrediction p;
    p.task = e.task;
    const std::vector<std::int64_t> prompt(row.begin() + std::ptrdiff_t(start),
                                           row.begin() + std::ptrdiff_t(e.first) + 1);
    p.prompt = tokenizer.decode(prompt);
    // The expected answer: the targets up to, not including, the end-of-text.
    for (std::size_t i = e.first; i + 1 < e.last; ++i)
      p.expected += tokenizer.token_text(b.targets[e.row][i]);
    GenerateOptions opt;
    opt.max_new_tokens = e.last - e.first + 4;  // room to show an answer too long
    if (tokenizer.eos_id()) opt.eos_token_ids = {*tokenizer.eos_id()};
    std::vector<std::int64_t> out = model.generate(prompt, opt);
    p.ended = !opt.eos_token_ids.empty() && out.back() == opt.eos_token_ids[0];
    if (p.ended) out.pop_back();
    p.answer = tokenizer.decode(std::vector<std::int64_t>(
        out.begin() + std::ptrdiff_t(prompt.size()), out.end()));
    p.right = p.ended && p.answer == p.expected;
    picked.push_back(std::move(p));
  }
  return picked;
}

std::string SamplePrediction::line() const {
  std::string s = prompt + " -> " + answer;
  if (right) return s + "   right";
  return s + (ended ? "" : "...") + "   wrong, expected " + expected;
}

}  // namespace glassllm
