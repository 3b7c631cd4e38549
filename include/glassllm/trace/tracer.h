// tracer.h: recording what the model computes, for the attention inspector.
//
// Two pieces:
//   - OpGraphRecorder: while one is alive on a thread, every op the engine
//     runs becomes a node of an OpGraph (op name, input nodes, output shape,
//     dtype, bytes written). It needs no model: `glassllm memory` uses it on a
//     bare attention stack to count what repeat_kv copies.
//   - Tracer: while one is alive on a thread, every GlassLM::forward call is a
//     step (prefill, decode or window reset). Each step keeps its tokens and
//     positions, named per-layer snapshots (attn.q, attn.k, attn.scores, ...),
//     the next-token top-k, the cache's shape and bytes, its op graph, and on
//     request the gradient of log p(next token) w.r.t. every snapshot. It
//     writes one JSON document whose format is docs/trace.schema.json
//     (docs/09-tracer.md explains it).
//
// Tracing never changes a computed value: the snapshots are copies taken
// beside the forward, and the model runs the same ops with or without one.
// The implementation is glassllm/trace/tracer.cpp; the hooks the model calls are in
// glassllm/model/forward_observer.h.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "glassllm/engine/tensor.h"

namespace glassllm {

class GlassLM;
class Tokenizer;

// ---- the op graph -----------------------------------------------------------------

/// One node of an op graph: an op's result, or a tensor the step read without
/// making it (a weight "param", a "kv_cache" from the previous step, or any
/// other "input").
struct OpNode {
  std::size_t id = 0;  ///< index in OpGraph::nodes
  std::string op;      ///< "matmul_t", "repeat_kv", ... or param / kv_cache / input
  std::vector<std::size_t> inputs;  ///< ids of the nodes it read (the graph's edges)
  Shape shape;
  DType dtype = DType::float32;
  /// Bytes of new storage the op wrote: size * dtype size, 0 for a view
  /// (reshape, squeeze, unsqueeze, a permute of length-1 axes) and for inputs.
  std::size_t bytes = 0;
  int layer = -1;    ///< the transformer block it ran in; -1 outside any
  std::string name;  ///< for a param, its Hugging Face name; for a kv_cache, "k" or "v"
};

struct OpGraph {
  std::vector<OpNode> nodes;

  /// Number of nodes made by `op`.
  std::size_t count(const std::string& op) const;
  /// Bytes those nodes wrote.
  std::size_t bytes_written(const std::string& op) const;
  /// Bytes the ops consuming them read from them: each consumer reads the
  /// whole tensor once.
  std::size_t bytes_read_after(const std::string& op) const;
};

/// Records every op run on this thread while it is alive (it installs an op
/// observer in the engine and restores the previous one when destroyed).
class OpGraphRecorder {
 public:
  OpGraphRecorder();
  ~OpGraphRecorder();
  OpGraphRecorder(const OpGraphRecorder&) = delete;
  OpGraphRecorder& operator=(const OpGraphRecorder&) = delete;

  /// Gives a tensor read by later ops (not made by one) a node of its own
  /// kind ("param", "kv_cache") and name now; returns its id.
  std::size_t label_input(const Tensor& t, const std::string& op, const std::string& name,
                          int layer = -1);
  /// Nodes made from now on carry this layer (-1: outside any block).
  void set_layer(int layer);
  /// The id of the node holding t's data (t itself, or the node whose storage
  /// t shares), if one was recorded.
  std::optional<std::size_t> find(const Tensor& t) const;

