// tracer.cpp: the op-graph recorder and the tracer of tracer.h. The JSON
// they write is trace_json.cpp's (its schema is docs/trace.schema.json).
//
// The recorder is the engine's OpObserver: finish_op hands it every op's
// result and inputs. It gives each result an id and finds its inputs' ids by
// node, or by storage for a tensor that shares another's data (a detached
// copy of a handle, as the K/V cache stores). Nodes are held by weak_ptr: a
// freed node's memory then cannot be reused by a new node at the same
// address while the step lasts (make_shared puts the control block and the
// object in one allocation), so an id never points at the wrong tensor. The
// tensors' data is freed as usual.
//
// The tracer is reached from the model through glassllm/model/forward_observer.h.
#include "glassllm/trace/tracer.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include "glassllm/engine/op_observer.h"
#include "glassllm/engine/ops.h"
#include "glassllm/io/tokenizer.h"
#include "glassllm/model/forward_observer.h"
#include "glassllm/model/model.h"
#include "glassllm/trace/tracer_impl.h"

namespace glassllm {

// ---- the op graph ------------------------------------------------------------------

std::size_t OpGraph::count(const std::string& op) const {
  return std::size_t(std::count_if(nodes.begin(), nodes.end(),
                                   [&](const OpNode& n) { return n.op == op; }));
}

std::size_t OpGraph::bytes_written(const std::string& op) const {
  std::size_t total = 0;
  for (const OpNode& n : nodes)
    if (n.op == op) total += n.bytes;
  return total;
}

std::size_t OpGraph::bytes_read_after(const std::string& op) const {
  std::size_t total = 0;
  for (const OpNode& consumer : nodes)
    for (std::size_t in : consumer.inputs)
      if (nodes[in].op == op)
        total += shape_numel(nodes[in].shape) * dtype_size(nodes[in].dtype);
  return total;
}

struct OpGraphRecorder::Impl : OpObserver {
  OpGraph graph;
  int layer = -1;
  OpObserver* previous = nullptr;
  std::unordered_map<const Node*, std::pair<std::weak_ptr<Node>, std::size_t>> by_node;
  // Keyed by Tensor::data_owner(): views share their input's.
  std::unordered_map<const void*, std::pair<std::weak_ptr<const void>, std::size_t>>
      by_storage;

  std::optional<std::size_t> find(const Tensor& t) const {
    auto n = by_node.find(t.node());
    if (n != by_node.end() && !n->second.first.expired()) return n->second.second;
    auto s = by_storage.find(t.data_owner().get());
    if (s != by_storage.end() && !s->second.first.expired()) return s->second.second;
    return std::nullopt;
  }

  std::size_t add(const Tensor& t, std::string op, std::vector<std::size_t> inputs,
                  std::size_t bytes, std::string name, int node_layer) {
    OpNode n;
    n.id = graph.nodes.size();
    n.op = std::move(op);
    n.inputs = std::move(inputs);
    n.shape = t.shape();
    n.dtype = t.dtype();
    n.bytes = bytes;
    n.layer = node_layer;
    n.name = std::move(name);
    graph.nodes.push_back(std::move(n));
    std::size_t id = graph.nodes.back().id;
    by_node[t.node()] = {t.node_ptr(), id};
    const std::shared_ptr<const void> storage = t.data_owner();
    auto s = by_storage.find(storage.get());
    // A storage belongs to the node that wrote it; views of it map back there.
    if (bytes > 0 || s == by_storage.end() || s->second.first.expired())
      by_storage[storage.get()] = {storage, id};
    return id;
  }

  std::size_t input_id(const Tensor& t) {
    if (auto id = find(t)) return *id;
    return add(t, "input", {}, 0, "", -1);
  }

