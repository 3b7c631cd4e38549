// tracer_impl.h (private): the state of a Tracer, shared by tracer.cpp (which
// records steps through the model's ForwardObserver hooks) and trace_json.cpp
// (which writes them out).
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "glassllm/io/tokenizer.h"
#include "glassllm/model/forward_observer.h"
#include "glassllm/model/model.h"
#include "glassllm/trace/tracer.h"

namespace glassllm {

struct Tracer::Impl final : ForwardObserver {
  TraceOptions options;
  std::function<std::string(std::int64_t)> token_text;  // empty: "[id]"
  std::vector<TraceStep> steps;
  std::vector<CacheLink> links;

  // Set by the first step.
  std::optional<Config> config;
  DType dtype = DType::float32;
  std::string attention;

  // The whole token sequence seen so far; step s's key j is
  // sequence[window_offset[s] + j].
  std::vector<TokenText> sequence;
  std::vector<std::size_t> window_offset;
  std::optional<std::int64_t> pending_next;  // chosen from the last step, not yet fed
  std::vector<double> last_probs;            // the last step's next-token distribution

  // The open step.
  bool open = false;
  std::unique_ptr<OpGraphRecorder> recorder;
  std::vector<Tensor>
      grad_handles;  // snapshot tensors, parallel to step.snapshots (grads)
  std::vector<Shape>
      grad_shapes;  // the shape each was recorded as, before head selection
  Tensor logits;    // kept for set_next_token's backward (grads)
  // The tensors that are the cache after the last step, per layer: the next
  // step reads them as its kv_cache nodes. Holding them keeps their storage
  // (and so its address) alive until that step is recorded.
  std::vector<Tensor> cache_k, cache_v;

  TokenText token(std::int64_t id) const {
    std::string text = token_text ? token_text(id) : "[" + std::to_string(id) + "]";
    return {id, text};
  }

  bool layer_selected(std::size_t l) const {
    return options.layers.empty() ||
           std::find(options.layers.begin(), options.layers.end(), l) !=
               options.layers.end();
  }

  // ForwardObserver: the model's hooks, defined below as trace::*.
  void begin_step(const GlassLM& model, const std::vector<std::int64_t>& ids,
                  std::size_t B, std::size_t T, std::size_t start,
                  const Cache* cache) override;
  void end_step(const Tensor& logits, const Cache* cache) override;
  void abort_step() override;
  void set_layer(int layer) override;
  void record(const char* name, std::size_t layer, const Tensor& x,
              const Shape& as_shape) override;
  void record_scores(std::size_t layer, const Tensor& scores, const Shape& as_shape,
                     std::size_t query_start, std::size_t key_start) override;
};

}  // namespace glassllm
