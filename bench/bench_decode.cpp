// bench_decode.cpp: one of `glassllm bench`'s measurements: decoding a model
// of SmolLM2-135M's exact shape (random weights, float32) one token at a
// time, against the floor set by memory: each new token must read every
// weight once (all 30 layers and the 49152 x 576 lm_head; of the embedding,
// one row), so tokens/s cannot exceed the memory's copy bandwidth divided by
// those bytes. Then the same model with its projections kept in bfloat16
// (weights16.h), half the bytes, against the floor of its own bytes. All are
// measured in the same run, interleaved, so that a noisy neighbour slows
// them alike. bench.cpp prints the figures.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "bench/bench.h"
#include "glassllm/engine/ops.h"
#include "glassllm/fast/blas.h"
#include "glassllm/fast/kernels.h"
#include "glassllm/model/model.h"

namespace glassllm::cli {

using Clock = std::chrono::steady_clock;

namespace {

// SmolLM2-135M's config.json (tests/data/real_configs/smollm2-135m.json):
// 576 wide, 30 layers, 9 query heads sharing 3 K/V heads of 64, MLP 1536,
// vocabulary 49152, tied embeddings (GlassLM holds lm_head as its own copy).
Config smollm2_135m() {
  Config c;
  c.vocab_size = 49152;
  c.d_model = 576;
  c.n_layers = 30;
  c.n_heads = 9;
  c.n_kv_heads = 3;
  c.d_ff = 1536;
  c.max_len = 8192;
  c.rope_theta = 100000;
  return c;
}

// Weights in [-0.02, 0.02) from a cheap integer hash: decode time does not
// depend on the values, and 163 million normal draws would take longer than
// the measurement. Norm weights are 1, as initialised.
GlassLM random_model(const Config& cfg) {
  std::uint64_t state = 0x9E3779B97F4A7C15ull;
  return GlassLM::from_weights(
      cfg, DType::float32, [&](const std::string& name, const Shape& shape) {
        if (name.find("norm") != std::string::npos) return ones(shape);
        Tensor t = zeros(shape);
        float* p = t.mutable_data<float>();
        for (std::size_t i = 0, n = t.size(); i < n; ++i) {
          state = state * 6364136223846793005ull + 1442695040888963407ull;
          p[i] = float(double(state >> 40) / double(1ull << 24) - 0.5) * 0.04f;
        }
        return t;
      });
}

// What one token reads: every weight but the embedding, of which one row
// (weights kept in 16 bits counted at 2 bytes each).
std::size_t bytes_per_token(const GlassLM& model) {
  std::size_t bytes = model.weights16 ? model.weights16->nbytes() : 0;
  for (const auto& [name, w] : model.named_parameters())
    if (w.defined())
      bytes += name == "model.embed_tokens.weight"
                   ? model.config().d_model * sizeof(float)
                   : w.nbytes();
  return bytes;
}

// Copies `bytes` from `from` to `to`, split among `threads` threads, each
// copying its own part: the memory's copy bandwidth, as the products use it.
void copy_in_parallel(const char* from, char* to, std::size_t bytes, int threads) {
  std::vector<std::thread> workers;
  const std::size_t part = bytes / std::size_t(threads);
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([=] {
      const std::size_t begin = std::size_t(t) * part;
      const std::size_t end = t + 1 == threads ? bytes : begin + part;
      std::memcpy(to + begin, from + begin, end - begin);
    });
  for (std::thread& w : workers) w.join();
}

// Sums `threads` parts of `part` floats each, one thread per part: reading
// alone, which is what decoding does to the weights (a copy also writes).
float read_in_parallel(const float* p, std::size_t part, int threads) {
  std::vector<std::thread> workers;
  std::vector<float> sums(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t)
    workers.emplace_back(
        [&, t] { sums[std::size_t(t)] = read_all(p + std::size_t(t) * part, part); });
  for (std::thread& w : workers) w.join();
  return sums[0];
}

// Seconds per token of decoding: a prompt of 8 tokens, then 16 tokens one
// at a time through the cache, as generate does (the cache stays short: the
// weights dominate).
double seconds_per_decoded_token(const GlassLM& model, const Config& cfg) {
  no_grad guard;
  const std::size_t steps = 16;
  Cache cache = model.new_cache();
  std::vector<std::int64_t> prompt{1, 9, 300, 4000, 7, 7, 48000, 9};
  model.forward(prompt, &cache, 0);
  auto start = Clock::now();
  for (std::size_t i = 0; i < steps; ++i)
    model.forward({std::int64_t((i * 7919) % cfg.vocab_size)}, &cache, 8 + i);
  return std::chrono::duration<double>(Clock::now() - start).count() / double(steps);
}

}  // namespace

DecodeFigures smollm2_decode(int runs) {
  const Config cfg = smollm2_135m();
  const GlassLM model = random_model(cfg);
  const GlassLM model16 = keep_in_16_bits(model, WeightType::bf16);
  DecodeFigures f;
  f.threads = blas_info().threads;
  f.weight_bytes_per_token = bytes_per_token(model);
  f.bf16_weight_bytes_per_token = bytes_per_token(model16);

  // A buffer twice the weights' size, far beyond any cache.
  const std::size_t copy_bytes = 2 * f.weight_bytes_per_token;
  std::vector<char> from(copy_bytes, 1), to(copy_bytes, 0);
  auto copy = [&] { copy_in_parallel(from.data(), to.data(), copy_bytes, f.threads); };
  const std::size_t part = copy_bytes / sizeof(float) / std::size_t(f.threads);
  const std::size_t read_bytes = part * std::size_t(f.threads) * sizeof(float);
  volatile float sink = 0;
  auto read = [&] {
    sink = read_in_parallel(reinterpret_cast<const float*>(from.data()), part, f.threads);
  };

  seconds_per_decoded_token(model, cfg);  // warm up
  seconds_per_decoded_token(model16, cfg);
  copy();
  read();
  // The two decodes take turns, 16 tokens each (token by token, the float32
  // model's 538 MB would leave nothing of the bfloat16 model's last reads
  // in the L3 cache, which a decode alone keeps); each run's ratio is taken
  // from two neighbouring timings, and the median of those ratios is the
  // figure, steadier on a shared machine than the ratio of two medians.
  std::vector<double> token_s, bf16_token_s, ratios, copy_s, read_s;
  for (int r = 0; r < runs; ++r) {
    token_s.push_back(seconds_per_decoded_token(model, cfg));
    bf16_token_s.push_back(seconds_per_decoded_token(model16, cfg));
    ratios.push_back(token_s.back() / bf16_token_s.back());
    copy_s.push_back(median_seconds(copy, 1));
    read_s.push_back(median_seconds(read, 1));
  }
  f.tokens_per_s = 1.0 / median(token_s);
  f.bf16_tokens_per_s = 1.0 / median(bf16_token_s);
  f.bf16_over_float32 = median(ratios);
  f.copy_bytes_per_s = double(copy_bytes) / median(copy_s);
  f.read_bytes_per_s = double(read_bytes) / median(read_s);
  f.floor_tokens_per_s = f.copy_bytes_per_s / double(f.weight_bytes_per_token);
  return f;
}

void print_decode(const DecodeFigures& f) {
  std::printf(
      "\nDecoding at SmolLM2-135M's shape (30 layers, d_model 576, 9 query heads, 3 K/V\n"
      "heads, vocab 49152), random float32 weights, %d thread(s), medians\n",
      f.threads);
  std::printf("  decode, one token at a time (tokens/s)          %10.1f\n",
              f.tokens_per_s);
  std::printf("  weights read per token (MB)                     %10.1f\n",
              double(f.weight_bytes_per_token) / 1e6);
  std::printf("  copy bandwidth, memcpy, same threads (GB/s)     %10.2f\n",
              f.copy_bytes_per_s / 1e9);
  std::printf("  floor: bandwidth / weights per token (tokens/s) %10.1f\n",
              f.floor_tokens_per_s);
  std::printf("  decode / floor                                  %10.2f\n",
              f.tokens_per_s / f.floor_tokens_per_s);
  std::printf("  read bandwidth, same threads (GB/s)             %10.2f\n",
              f.read_bytes_per_s / 1e9);
  std::printf("  decode / read floor                             %10.2f\n",
              f.tokens_per_s * double(f.weight_bytes_per_token) / f.read_bytes_per_s);
  const double bf16_read_floor =
      f.read_bytes_per_s / double(f.bf16_weight_bytes_per_token);
  std::printf("The same, projections and lm_head kept in bfloat16 (%s kernel)\n",
              fast::linear16_path());
  std::printf("  decode, one token at a time (tokens/s)          %10.1f\n",
              f.bf16_tokens_per_s);
  std::printf("  weights read per token (MB)                     %10.1f\n",
              double(f.bf16_weight_bytes_per_token) / 1e6);
  std::printf("  read floor: read bandwidth / weights (tokens/s) %10.1f\n",
              bf16_read_floor);
  std::printf("  decode / read floor                             %10.2f\n",
              f.bf16_tokens_per_s / bf16_read_floor);
  const fast::ReadAheadChoice ahead = fast::linear16_read_ahead();
  if (ahead.bytes) {
    std::printf("  W asked for ahead of the loads (bytes)          %10zu\n", ahead.bytes);
    for (std::size_t i = 0; i < ahead.candidates.size(); ++i)
      std::printf("    trials, %5zu bytes ahead (GB/s, median)      %10.2f\n",
                  ahead.candidates[i], ahead.bytes_per_s[i] / 1e9);
    std::printf("    %5zu over %5zu, median of %3zu pairs          %10.2f\n",
                ahead.candidates[1], ahead.candidates[0], ahead.pairs,
                ahead.second_over_first);
  }
  std::printf(
      "  bfloat16 decode / float32 decode, tokens in turns,\n"
      "  median of the runs' ratios                      %10.2f\n",
      f.bf16_over_float32);
}

void print_decode_json(const DecodeFigures& f, nlohmann::json& j) {
  j["decode_smollm2_135m_tokens_per_s"] = f.tokens_per_s;
  j["decode_smollm2_135m_weight_bytes_per_token"] = f.weight_bytes_per_token;
  j["decode_smollm2_135m_copy_bytes_per_s"] = f.copy_bytes_per_s;
  j["decode_smollm2_135m_floor_tokens_per_s"] = f.floor_tokens_per_s;
  j["decode_smollm2_135m_over_floor"] = f.tokens_per_s / f.floor_tokens_per_s;
  j["decode_smollm2_135m_read_bytes_per_s"] = f.read_bytes_per_s;
  j["decode_smollm2_135m_over_read_floor"] =
      f.tokens_per_s * double(f.weight_bytes_per_token) / f.read_bytes_per_s;
  j["decode_smollm2_135m_threads"] = f.threads;
  const double bf16_read_floor =
      f.read_bytes_per_s / double(f.bf16_weight_bytes_per_token);
  j["decode_smollm2_135m_bf16_tokens_per_s"] = f.bf16_tokens_per_s;
  j["decode_smollm2_135m_bf16_weight_bytes_per_token"] = f.bf16_weight_bytes_per_token;
  j["decode_smollm2_135m_bf16_read_floor_tokens_per_s"] = bf16_read_floor;
  j["decode_smollm2_135m_bf16_over_read_floor"] = f.bf16_tokens_per_s / bf16_read_floor;
  j["decode_smollm2_135m_bf16_over_float32"] = f.bf16_over_float32;
  j["decode_smollm2_135m_bf16_kernel"] = fast::linear16_path();
  const fast::ReadAheadChoice ahead = fast::linear16_read_ahead();
  j["decode_smollm2_135m_bf16_read_ahead_bytes"] = ahead.bytes;
  for (std::size_t i = 0; i < ahead.candidates.size(); ++i)
    if (ahead.candidates[i])
      j["decode_smollm2_135m_bf16_read_ahead_" + std::to_string(ahead.candidates[i]) +
        "_trial_bytes_per_s"] = ahead.bytes_per_s[i];
  j["decode_smollm2_135m_bf16_read_ahead_second_over_first"] = ahead.second_over_first;
}

}  // namespace glassllm::cli
