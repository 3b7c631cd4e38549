// trace_tour.cpp: a Tracer recording a short generation step by step: the
// steps' kinds and positions, the K/V cache growing, the bytes repeat_kv
// copies, a score recomputed by hand from the recorded q and k, the cache
// links between steps, and the JSON document. Quoted by docs/09-tracer.md.
#include <cmath>
#include <cstdio>

#include "glassllm/io/tokenizer.h"
#include "glassllm/model/model.h"
#include "glassllm/trace/tracer.h"

using namespace glassllm;

int main() {
  // doc:begin trace
  // A small model over the character tokenizer: 4 query heads share 2 K/V
  // heads (G = 2), head_dim = 16 / 4 = 4.
  Tokenizer tokenizer;
  Config cfg;
  cfg.vocab_size = tokenizer.vocab_size();
  cfg.d_model = 16;
  cfg.n_layers = 2;
  cfg.n_heads = 4;
  cfg.n_kv_heads = 2;
  cfg.d_ff = 32;
  GlassLM model(cfg, 0);

  Tracer tracer({}, &tokenizer);  // active until it goes out of scope
  GenerateOptions options;
  options.max_new_tokens = 3;  // the prefill's token, then 2 decode steps
  options.on_step = [&](const Tensor&, std::int64_t next) {
    tracer.set_next_token(next);
  };
  model.generate(tokenizer.encode("GQA"), options);
  // doc:end trace

  // doc:begin steps
  for (const TraceStep& s : tracer.steps()) {
    std::printf(
        "step %zu %-7s start %zu, %zu new token(s), cache %s = %zu bytes, "
        "repeat_kv: %zu ops, %zu bytes\n",
        s.index, s.kind.c_str(), s.start, s.tokens.size(),
        shape_str(s.cache_shape).c_str(), s.cache_bytes, s.graph.count("repeat_kv"),
        s.graph.bytes_written("repeat_kv"));
  }
  // doc:end steps

  // doc:begin score
  // Step 2 (position 4) attends over keys 0..4. Its score against key 1, in
  // head 3 of layer 0, recomputed from the recorded q and k: key 1 was
  // recorded by the prefill (step 0), and head 3 reads K/V head 3 / G = 1.
  const auto& steps = tracer.steps();
  const Snapshot& q = steps[2].snapshot("attn.q", 0);       // [1, 4, 1, 4]
  const Snapshot& k = steps[0].snapshot("attn.k", 0);       // [1, 2, 3, 4]
  const Snapshot& s = steps[2].snapshot("attn.scores", 0);  // [1, 4, 1, 5]
  double dot = 0;
  for (std::size_t d = 0; d < 4; ++d)
    dot += q.data[3 * 4 + d] * k.data[(1 * 3 + 1) * 4 + d];
  std::printf("recorded %.6f, recomputed q . k / sqrt(4) = %.6f\n", s.data[3 * 5 + 1],
              dot / 2);
  // doc:end score

  // doc:begin masked
  // The prefill's scores and probabilities for head 0, query 1 (position 1).
  // The scores are recorded before the mask; key 2 is later than the query,
  // so the mask hides it and it gets probability exactly 0. (The masked
  // scores are not stored: any reader hides the keys after the query.)
  const Snapshot& scores = steps[0].snapshot("attn.scores", 0);  // [1, 4, 3, 3]
  const Snapshot& probs = steps[0].snapshot("attn.softmax", 0);
  for (std::size_t j = 0; j < 3; ++j)
    std::printf("key %zu: score %9.6f%s  probability %.6f\n", j, scores.data[3 + j],
                j > 1 ? " (masked)" : "", probs.data[3 + j]);
  // doc:end masked

  // doc:begin links
  for (const CacheLink& l : tracer.cache_links())
    if (l.layer == 0)
      std::printf("layer 0 %s: step %zu node %zu (%s) -> step %zu node %zu (%s)\n",
                  l.tensor.c_str(), l.from_step, l.from_node,
                  steps[l.from_step].graph.nodes[l.from_node].op.c_str(), l.to_step,
                  l.to_node, steps[l.to_step].graph.nodes[l.to_node].op.c_str());
  // doc:end links

  // doc:begin json
  std::string json = tracer.to_json();
  std::printf("%s...\n", json.substr(0, 52).c_str());
  // doc:end json
  return 0;
}
