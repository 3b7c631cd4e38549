// generate.cpp: GlassLM::generate, decoding one token at a time through the
// K/V cache: prefill the prompt, then pick the next token from the last row
// of logits (greedy argmax, or a draw from softmax(logits / temperature)
// among the top_k), feed it back, and start again from the last max_len
// tokens when the cache is full.
#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <stdexcept>

#include "glassllm/model/model.h"

namespace glassllm {

namespace {

// The last row of logits [1, T, V], as doubles.
std::vector<double> last_logits(const Tensor& logits) {
  const std::size_t V = logits.dim(-1), offset = logits.size() - V;
  std::vector<double> row(V);
  if (logits.dtype() == DType::float32)
    std::copy_n(logits.data<float>() + offset, V, row.begin());
  else
    std::copy_n(logits.data<double>() + offset, V, row.begin());
  return row;
}

// argmax, the lowest id among equal maxima.
std::int64_t greedy(const std::vector<double>& logits) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < logits.size(); ++i)
    if (logits[i] > logits[best]) best = i;
  return std::int64_t(best);
}

// A draw from softmax(logits / temperature), restricted to the top_k largest
// logits (all when top_k is 0). Ties in the top-k cut keep the lower ids.
std::int64_t sample(const std::vector<double>& logits, double temperature,
                    std::size_t top_k, std::mt19937_64& rng) {
  std::vector<std::size_t> order(logits.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return logits[a] > logits[b]; });
  if (top_k > 0 && top_k < order.size()) order.resize(top_k);
  // p_i = exp((z_i - z_max) / temperature) / sum; z_max = logits[order[0]].
  std::vector<double> weight(order.size());
  double total = 0;
  for (std::size_t i = 0; i < order.size(); ++i)
    total += weight[i] = std::exp((logits[order[i]] - logits[order[0]]) / temperature);
  double u = std::uniform_real_distribution<double>(0.0, total)(rng);
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (u < weight[i]) return std::int64_t(order[i]);
    u -= weight[i];
  }
  return std::int64_t(order.back());  // u rounded past the end: the last candidate
}

}  // namespace

std::vector<std::int64_t> GlassLM::generate(const std::vector<std::int64_t>& prompt,
                                            const GenerateOptions& options) const {
  if (prompt.empty()) throw std::invalid_argument("generate: the prompt is empty");
  for (std::size_t i = 0; i < prompt.size(); ++i)
    if (prompt[i] < 0 || prompt[i] >= std::int64_t(cfg_.vocab_size))
      throw std::invalid_argument("generate: token id " + std::to_string(prompt[i]) +
                                  " at prompt position " + std::to_string(i) +
                                  " is out of range [0, " +
                                  std::to_string(cfg_.vocab_size) + ")");
  if (!(options.temperature >= 0))
    throw std::invalid_argument("generate: temperature must be >= 0, got " +
                                std::to_string(options.temperature));
  std::vector<std::int64_t> tokens = prompt;
  if (options.max_new_tokens == 0) return tokens;
  std::optional<no_grad> guard;
  if (!options.record_graph) guard.emplace();
  std::mt19937_64 rng(options.seed);
  const std::size_t L = cfg_.max_len;

  // (Re)fills the cache from the last max_len tokens, positions from 0.
  Cache cache;
  auto prefill = [&] {
    cache = new_cache(options.cache_mode);
    std::size_t from = tokens.size() > L ? tokens.size() - L : 0;
    std::vector<std::int64_t> window(tokens.begin() + std::ptrdiff_t(from), tokens.end());
    return forward(window, &cache, 0);
  };

  Tensor logits = prefill();
  for (std::size_t step = 0; step < options.max_new_tokens; ++step) {
    std::vector<double> z = last_logits(logits);
    std::int64_t next = options.temperature == 0
                            ? greedy(z)
                            : sample(z, options.temperature, options.top_k, rng);
    tokens.push_back(next);
    if (options.on_step) options.on_step(logits, next);
    const bool eos = std::find(options.eos_token_ids.begin(), options.eos_token_ids.end(),
                               next) != options.eos_token_ids.end();
    if (eos || (options.stop && options.stop(tokens))) break;  // the answer has ended
    if (step + 1 == options.max_new_tokens) break;  // no logits needed after the last
    std::size_t held = cache[0].length();
    if (held == L)
      logits = prefill();  // full: rerun the last max_len tokens from position 0
    else
      logits = forward({next}, &cache, held);  // [1, 1, V]
  }
  return tokens;
}

}  // namespace glassllm