  void on_op(const Tensor& out, const Tensor* inputs, std::size_t n) override {
    std::vector<std::size_t> ids;
    ids.reserve(n);
    bool view = false;
    for (std::size_t i = 0; i < n; ++i) {
      ids.push_back(input_id(inputs[i]));
      view = view || inputs[i].data_owner() == out.data_owner();
    }
    add(out, out.op(), std::move(ids), view ? 0 : out.nbytes(), "", layer);
  }
};

OpGraphRecorder::OpGraphRecorder() : impl_(std::make_unique<Impl>()) {
  impl_->previous = set_op_observer(impl_.get());
}

OpGraphRecorder::~OpGraphRecorder() {
  set_op_observer(impl_->previous);
}

std::size_t OpGraphRecorder::label_input(const Tensor& t, const std::string& op,
                                         const std::string& name, int layer) {
  return impl_->add(t, op, {}, 0, name, layer);
}

void OpGraphRecorder::set_layer(int layer) {
  impl_->layer = layer;
}

std::optional<std::size_t> OpGraphRecorder::find(const Tensor& t) const {
  return impl_->find(t);
}

const OpGraph& OpGraphRecorder::graph() const {
  return impl_->graph;
}

// ---- the tracer --------------------------------------------------------------------

const Snapshot& TraceStep::snapshot(const std::string& name, std::size_t layer) const {
  for (const Snapshot& s : snapshots)
    if (s.name == name && s.layer == layer) return s;
  throw std::out_of_range("trace: step " + std::to_string(index) + " has no snapshot '" +
                          name + "' of layer " + std::to_string(layer));
}

namespace trace {

// Sets step.kind and returns where the step's key 0 sits in the whole
// sequence (Impl::sequence), which it extends with the step's tokens.
std::size_t place_in_sequence(Tracer::Impl& t, TraceStep& step,
                              const std::vector<std::int64_t>& ids) {
  const std::size_t T = step.tokens.size();
  if (step.start > 0) {
    step.kind = "decode";
    std::size_t offset = t.window_offset.empty() ? 0 : t.window_offset.back();
    t.sequence.resize(std::min(t.sequence.size(), offset + step.start));
    for (const TokenText& tok : step.tokens) t.sequence.push_back(tok);
    return offset;
  }
  std::vector<TokenText> known = t.sequence;
  if (t.pending_next) known.push_back(t.token(*t.pending_next));
  bool tail = !t.steps.empty() && known.size() >= T;
  for (std::size_t i = 0; tail && i < T; ++i)
    tail = known[known.size() - T + i].id == ids[i];
  if (tail) {  // generate's window reset: the last max_len tokens again, from 0
    step.kind = "window_reset";
    t.sequence = known;
    return known.size() - T;
  }
  step.kind = "prefill";
  std::size_t offset = t.sequence.size();
  for (const TokenText& tok : step.tokens) t.sequence.push_back(tok);
  return offset;
}

// Starts the open step's op graph: the weights as "param" nodes, and the
// cache as the previous step left it, a kv_cache node per layer linked to
// the node that held it there.
void start_graph(Tracer::Impl& t, const GlassLM& model, const Cache* cache) {
  t.recorder = std::make_unique<OpGraphRecorder>();
  for (const auto& [name, w] : model.named_parameters())
    t.recorder->label_input(w, "param", name);
  if (!cache || t.steps.size() < 2) return;
  const TraceStep& prev = t.steps[t.steps.size() - 2];
  for (std::size_t l = 0; l < cache->size() && l < t.cache_k.size(); ++l) {
    const KVCache& c = (*cache)[l];
    for (int which = 0; which < 2; ++which) {
      const Tensor& now = which == 0 ? c.k() : c.v();
      const Tensor& then = which == 0 ? t.cache_k[l] : t.cache_v[l];
      if (!now.defined() || !then.defined() || now.data_owner() != then.data_owner())
        continue;
      std::size_t id =
          t.recorder->label_input(now, "kv_cache", which == 0 ? "k" : "v", int(l));
      const auto& from = which == 0 ? prev.cache_k_node : prev.cache_v_node;
      if (l < from.size())
        t.links.push_back(
            {l, which == 0 ? "k" : "v", prev.index, from[l], t.steps.back().index, id});
    }
  }
}

void begin_step(Tracer::Impl& t, const GlassLM& model,
                const std::vector<std::int64_t>& ids, std::size_t B, std::size_t T,
                std::size_t start, const Cache* cache) {
  if (!t.config) {
    t.config = model.config();
    t.dtype = model.dtype();
    t.attention = attention_name(model.attention);
  }
  TraceStep step;
  step.index = t.steps.size();
  step.start = start;
  for (std::size_t i = 0; i < T; ++i) step.tokens.push_back(t.token(ids[i]));  // row 0
  for (std::size_t i = 0; i < T; ++i) step.positions.push_back(start + i);
  t.window_offset.push_back(place_in_sequence(t, step, ids));
  // A reset records only the token it runs for the first time (the one
  // chosen from the previous step): see TraceStep::rows_start.
  step.rows_start = start;
  step.rows_count = T;
  if (step.kind == "window_reset" && t.pending_next) {
    step.rows_start = start + T - 1;
    step.rows_count = 1;
  }
  t.pending_next.reset();
  t.steps.push_back(std::move(step));
  t.open = true;
  t.grad_handles.clear();
  t.grad_shapes.clear();
  t.logits = Tensor();
  if (t.options.graph) start_graph(t, model, cache);
}

void set_layer(Tracer::Impl& t, int layer) {
  if (t.open && t.recorder) t.recorder->set_layer(layer);
}

// Keeps rows [from, from + count) of the query axis (`axis`) of a row-major
// tensor of `shape`, in place.
void keep_rows(std::vector<double>& data, Shape& shape, std::size_t axis,
               std::size_t from, std::size_t count) {
  if (from == 0 && count == shape[axis]) return;
  std::size_t outer = 1, inner = 1;
  for (std::size_t i = 0; i < axis; ++i) outer *= shape[i];
  for (std::size_t i = axis + 1; i < shape.size(); ++i) inner *= shape[i];
  std::vector<double> kept;
  kept.reserve(outer * count * inner);
  for (std::size_t o = 0; o < outer; ++o) {
    auto block = data.begin() + std::ptrdiff_t((o * shape[axis] + from) * inner);
    kept.insert(kept.end(), block, block + std::ptrdiff_t(count * inner));
  }
  data = std::move(kept);
  shape[axis] = count;
}

// Copies x (seen with shape `as`) into a snapshot, keeping only the step's
// recorded query rows (axis 1 of [B, T, d], axis 2 of [B, H, T, m]) and the
// selected heads along axis 1 of a 4-D tensor.
Snapshot take(const Tracer::Impl& t, const char* name, std::size_t layer, const Tensor& x,
              const Shape& as) {
  Snapshot s;
  s.name = name;
  s.layer = layer;
  s.shape = as.empty() ? x.shape() : as;
  std::vector<double> all = x.to_vector();
  const TraceStep& step = t.steps.back();
  const std::size_t row_axis = s.shape.size() == 4 ? 2 : 1;
  if (s.shape.size() >= 3 && s.shape[row_axis] == step.tokens.size())
    keep_rows(all, s.shape, row_axis, step.rows_start - step.start, step.rows_count);
  if (s.shape.size() != 4) {
    s.data = std::move(all);
    return s;
  }
  const Config& cfg = *t.config;
  const std::size_t heads = s.shape[1];
  const bool kv = heads == cfg.n_kv_heads &&
                  (s.name == "attn.k" || s.name == "attn.k_norm" || s.name == "attn.v");
  for (std::size_t h = 0; h < heads; ++h) {
    bool keep = t.options.heads.empty();
    for (std::size_t q : t.options.heads)
      keep = keep || (kv ? q / cfg.n_rep() == h : q == h);
    if (keep) s.heads.push_back(h);
  }
  const std::size_t B = s.shape[0], block = s.shape[2] * s.shape[3];
  if (s.heads.size() == heads) {
    s.data = std::move(all);
    return s;
  }
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h : s.heads) {
      auto from = all.begin() + std::ptrdiff_t((b * heads + h) * block);
      s.data.insert(s.data.end(), from, from + std::ptrdiff_t(block));
    }
  s.shape[1] = s.heads.size();
  return s;
}

void record(Tracer::Impl& t, const char* name, std::size_t layer, const Tensor& x,
            const Shape& as_shape) {
  if (!t.open || !t.layer_selected(layer)) return;
  const std::string_view n = name;
  if (!t.options.vectors && n != "attn.scores" && n != "attn.softmax") return;
  t.steps.back().snapshots.push_back(take(t, name, layer, x, as_shape));
  if (t.options.grads) {
    Tensor handle = x;
    if (handle.requires_grad()) handle.retain_grad();
    t.grad_handles.resize(t.steps.back().snapshots.size() - 1);
    t.grad_shapes.resize(t.grad_handles.size());
    t.grad_handles.push_back(handle);
    t.grad_shapes.push_back(as_shape);
  }
}

void record_scores(Tracer::Impl& t, std::size_t layer, const Tensor& scores,
                   const Shape& as_shape, std::size_t query_start,
                   std::size_t key_start) {
  if (!t.open || !t.layer_selected(layer)) return;
  // The masked scores are not recorded: they are these with every key after
  // its query hidden (query_start and key_start say where), and softmax
  // gives those keys exactly 0.
  (void)query_start;
  (void)key_start;
  record(t, "attn.scores", layer, scores, as_shape);
}

// The next-token distribution at the last position of row 0, in double: its
// top_k most likely tokens go into the step, the whole of it into
// t.last_probs (for set_next_token).
void record_top_k(Tracer::Impl& t, TraceStep& step, const Tensor& logits) {
  const std::size_t V = logits.dim(-1), T = step.tokens.size();
  std::vector<double> all = logits.to_vector();
  std::vector<double> z(all.begin() + std::ptrdiff_t((T - 1) * V),
                        all.begin() + std::ptrdiff_t(T * V));
  double mx = *std::max_element(z.begin(), z.end()), total = 0;
  for (double& v : z) total += v = std::exp(v - mx);
  std::vector<std::size_t> order(V);
  for (std::size_t i = 0; i < V; ++i) order[i] = i;
  std::size_t k = std::min(t.options.top_k, V);
  std::partial_sort(order.begin(), order.begin() + std::ptrdiff_t(k), order.end(),
                    [&](std::size_t a, std::size_t b) {
                      return z[a] > z[b] || (z[a] == z[b] && a < b);
                    });
  for (double& v : z) v /= total;
  for (std::size_t i = 0; i < k; ++i) {
    TokenText tok = t.token(std::int64_t(order[i]));
    step.top_k.push_back({tok.id, tok.text, z[order[i]]});
  }
  t.last_probs = std::move(z);
}

// The cache after the step: its shape and bytes, and the keys attended over.
void record_cache(TraceStep& step, const Cache* cache) {
  step.cache_mode = "none";
  if (cache && !cache->empty() && (*cache)[0].k().defined()) {
    const KVCache& c0 = (*cache)[0];
    step.cache_mode = cache_mode_name(c0.mode());
    step.cache_shape = c0.k().shape();
    step.cache_length = c0.length();
    step.cache_bytes_per_layer = c0.nbytes();
    for (const KVCache& c : *cache) step.cache_bytes += c.nbytes();
    step.key_start = 0;
    step.keys = step.cache_shape[2];
  } else {
    step.key_start = step.start;
    step.keys = step.tokens.size();
  }
}

// Closes the step's op graph, noting which nodes hold each layer's cache (the
// next step links its kv_cache nodes to them).
void finish_graph(Tracer::Impl& t, TraceStep& step, const Cache* cache) {
  t.cache_k.clear();
  t.cache_v.clear();
  if (cache)
    for (const KVCache& c : *cache) {
      if (!c.k().defined()) continue;
      auto k_id = t.recorder->find(c.k()), v_id = t.recorder->find(c.v());
      if (!k_id || !v_id) continue;
      step.cache_k_node.push_back(*k_id);
      step.cache_v_node.push_back(*v_id);
      t.cache_k.push_back(c.k());
      t.cache_v.push_back(c.v());
    }
  step.graph = t.recorder->graph();
  t.recorder.reset();
}

void end_step(Tracer::Impl& t, const Tensor& logits, const Cache* cache) {
  TraceStep& step = t.steps.back();
  record_top_k(t, step, logits);
  record_cache(step, cache);
  if (t.recorder) finish_graph(t, step, cache);
  if (t.options.grads) {
    t.logits = logits;
    t.grad_handles.resize(step.snapshots.size());
    t.grad_shapes.resize(step.snapshots.size());
  }
  t.open = false;
}

void abort_step(Tracer::Impl& t) {
  t.recorder.reset();
  t.grad_handles.clear();
  t.steps.pop_back();
  t.window_offset.pop_back();
  t.open = false;
}

}  // namespace trace

