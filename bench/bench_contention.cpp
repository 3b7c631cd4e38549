// bench_contention.cpp: one of `glassllm bench`'s measurements: the training
// step and one-token decoding of bench.cpp's model figures (default config,
// float32, the default thread count) while a thread of the benchmark's own
// loops without pause, as another program on the machine would, in rounds
// that alternate with the same figures measured quietly. bench.cpp prints
// them.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "bench/bench.h"
#include "glassllm/engine/ops.h"
#include "glassllm/io/tokenizer.h"
#include "glassllm/model/model.h"

namespace glassllm::cli {

namespace {

using Clock = std::chrono::steady_clock;

// A thread that keeps one core busy for as long as it lives.
class BusyLoop {
 public:
  BusyLoop()
      : thread_([this] {
          volatile unsigned long spins = 0;
          while (!stop_.load(std::memory_order_relaxed)) spins = spins + 1;
        }) {}
  ~BusyLoop() {
    stop_ = true;
    thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace

// The same step and decode as model_figures in bench.cpp: a training step
// over 16 x 128 tokens, and 120 decode steps after an 8-token prompt through
// the concatenating cache, float32.
ContentionFigures contention(int runs) {
  Config cfg;
  cfg.vocab_size = Tokenizer().vocab_size();
  GlassLM model(cfg, 0, DType::float32);
  Rng rng(7);
  auto random_tokens = [&](std::size_t rows, std::size_t len) {
    return random_token_batch(rng, rows, len, cfg.vocab_size);
  };
  TokenBatch prompt128 = random_tokens(1, cfg.max_len);
  TokenBatch tokens = random_tokens(16, cfg.max_len),
             targets = random_tokens(16, cfg.max_len);
  auto decode_seconds = [&] {
    no_grad guard;
    std::vector<std::int64_t> prompt(prompt128[0].begin(), prompt128[0].begin() + 8);
    Cache cache = model.new_cache(CacheMode::concat);
    model.forward(prompt, &cache, 0);
    auto start = Clock::now();
    for (std::size_t step = 0; step < 120; ++step)
      model.forward({prompt128[0][8 + step]}, &cache, 8 + step);
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  auto step = [&] {
    Tensor loss = model.loss(tokens, targets);
    loss.backward();
    for (auto& [name, w] : model.named_parameters()) w.zero_grad();
  };
  for (auto& [name, w] : model.named_parameters()) w.requires_grad_();

  // Rounds alternate quiet and busy, so that a change in the machine's load
  // (other programs) reaches both alike and the ratios compare like with like.
  ContentionFigures f;
  std::vector<double> decode, train, decode_quiet, train_quiet;
  decode_seconds();  // warm up
  step();
  for (int r = 0; r < std::max(5, runs / 2); ++r) {
    decode_quiet.push_back(decode_seconds());
    train_quiet.push_back(median_seconds(step, 1));
    BusyLoop busy;
    decode.push_back(decode_seconds());
    train.push_back(median_seconds(step, 1));
  }
  f.decode_tokens_per_s = 120.0 / median(decode);
  f.train_step_ms = 1e3 * median(train);
  f.decode_quiet_tokens_per_s = 120.0 / median(decode_quiet);
  f.train_step_quiet_ms = 1e3 * median(train_quiet);
  return f;
}

}  // namespace glassllm::cli
