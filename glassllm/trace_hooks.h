// trace_hooks.h (private): the calls glassllm/model.cpp makes so that an
// active Tracer (include/glassllm/tracer.h) sees each forward as a step.
//
// Every hook is an inline test of one thread-local pointer and does nothing
// when no tracer is active, so inference pays one branch per hook. The hooks
// copy values out of tensors; they never change one, nor run an op.
#pragma once

#include <cstdint>
#include <vector>

#include "glassllm/model.h"
#include "glassllm/tracer.h"

namespace glassllm::trace {

// The active tracer of this thread (set by Tracer's constructor), or nullptr.
inline thread_local Tracer::Impl* active = nullptr;

void begin_step(Tracer::Impl& t, const GlassLM& model, const std::vector<std::int64_t>& ids,
                std::size_t B, std::size_t T, std::size_t start, const Cache* cache);
void end_step(Tracer::Impl& t, const Tensor& logits, const Cache* cache);
void abort_step(Tracer::Impl& t);
void set_layer(Tracer::Impl& t, int layer);
void record(Tracer::Impl& t, const char* name, std::size_t layer, const Tensor& x,
            const Shape& as_shape);
void record_scores(Tracer::Impl& t, std::size_t layer, const Tensor& scores,
                   const Shape& as_shape, std::size_t query_start, std::size_t key_start);

/// One forward call as a step: opened by the constructor, closed by finish();
/// a step left by an exception is discarded.
class StepScope {
 public:
  StepScope(const GlassLM& model, const std::vector<std::int64_t>& ids, std::size_t B,
            std::size_t T, std::size_t start, const Cache* cache)
      : tracer_(active) {
    if (tracer_) begin_step(*tracer_, model, ids, B, T, start, cache);
  }
  void finish(const Tensor& logits, const Cache* cache) {
    if (tracer_) end_step(*tracer_, logits, cache);
    tracer_ = nullptr;
  }
  ~StepScope() {
    if (tracer_) abort_step(*tracer_);
  }
  StepScope(const StepScope&) = delete;
  StepScope& operator=(const StepScope&) = delete;

 private:
  Tracer::Impl* tracer_;
};

/// Ops from now on belong to block `layer` (-1: outside the blocks).
inline void layer(int l) {
  if (active) set_layer(*active, l);
}

/// Records x under `name` for block `layer`. `as_shape` (when not empty) is
/// another shape of the same row-major data: the grouped path's scores
/// [B, Hkv, G*T, m] are recorded as the [B, H, T, m] they are a view of.
inline void snapshot(const char* name, std::size_t layer, const Tensor& x,
                     const Shape& as_shape = {}) {
  if (active) record(*active, name, layer, x, as_shape);
}

/// Records raw scaled scores as attn.scores and, with the hidden entries
/// marked, as attn.scores_masked (queries from position query_start, keys
/// from key_start; a query sees a key iff the key's position <= its own).
inline void scores(std::size_t layer, const Tensor& x, const Shape& as_shape,
                   std::size_t query_start, std::size_t key_start) {
  if (active) record_scores(*active, layer, x, as_shape, query_start, key_start);
}

}  // namespace glassllm::trace
