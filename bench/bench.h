// bench.h (private): what the files of `glassllm bench` share: the timing
// helper, the figures bench_attention.cpp measures (attention at a real
// model's shape, the tracer's cost) for bench.cpp to print, and
// bench_decode.cpp's decoding at SmolLM2-135M's shape with its printers.
#pragma once

#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>

#include "glassllm/engine/tensor.h"
#include "glassllm/model/model.h"

namespace glassllm::cli {

// Median over `runs` of the seconds one call of f takes, each run timing
// `inner` calls back to back (so a call shorter than the clock's resolution
// is still measured). One untimed run first warms caches and BLAS buffers.
double median_seconds(const std::function<void()>& f, int runs, int inner = 1);

// The median of v (the upper middle one for an even count).
double median(std::vector<double> v);

// Reads n floats once and returns their sum, at the memory's speed: the
// memory floors' loop (memory_read.cpp, compiled at -O2 for that).
float read_all(const float* p, std::size_t n);

// B rows of T token ids drawn uniformly from [0, vocab): the inputs of the
// model benchmarks (their figures do not depend on which tokens they are).
TokenBatch random_token_batch(Rng& rng, std::size_t B, std::size_t T, std::size_t vocab);

struct AttentionFigures {
  double grouped_ms = 0, repeat_kv_ms = 0, floor_ms = 0;
  double floor_1thread_ms = 0;  // the floor read by one thread
  std::size_t cache_bytes = 0;  // K and V of all layers
  std::size_t grouped_repeat_bytes = 0, repeat_kv_repeat_bytes = 0;  // repeat_kv copies
  std::size_t grouped_written = 0, repeat_kv_written = 0;            // every op's output
};

/// One decode step's attention at the exaone-4.0-1.2b shape, both K/V paths.
AttentionFigures exaone_attention(int runs);

struct TracerFigures {
  double prefill_ms = 0, traced_prefill_ms = 0, to_json_ms = 0;
  std::size_t json_bytes = 0;
};

/// Prefill with and without a tracer, and the JSON it writes.
TracerFigures tracer_cost(int runs);

struct ContentionFigures {
  double train_step_ms = 0;        // float32, default threads, beside a busy thread
  double decode_tokens_per_s = 0;  // the same, 120 one-token steps
  double train_step_quiet_ms = 0;  // both again without it, in alternate rounds
  double decode_quiet_tokens_per_s = 0;
};

/// The model's training step and decoding while one more thread loops busily
/// (bench_contention.cpp).
ContentionFigures contention(int runs);

struct DecodeFigures {
  double tokens_per_s = 0;
  std::size_t weight_bytes_per_token = 0;  // every weight, of the embedding one row
  double copy_bytes_per_s = 0;             // memcpy of a large buffer, same threads
  double floor_tokens_per_s = 0;           // copy_bytes_per_s / weight_bytes_per_token
  double read_bytes_per_s = 0;             // summing a large buffer, same threads
  int threads = 1;
  double bf16_tokens_per_s = 0;  // the projections and lm_head kept in bfloat16
  std::size_t bf16_weight_bytes_per_token = 0;
  double bf16_over_float32 =
      0;  // median over runs of each run's ratio, tokens alternated
};

/// Decoding one token at a time at SmolLM2-135M's shape (random float32
/// weights), beside the memory floor: the copy bandwidth over the bytes of
/// weights each token reads; then with the projections kept in bfloat16,
/// beside the read floor of its bytes. bench_decode.cpp.
DecodeFigures smollm2_decode(int runs);
/// Its table, and its keys in `glassllm bench --json`'s object.
void print_decode(const DecodeFigures& f);
void print_decode_json(const DecodeFigures& f, nlohmann::json& j);

}  // namespace glassllm::cli
