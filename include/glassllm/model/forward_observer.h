// forward_observer.h: the calls glassllm/model/model.cpp makes so
// that an observer -- the Tracer of include/glassllm/trace/tracer.h -- sees
// each forward as a step.
//
// The model layer defines the interface and the trace layer implements it,
// so dependencies run one way (trace -> model) while the model still reports
// what it computes. Every hook is an inline test of one thread-local pointer
// and does nothing when no observer is active, so inference pays one branch
// per hook. Observers copy values out of tensors; they never change one, nor
// run an op.
#pragma once

#include <cstdint>
#include <vector>

#include "glassllm/model/model.h"

namespace glassllm {

/// What an observer of GlassLM::forward is told, in call order: begin_step,
/// then per block set_layer and record/record_scores, then end_step (or
/// abort_step when the forward throws).
class ForwardObserver {
 public:
  virtual ~ForwardObserver() = default;
  virtual void begin_step(const GlassLM& model, const std::vector<std::int64_t>& ids,
                          std::size_t B, std::size_t T, std::size_t start,
                          const Cache* cache) = 0;
  virtual void end_step(const Tensor& logits, const Cache* cache) = 0;
  virtual void abort_step() = 0;
  virtual void set_layer(int layer) = 0;
  virtual void record(const char* name, std::size_t layer, const Tensor& x,
                      const Shape& as_shape) = 0;
  virtual void record_scores(std::size_t layer, const Tensor& scores,
                             const Shape& as_shape, std::size_t query_start,
                             std::size_t key_start) = 0;
};

namespace trace {

// The active observer of this thread (set by Tracer's constructor), or nullptr.
inline thread_local ForwardObserver* active = nullptr;

/// One forward call as a step: opened by the constructor, closed by finish();
/// a step left by an exception is discarded.
class StepScope {
 public:
  StepScope(const GlassLM& model, const std::vector<std::int64_t>& ids, std::size_t B,
            std::size_t T, std::size_t start, const Cache* cache)
      : observer_(active) {
    if (observer_) observer_->begin_step(model, ids, B, T, start, cache);
  }
  void finish(const Tensor& logits, const Cache* cache) {
    if (observer_) observer_->end_step(logits, cache);
    observer_ = nullptr;
  }
  ~StepScope() {
    if (observer_) observer_->abort_step();
  }
  StepScope(const StepScope&) = delete;
  StepScope& operator=(const StepScope&) = delete;

 private:
  ForwardObserver* observer_;
};

/// Ops from now on belong to block `layer` (-1: outside the blocks).
inline void layer(int l) {
  if (active) active->set_layer(l);
}

/// Records x under `name` for block `layer`. `as_shape` (when not empty) is
/// another shape of the same row-major data: the grouped path's scores
/// [B, Hkv, G*T, m] are recorded as the [B, H, T, m] they are a view of.
inline void snapshot(const char* name, std::size_t layer, const Tensor& x,
                     const Shape& as_shape = {}) {
  if (active) active->record(name, layer, x, as_shape);
}

/// Records raw scaled scores as attn.scores and, with the hidden entries
/// marked, as attn.scores_masked (queries from position query_start, keys
/// from key_start; a query sees a key iff the key's position <= its own).
inline void scores(std::size_t layer, const Tensor& x, const Shape& as_shape,
                   std::size_t query_start, std::size_t key_start) {
  if (active) active->record_scores(layer, x, as_shape, query_start, key_start);
}

}  // namespace trace
}  // namespace glassllm