  const OpGraph& graph() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// ---- the tracer ---------------------------------------------------------------------

struct TraceOptions {
  std::vector<std::size_t> layers;  ///< blocks to snapshot (empty: all)
  std::vector<std::size_t>
      heads;          ///< query heads to snapshot (empty: all); K/V keep their groups'
  int precision = 6;  ///< significant digits in the JSON (0: exact)
  std::size_t top_k = 5;  ///< next-token candidates per step
  bool grads = false;     ///< d log p(next) / d snapshot (forward must record the graph)
  bool graph = true;      ///< record each step's op graph
  /// Record the vectors too: resid.in, attn.q, attn.k, attn.v and attn.out
  /// (and, with QK-norm, attn.q_norm and attn.k_norm: q and k after their
  /// per-head RMSNorm, before RoPE). false keeps only the attention scores and weights (a
  /// smaller page).
  bool vectors = true;
};

/// One recorded tensor. `data` holds the selected heads only, row-major, at
/// full precision; `shape` is the recorded shape (axis 1 shortened to
/// heads.size() when heads were selected, the query axis to the step's
/// recorded rows). The masked scores are not a snapshot: they are the raw
/// scores with every key after its query hidden, which any reader can redo.
struct Snapshot {
  std::string name;
  std::size_t layer = 0;
  Shape shape;
  std::vector<std::size_t>
      heads;  ///< indices along axis 1; empty for tensors without heads
  std::vector<double> data;
  std::vector<double> grad;  ///< same layout as data, when grads were asked for
};

struct TokenText {
  std::int64_t id = 0;
  std::string text;
};

struct Candidate {
  std::int64_t id = 0;
  std::string text;
  double prob = 0;
};

/// One forward call.
struct TraceStep {
  std::size_t index = 0;
  std::string kind;  ///< "prefill", "decode" or "window_reset"
  std::size_t start = 0;
  std::vector<TokenText> tokens;       ///< the new tokens (batch row 0)
  std::vector<std::size_t> positions;  ///< start .. start + T - 1
  std::size_t key_start = 0;           ///< position of key 0 (0 with a cache)
  std::size_t keys = 0;                ///< m: keys attended over
  /// The query rows the snapshots hold: positions rows_start ..
  /// rows_start + rows_count - 1. Every row of a prefill or decode step; of a
  /// window reset only the new token's: the others run the previous window
  /// again, one token shorter, and recording them would make a trace grow
  /// by max_len rows at every reset.
  std::size_t rows_start = 0, rows_count = 0;
  std::string cache_mode;        ///< "concat", "preallocated" or "none"
  Shape cache_shape;             ///< one layer's K after the step [B, Hkv, m, hd]
  std::size_t cache_length = 0;  ///< positions held
  std::size_t cache_bytes = 0;   ///< K and V of every layer
  std::size_t cache_bytes_per_layer = 0;
  std::vector<Snapshot> snapshots;
  std::vector<Candidate> top_k;    ///< of the last position's next token
  std::optional<Candidate> next;   ///< the token chosen from this step
  std::optional<double> log_prob;  ///< log p(next), when grads were taken
  OpGraph graph;
  /// Per layer: the graph node holding the cache's K and V after this step.
  std::vector<std::size_t> cache_k_node, cache_v_node;

  /// The snapshot of this name and layer; throws std::out_of_range naming both.
  const Snapshot& snapshot(const std::string& name, std::size_t layer) const;
};

/// The K/V cache as a link between steps: the node that holds a layer's K (or
/// V) after step `from_step` is the kv_cache node the next step reads.
struct CacheLink {
  std::size_t layer = 0;
  std::string tensor;  ///< "k" or "v"
  std::size_t from_step = 0, from_node = 0, to_step = 0, to_node = 0;
};

/// Active while alive (on this thread): each GlassLM::forward becomes a step.
///   Tracer tracer({}, &tokenizer);
///   model.generate(prompt, options);  // every step recorded
///   tracer.write("trace.json");
/// Tracers do not nest: making a second one while one is active throws.
class Tracer {
 public:
  explicit Tracer(TraceOptions options = {}, const Tokenizer* tokenizer = nullptr);
  /// The same with any tokenizer: `token_text(id)` is the text the trace shows
  /// for a token (e.g. HFTokenizer::token_text for a Hugging Face model).
  Tracer(TraceOptions options, std::function<std::string(std::int64_t)> token_text);
  ~Tracer();
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  const TraceOptions& options() const;
  const std::vector<TraceStep>& steps() const;
  const std::vector<CacheLink>& cache_links() const;

  /// Tells the last step which token was chosen from its logits. With
  /// options().grads, also runs backward from log p(id) at the step's last
  /// position and stores each snapshot's gradient.
  void set_next_token(std::int64_t id);

  /// The trace as JSON text (format "glassllm-trace", version 2).
  std::string to_json(int indent = -1) const;
  /// Writes to_json() to `path` through a temporary file and a rename.
  void write(const std::string& path) const;

  static constexpr int format_version = 2;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace glassllm
