// op_observer.h: watching every op as it runs (the tracer's op graph,
// include/glassllm/trace/tracer.h, OpGraphRecorder).
//
// The engine knows nothing more about an observer than this interface:
// every op calls on_op once per result, with the op's inputs, whether or not
// the autograd graph is recorded. While one is installed, every op runs as
// itself for the observer to see it (grouped_attention, ops.h, fuses its
// decode step only when none is). Standard headers only.
#pragma once

#include <cstddef>

#include "glassllm/engine/tensor.h"

namespace glassllm {

/// Something that wants to see every op as it runs. Installed per thread
/// with set_op_observer.
class OpObserver {
 public:
  virtual ~OpObserver() = default;
  /// `out` was just made by the op out.op() from inputs[0 .. n-1].
  virtual void on_op(const Tensor& out, const Tensor* inputs, std::size_t n) = 0;
};

namespace detail {
// The observer of this thread, or nullptr: the only cost inference pays is
// one test of this pointer per op.
inline thread_local OpObserver* op_observer = nullptr;
}  // namespace detail

/// True while an OpObserver is installed on this thread.
inline bool op_observed() {
  return detail::op_observer != nullptr;
}

/// Installs `observer` (nullptr: none) on this thread; returns the previous
/// one, to be put back when the new one is done.
inline OpObserver* set_op_observer(OpObserver* observer) {
  OpObserver* previous = detail::op_observer;
  detail::op_observer = observer;
  return previous;
}

}  // namespace glassllm
