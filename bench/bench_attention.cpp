// bench_attention.cpp: two of `glassllm bench`'s measurements: one decode
// step's attention at the exaone-4.0-1.2b shape through both K/V paths
// (beside the floor of reading the cache once), and what the tracer costs.
// bench.cpp prints them.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bench/bench.h"
#include "cli/cli.h"
#include "glassllm/engine/ops.h"
#include "glassllm/fast/blas.h"
#include "glassllm/fast/pool.h"
#include "glassllm/io/tokenizer.h"
#include "glassllm/model/model.h"
#include "glassllm/trace/tracer.h"

namespace glassllm::cli {

using Clock = std::chrono::steady_clock;

// ---- attention at the exaone-4.0-1.2b shape ----------------------------------------

namespace {

// Runs one step of each K/V path under the OpGraphRecorder (so the
// grouped path runs as its ops) and keeps the bytes its ops wrote, and
// those repeat_kv copied.
void record_bytes(const std::function<void(Attention)>& step, AttentionFigures& f) {
  for (Attention path : {Attention::grouped, Attention::repeat_kv}) {
    OpGraphRecorder recorder;
    step(path);
    std::size_t written = 0;
    for (const OpNode& n : recorder.graph().nodes) written += n.bytes;
    bool g = path == Attention::grouped;
    (g ? f.grouped_written : f.repeat_kv_written) = written;
    (g ? f.grouped_repeat_bytes : f.repeat_kv_repeat_bytes) =
        recorder.graph().bytes_written("repeat_kv");
  }
}

}  // namespace

// One decode step's attention (scores, mask, softmax, probs @ V) over all 30
// layers of caches already holding 4096 positions, float32, both K/V paths;
// the floor is reading the caches' 480 MiB once, measured in the same run
// with the same threads (and again on one thread). Timed, the grouped step
// runs fused (grouped_attention, glassllm/fast/decode_attention.cpp); under the
// OpGraphRecorder it runs as its ops, so the bytes written are the ops'.
AttentionFigures exaone_attention(int runs) {
  const StackShape s{30, 32, 8, 64, 4096};
  no_grad guard;
  Cache caches = filled_caches(s, s.ctx, DType::float32);
  Tensor q = randn({1, s.heads, 1, s.head_dim}, 2);
  AttentionFigures f;
  for (const KVCache& c : caches) f.cache_bytes += c.nbytes();
  auto step = [&](Attention path) {
    for (std::size_t l = 0; l < s.layers; ++l)
      attend(q, caches[l].k(), caches[l].v(), s.ctx - 1, 0, path, l);
  };
  record_bytes(step, f);
  // The floor reads every layer's K and V buffer once: on the pool's threads
  // (one buffer per task), as the grouped path runs, and on one thread.
  std::vector<const Tensor*> buffers;
  for (const KVCache& c : caches) {
    buffers.push_back(&c.k());
    buffers.push_back(&c.v());
  }
  std::vector<float> sums(buffers.size());
  volatile float sink = 0;
  auto read_buffer = [&](std::size_t i) {
    sums[i] = read_all(buffers[i]->data<float>(), buffers[i]->size());
  };
  auto floor = [&] {
    pool::parallel_for(buffers.size(), read_buffer);
    sink = sums[0];
  };
  auto floor_1thread = [&] {
    for (std::size_t i = 0; i < buffers.size(); ++i) read_buffer(i);
    sink = sums[0];
  };
  // Interleaved, so that a noisy neighbour slows all of them alike. The
  // bandwidth a shared machine leaves drifts over seconds, so each round
  // times the grouped step and the floor kPairs times, one right after the
  // other: their medians are of samples taken side by side. repeat_kv's
  // step is far slower: once a round. (docs/bench-notes.md.)
  constexpr int kPairs = 5;
  std::vector<double> tg, tr, tf, tf1;
  floor();
  step(Attention::grouped);
  for (int r = 0; r < runs; ++r) {
    for (int p = 0; p < kPairs; ++p) {
      tf.push_back(median_seconds(floor, 1));
      tg.push_back(median_seconds([&] { step(Attention::grouped); }, 1));
    }
    tf1.push_back(median_seconds(floor_1thread, 1));
    tr.push_back(median_seconds([&] { step(Attention::repeat_kv); }, 1));
  }
  f.floor_ms = 1e3 * median(tf);
  f.floor_1thread_ms = 1e3 * median(tf1);
  f.grouped_ms = 1e3 * median(tg);
  f.repeat_kv_ms = 1e3 * median(tr);
  (void)sink;
  return f;
}

// ---- the tracer's cost ---------------------------------------------------------------

// A default-config prefill of 128 tokens, float32, with and without a Tracer
// (default options: every layer and head, the op graph), and the JSON.
TracerFigures tracer_cost(int runs) {
  Config cfg;
  cfg.vocab_size = Tokenizer().vocab_size();
  GlassLM model(cfg, 0);
  std::vector<std::int64_t> tokens(cfg.max_len);
  for (std::size_t i = 0; i < tokens.size(); ++i)
    tokens[i] = std::int64_t((i * 7) % cfg.vocab_size);
  no_grad guard;
  TracerFigures f;
  std::vector<double> plain, traced;
  for (int r = 0; r < runs; ++r) {
    plain.push_back(median_seconds([&] { model.forward(tokens); }, 1));
    traced.push_back(median_seconds(
        [&] {
          Tracer tracer;
          model.forward(tokens);
        },
        1));
  }
  f.prefill_ms = 1e3 * median(plain);
  f.traced_prefill_ms = 1e3 * median(traced);
  Tracer tracer;
  model.forward(tokens);
  std::string json;
  f.to_json_ms = 1e3 * median_seconds([&] { json = tracer.to_json(); }, 3);
  f.json_bytes = json.size();
  return f;
}

}  // namespace glassllm::cli