void Tracer::Impl::begin_step(const GlassLM& model, const std::vector<std::int64_t>& ids,
                              std::size_t B, std::size_t T, std::size_t start,
                              const Cache* cache) {
  trace::begin_step(*this, model, ids, B, T, start, cache);
}
void Tracer::Impl::end_step(const Tensor& logits, const Cache* cache) {
  trace::end_step(*this, logits, cache);
}
void Tracer::Impl::abort_step() {
  trace::abort_step(*this);
}
void Tracer::Impl::set_layer(int layer) {
  trace::set_layer(*this, layer);
}
void Tracer::Impl::record(const char* name, std::size_t layer, const Tensor& x,
                          const Shape& as_shape) {
  trace::record(*this, name, layer, x, as_shape);
}
void Tracer::Impl::record_scores(std::size_t layer, const Tensor& scores,
                                 const Shape& as_shape, std::size_t query_start,
                                 std::size_t key_start) {
  trace::record_scores(*this, layer, scores, as_shape, query_start, key_start);
}

Tracer::Tracer(TraceOptions options, const Tokenizer* tokenizer)
    : Tracer(std::move(options), tokenizer ? std::function<std::string(std::int64_t)>(
                                                 [tokenizer](std::int64_t id) {
                                                   return tokenizer->token_text(id);
                                                 })
                                           : nullptr) {}

