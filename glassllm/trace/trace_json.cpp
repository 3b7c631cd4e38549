// trace_json.cpp: the JSON document a Tracer writes (format "glassllm-trace";
// its schema is docs/trace.schema.json, docs/09-tracer.md explains it).
// Everything here reads what tracer.cpp recorded; nothing is computed anew.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "glassllm/fast/kernels.h"
#include "glassllm/io/files.h"
#include "glassllm/trace/tracer.h"
#include "glassllm/trace/tracer_impl.h"

namespace glassllm {

namespace {

using json = nlohmann::ordered_json;  // keys in the order written: format, version, ...

// v rounded to `digits` significant digits (0: exact for the dtype: 9 digits
// give back every float32, 17 every float64), as "%.*g" prints it and strtod
// reads it back; NaN and infinities stay. Computed without the text
// (fast::round_to_digits): a trace rounds every value it records.
double round_to(double v, int digits) {
  return fast::round_to_digits(v, digits);
}

// A tensor's values as one string: each rounded to `digits`, stored as a
// little-endian float32 (or float64, as `dtype` says), the bytes in base64.
// About 5.3 characters a number for float32 against about 10 as JSON text,
// and a reader decodes it without parsing a number at a time.
std::string packed(const std::vector<double>& values, int digits, DType dtype) {
  static const char* alphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const std::size_t width = dtype == DType::float64 ? 8 : 4;
  std::vector<unsigned char> bytes(values.size() * width);
  for (std::size_t i = 0; i < values.size(); ++i) {
    // 9 digits give back every float32: no rounding to do.
    const double v = width == 4 && digits >= 9 ? values[i] : round_to(values[i], digits);
    std::uint64_t bits = 0;
    if (width == 8) {
      std::memcpy(&bits, &v, 8);
    } else {
      const float f = float(v);
      std::uint32_t b32;
      std::memcpy(&b32, &f, 4);
      bits = b32;
    }
    for (std::size_t k = 0; k < width; ++k)  // little-endian whatever the host
      bytes[i * width + k] = (unsigned char)(bits >> (8 * k));
  }
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::uint32_t n =
        std::uint32_t(bytes[i]) << 16 |
        (i + 1 < bytes.size() ? std::uint32_t(bytes[i + 1]) << 8 : 0) |
        (i + 2 < bytes.size() ? std::uint32_t(bytes[i + 2]) : 0);
    out += alphabet[(n >> 18) & 63];
    out += alphabet[(n >> 12) & 63];
    out += i + 1 < bytes.size() ? alphabet[(n >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? alphabet[n & 63] : '=';
  }
  return out;
}

json token_json(const TokenText& t) {
  return {{"id", t.id}, {"text", t.text}};
}

json candidate_json(const Candidate& c, int digits) {
  return {{"id", c.id}, {"text", c.text}, {"prob", round_to(c.prob, digits)}};
}

// The model's sizes ({} before the first step), and the family options that
// change what a reader redoes or draws, written only when a model has them
// (a Llama-style trace is unchanged): qk_norm; layer_window, per layer the
// sliding window (0: full attention), which the masked scores depend on; and
// layer_rope, per layer whether q and k are rotated.
json config_json(const std::optional<Config>& config) {
  if (!config) return json::object();
  const Config& c = *config;
  json o = {{"vocab_size", c.vocab_size}, {"d_model", c.d_model},
            {"n_layers", c.n_layers},     {"n_heads", c.n_heads},
            {"n_kv_heads", c.n_kv_heads}, {"head_dim", c.head_dim()},
            {"n_rep", c.n_rep()},         {"d_ff", c.d_ff},
            {"max_len", c.max_len},       {"rope_theta", c.rope_theta},
            {"norm_eps", c.norm_eps}};
  if (c.qk_norm) o["qk_norm"] = true;
  std::vector<std::size_t> windows;
  std::vector<bool> rope;
  for (std::size_t l = 0; l < c.n_layers; ++l) {
    windows.push_back(c.layer_window(l));
    rope.push_back(c.layer_rope(l));
  }
  if (std::any_of(windows.begin(), windows.end(), [](std::size_t w) { return w > 0; }))
    o["layer_window"] = windows;
  if (std::find(rope.begin(), rope.end(), false) != rope.end()) o["layer_rope"] = rope;
  return o;
}

// K/V head i serves query heads i*G .. i*G + G-1.
json head_groups_json(const std::optional<Config>& config) {
  json groups = json::array();
  const std::size_t Hkv = config ? config->n_kv_heads : 0,
                    G = config ? config->n_rep() : 1;
  for (std::size_t i = 0; i < Hkv; ++i) {
    json g = json::array();
    for (std::size_t r = 0; r < G; ++r) g.push_back(i * G + r);
    groups.push_back(g);
  }
  return groups;
}

json snapshot_json(const Snapshot& snap, int digits, DType dtype) {
  json o = {{"name", snap.name},
            {"layer", snap.layer},
            {"shape", snap.shape},
            {"data", packed(snap.data, digits, dtype)}};
  if (!snap.heads.empty() || snap.shape.size() == 4) o["heads"] = snap.heads;
  if (!snap.grad.empty()) o["grad"] = packed(snap.grad, digits, dtype);
  return o;
}

json graph_json(const OpGraph& graph) {
  json nodes = json::array();
  for (const OpNode& n : graph.nodes) {
    json o = {{"id", n.id},
              {"op", n.op},
              {"inputs", n.inputs},
              {"shape", n.shape},
              {"dtype", dtype_name(n.dtype)},
              {"bytes", n.bytes}};
    if (n.layer >= 0) o["layer"] = n.layer;
    if (!n.name.empty()) o["name"] = n.name;
    nodes.push_back(std::move(o));
  }
  return {{"nodes", std::move(nodes)}};
}

json step_json(const TraceStep& s, std::size_t window_offset, int digits, DType dtype) {
  json step;
  step["index"] = s.index;
  step["kind"] = s.kind;
  step["start"] = s.start;
  json tokens = json::array();
  for (const TokenText& tok : s.tokens) tokens.push_back(token_json(tok));
  step["tokens"] = tokens;
  step["positions"] = s.positions;
  step["window_offset"] = window_offset;
  step["keys"] = {{"start", s.key_start}, {"count", s.keys}};
  step["rows"] = {{"start", s.rows_start}, {"count", s.rows_count}};
  step["cache"] = {{"mode", s.cache_mode},
                   {"shape", s.cache_shape},
                   {"length", s.cache_length},
                   {"bytes", s.cache_bytes},
                   {"per_layer", s.cache_bytes_per_layer}};
  step["repeat_kv"] = {{"ops", s.graph.count("repeat_kv")},
                       {"bytes", s.graph.bytes_written("repeat_kv")},
                       {"read_bytes", s.graph.bytes_read_after("repeat_kv")}};
  json snaps = json::array();
  for (const Snapshot& snap : s.snapshots)
    snaps.push_back(snapshot_json(snap, digits, dtype));
  step["snapshots"] = std::move(snaps);
  json top = json::array();
  for (const Candidate& c : s.top_k) top.push_back(candidate_json(c, digits));
  step["top_k"] = top;
  step["next"] = s.next ? candidate_json(*s.next, digits) : json(nullptr);
  if (s.log_prob) step["log_prob"] = round_to(*s.log_prob, digits);
  step["graph"] = graph_json(s.graph);
  return step;
}

json cache_link_json(const CacheLink& l) {
  return {{"layer", l.layer},
          {"tensor", l.tensor},
          {"from", {{"step", l.from_step}, {"node", l.from_node}}},
          {"to", {{"step", l.to_step}, {"node", l.to_node}}}};
}

}  // namespace

std::string Tracer::to_json(int indent) const {
  const Impl& t = *impl_;
  const int digits = t.options.precision > 0     ? t.options.precision
                     : t.dtype == DType::float32 ? 9
                                                 : 17;
  json j;
  j["format"] = "glassllm-trace";
  j["version"] = format_version;
  j["config"] = config_json(t.config);
  j["dtype"] = dtype_name(t.dtype);
  j["attention"] = t.attention.empty() ? "repeat_kv" : t.attention;
  j["head_groups"] = head_groups_json(t.config);
  j["options"] = {{"layers", t.options.layers},       {"heads", t.options.heads},
                  {"precision", t.options.precision}, {"top_k", t.options.top_k},
                  {"grads", t.options.grads},         {"vectors", t.options.vectors}};
  json sequence = json::array();
  for (const TokenText& tok : t.sequence) sequence.push_back(token_json(tok));
  j["sequence"] = sequence;
  json steps = json::array();
  for (std::size_t i = 0; i < t.steps.size(); ++i)
    steps.push_back(step_json(t.steps[i], t.window_offset[i], digits, t.dtype));
  j["steps"] = std::move(steps);
  json links = json::array();
  for (const CacheLink& l : t.links) links.push_back(cache_link_json(l));
  j["cache_links"] = std::move(links);
  return j.dump(indent);
}

void Tracer::write(const std::string& path) const {
  write_file_safely(path, to_json());
}

}  // namespace glassllm