Tracer::Tracer(TraceOptions options, std::function<std::string(std::int64_t)> token_text)
    : impl_(std::make_unique<Impl>()) {
  if (trace::active)
    throw std::logic_error("Tracer: a tracer is already active on this thread");
  if (options.precision < 0 || options.precision > 17)
    throw std::invalid_argument("Tracer: precision must be 0 (exact) .. 17 digits, got " +
                                std::to_string(options.precision));
  impl_->options = std::move(options);
  impl_->token_text = std::move(token_text);
  trace::active = impl_.get();
}

Tracer::~Tracer() {
  trace::active = nullptr;
}

const TraceOptions& Tracer::options() const {
  return impl_->options;
}

const std::vector<TraceStep>& Tracer::steps() const {
  return impl_->steps;
}

const std::vector<CacheLink>& Tracer::cache_links() const {
  return impl_->links;
}

void Tracer::set_next_token(std::int64_t id) {
  Impl& t = *impl_;
  if (t.steps.empty()) throw std::logic_error("set_next_token: no step was traced");
  TraceStep& step = t.steps.back();
  const std::size_t V = t.config->vocab_size;
  if (id < 0 || std::size_t(id) >= V)
    throw std::invalid_argument("set_next_token: id " + std::to_string(id) +
                                " is out of range [0, " + std::to_string(V) + ")");
  TokenText tok = t.token(id);
  step.next = Candidate{tok.id, tok.text, t.last_probs.at(std::size_t(id))};
  t.pending_next = id;
  if (!t.options.grads) return;
  if (!t.logits.defined() || !t.logits.requires_grad())
    throw std::logic_error(
        "set_next_token: grads need the forward to record the graph; run it with grad "
        "mode on (GenerateOptions::record_graph)");
  // log p(id) at the last position of row 0; backward from it. cross_entropy
  // is -log p, so every gradient is negated afterwards.
  const std::size_t T = step.tokens.size();
  Tensor row = slice(slice(t.logits, 0, 0, 1), 1, std::int64_t(T) - 1, std::int64_t(T));
  Tensor nll = cross_entropy(row, {id});
  step.log_prob = -nll.item();
  nll.backward();
  for (std::size_t i = 0; i < step.snapshots.size(); ++i) {
    const Tensor& h = t.grad_handles[i];
    if (!h.defined()) continue;
    Snapshot& s = step.snapshots[i];
    Tensor g = h.grad();
    if (!g.defined())
      g = zeros(h.shape(), h.dtype());  // the output does not depend on it
    s.grad = trace::take(t, s.name.c_str(), s.layer, g, t.grad_shapes[i]).data;
    for (double& v : s.grad) v = -v;  // d(-nll) = d log p
  }
  t.grad_handles.clear();
  t.logits = Tensor();
}

}  // namespace glassllm
