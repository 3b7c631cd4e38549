// memory.cpp: `glassllm memory`: what one decode step moves, for a model
// shape. The K/V cache bytes come from docs/design.md's formula and from a cache
// actually filled; the repeat_kv figures are counted on the op graph of a
// real decode step (an attention-only stack of that shape, run through the
// engine in float32 with an OpGraphRecorder), then scaled to the element
// size asked for.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>

#include "cli/cli.h"
#include "cli/options.h"
#include "glassllm/io/budget.h"
#include "glassllm/io/checkpoint.h"
#include "glassllm/io/files.h"
#include "glassllm/trace/tracer.h"

namespace glassllm::cli {

Cache filled_caches(const StackShape& s, std::size_t filled, DType dtype) {
  Cache caches(s.layers, KVCache(CacheMode::preallocated, s.ctx));
  if (filled == 0) return caches;
  // One random block, appended (copied) into every layer's K and V: the
  // values do not matter here, only that they are real numbers in memory.
  Tensor block = randn({1, s.kv_heads, filled, s.head_dim}, 1, dtype);
  for (KVCache& c : caches) c.append(block, block);
  return caches;
}

namespace {

struct MemoryArgs {
  std::string dir;  // a checkpoint folder: its config.json gives the shape
  std::string preset;
  std::optional<std::string> dtype;  // default: the preset's (float16), else float32
  std::size_t n_layers = 4, n_heads = 4, n_kv_heads = 2, head_dim = 32;
  std::size_t ctx = 0;  // 0: the preset's context, else 128
};

struct StepFigures {
  OpGraph graph;
  std::size_t cache_bytes = 0, cache_bytes_per_layer = 0;
};

// One decode step of an attention-only stack, recorded: every layer's cache
// holds ctx-1 positions; the step appends one (in place, a preallocated
// cache) and attends with one query over all ctx keys.
StepFigures decode_step(const StackShape& s, Attention path) {
  no_grad guard;
  Cache caches = filled_caches(s, s.ctx - 1, DType::float32);
  Tensor q = randn({1, s.heads, 1, s.head_dim}, 2);
  Tensor kv_new = randn({1, s.kv_heads, 1, s.head_dim}, 3);
  StepFigures f;
  {
    OpGraphRecorder recorder;
    for (std::size_t l = 0; l < s.layers; ++l) {
      recorder.set_layer(int(l));
      caches[l].append(kv_new, kv_new);
      // The result is dropped at once: each layer's copies are freed before
      // the next layer makes its own.
      attend(q, caches[l].k(), caches[l].v(), s.ctx - 1, 0, path, l);
    }
    f.graph = recorder.graph();
  }
  f.cache_bytes_per_layer = caches[0].nbytes();
  for (const KVCache& c : caches) f.cache_bytes += c.nbytes();
  return f;
}

std::string mib(double bytes) {
  char buf[64];
  if (bytes > 0 && bytes < 1024.0 * 1024)
    std::snprintf(buf, sizeof buf, "%.2f KiB", bytes / 1024);
  else if (bytes >= 1024.0 * 1024 * 1024)
    std::snprintf(buf, sizeof buf, "%.2f MiB (%.2f GiB)", bytes / (1 << 20),
                  bytes / (1 << 30));
  else
    std::snprintf(buf, sizeof buf, "%.2f MiB", bytes / (1 << 20));
  return buf;
}

std::size_t element_size(const std::string& dtype) {
  if (dtype == "float16" || dtype == "f16" || dtype == "bfloat16" || dtype == "bf16")
    return 2;
  if (dtype == "float32" || dtype == "f32") return 4;
  if (dtype == "float64" || dtype == "f64") return 8;
  throw std::invalid_argument("memory: unknown --dtype '" + dtype +
                              "'; expected float16, bfloat16, float32 or float64");
}

// The shape and element type to count: a preset's, a checkpoint's or the
// flags', in that order of precedence for the shape, then --ctx and --dtype.
struct MemoryShape {
  StackShape stack;
  std::string dtype = "float32";
  std::string dtype_origin;         // "": given by --dtype or the plain default
  std::vector<std::size_t> window;  // a checkpoint's per-layer sliding windows
};

MemoryShape shape_to_count(const MemoryArgs& a) {
  MemoryShape m;
  StackShape& s = m.stack;
  s = {a.n_layers, a.n_heads, a.n_kv_heads, a.head_dim, 128};
  // A preset is a model as it is deployed: its shape and the dtype its
  // weights and cache are stored in, which --dtype may still override.
  if (a.preset == "exaone-4.0-1.2b") {
    s = {30, 32, 8, 64,
         4096};  // LG AI Research's EXAONE 4.0 1.2B: GQA, 4 query heads per K/V head
    m.dtype = "float16";  // as released, and as the Core ML article measured it
    m.dtype_origin = " (the preset's dtype; --dtype to change)";
  } else if (!a.preset.empty()) {
    throw std::invalid_argument("memory: unknown --preset '" + a.preset +
                                "'; known: exaone-4.0-1.2b");
  }
  if (!a.dir.empty()) {
    // A real checkpoint's shape, from its config.json (read, not the weights).
    const std::string path = (std::filesystem::path(a.dir) / "config.json").string();
    Config cfg;
    std::string text;
    try {
      text = read_regular_file(path, 64ull << 20, "a config file");
      cfg = config_from_json(text).first;
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(a.dir + "/" + e.what());
    }
    s = {cfg.n_layers, cfg.n_heads, cfg.n_kv_heads, cfg.head_dim(),
         std::min<std::size_t>(cfg.max_len, 4096)};
    m.window = cfg.window;
    // As deployed: the dtype its weights are stored in (config_from_json has
    // checked it is one of these four).
    const auto j = nlohmann::json::parse(text);
    const char* key = j.contains("torch_dtype") ? "torch_dtype" : "dtype";
    if (j.contains(key) && j[key].is_string()) {
      m.dtype = j[key].get<std::string>();
      m.dtype_origin = " (config.json's " + std::string(key) + "; --dtype to change)";
    }
  }
  if (a.dtype) {
    m.dtype = *a.dtype;
    m.dtype_origin.clear();
  }
  if (a.ctx > 0) s.ctx = a.ctx;
  if (s.layers == 0 || s.heads == 0 || s.kv_heads == 0 || s.head_dim == 0 || s.ctx == 0)
    throw std::invalid_argument(
        "memory: layers, heads, K/V heads, head_dim and --ctx must be positive");
  if (s.heads % s.kv_heads != 0)
    throw std::invalid_argument("memory: --n-kv-heads (" + std::to_string(s.kv_heads) +
                                ") must divide --n-heads (" + std::to_string(s.heads) +
                                ")");
  return m;
}

// What the recorded step allocates, in float32: every layer's K and V cache,
// the random block that fills them, repeat_kv's copies of one layer's K and
// V, and its scores and probabilities.
void check_recording_fits(const StackShape& s) {
  const double L = double(s.layers), H = double(s.heads), Hkv = double(s.kv_heads);
  const double row = double(s.ctx) * double(s.head_dim) * 4;
  check_fits_in_memory("recording a decode step of this shape (context " +
                           std::to_string(s.ctx) + ", " + std::to_string(s.layers) +
                           " layers)",
                       (2 * L * Hkv + Hkv + 2 * H) * row + 2 * H * double(s.ctx) * 4,
                       "choose a smaller --ctx or fewer --n-layers");
}

// A hybrid model's sliding layers (EXAONE 4.0's local attention) see only
// their last `window` positions, so their caches need hold no more: what a
// cache that drops the older positions would keep, beside the full one.
void print_sliding_savings(const MemoryShape& m, double per_layer, std::size_t es) {
  const StackShape& s = m.stack;
  std::size_t sliding = 0;
  double kept = 0;
  for (std::size_t l = 0; l < s.layers; ++l) {
    const std::size_t w = l < m.window.size() ? m.window[l] : 0;
    if (w > 0) ++sliding;
    const std::size_t positions = w > 0 ? std::min(w, s.ctx) : s.ctx;
    kept += 2.0 * positions * double(s.kv_heads * s.head_dim * es);
  }
  if (sliding == 0) return;
  const double full = per_layer * double(s.layers);
  std::printf(
      "\nSliding-window layers: %zu of %zu see only their last %zu positions; a cache\n"
      "that keeps only those holds %s instead of %s (%.1f %% saved).\n",
      sliding, s.layers, *std::max_element(m.window.begin(), m.window.end()),
      mib(kept).c_str(), mib(full).c_str(), 100.0 * (full - kept) / full);
}

int memory(const MemoryArgs& a) {
  const MemoryShape m = shape_to_count(a);
  const StackShape& s = m.stack;
  const std::size_t es = element_size(m.dtype);
  const double scale = double(es) / 4.0;  // recorded in float32
  check_recording_fits(s);

  StepFigures rep = decode_step(s, Attention::repeat_kv);
  StepFigures grp = decode_step(s, Attention::grouped);

  std::printf(
      "One decode step, batch 1: %zu layers, %zu query heads, %zu K/V heads (G = %zu),\n"
      "head_dim %zu, context %zu, %s%s\n",
      s.layers, s.heads, s.kv_heads, s.heads / s.kv_heads, s.head_dim, s.ctx,
      m.dtype.c_str(), m.dtype_origin.c_str());
  std::printf(
      "(counted on the op graph of a real decode step in float32, scaled by %zu/4)\n\n",
      es);
  // docs/design.md: 2 * B * L * m * Hkv * hd * bytes_per_element.
  const double per_layer = 2.0 * 1 * s.ctx * s.kv_heads * s.head_dim * double(es);
  std::printf("K/V cache, 2 * B * L * m * Hkv * hd * %zu bytes:\n", es);
  std::printf("  per layer  %-28s recorded %s\n", mib(per_layer).c_str(),
              mib(double(rep.cache_bytes_per_layer) * scale).c_str());
  std::printf("  total      %-28s recorded %s\n\n",
              mib(per_layer * double(s.layers)).c_str(),
              mib(double(rep.cache_bytes) * scale).c_str());

  std::printf("  %-10s %10s  %-26s %s\n", "K/V path", "repeat ops", "bytes materialised",
              "written + read by the next op");
  for (const auto& [name, f] :
       {std::pair{"repeat_kv", &rep}, std::pair{"grouped", &grp}}) {
    double written = double(f->graph.bytes_written("repeat_kv")) * scale;
    double read = double(f->graph.bytes_read_after("repeat_kv")) * scale;
    std::printf("  %-10s %10zu  %-26s %s\n", name, f->graph.count("repeat_kv"),
                mib(written).c_str(), mib(written + read).c_str());
  }
  print_sliding_savings(m, per_layer, es);
  return 0;
}

}  // namespace

Command register_memory(CLI::App& app) {
  auto a = std::make_shared<MemoryArgs>();
  CLI::App* sub = app.add_subcommand(
      "memory",
      "Bytes one decode step moves: the K/V cache, and what repeat_kv copies on each "
      "K/V path (counted on a recorded decode step).");
  sub->add_option("dir", a->dir,
                  "A checkpoint folder whose config.json gives the shape (--ctx default: "
                  "its max_position_embeddings, at most 4096)");
  sub->add_option("--preset", a->preset, "A model shape: exaone-4.0-1.2b");
  add_whole(sub, "--n-layers", a->n_layers, "Transformer blocks", 1, kMaxSize);
  add_whole(sub, "--n-heads", a->n_heads, "Query heads", 1, kMaxSize);
  add_whole(sub, "--n-kv-heads", a->n_kv_heads, "Key/value heads", 1, kMaxSize);
  add_whole(sub, "--head-dim", a->head_dim, "Head dimension", 1, kMaxSize);
  add_whole(sub, "--ctx", a->ctx,
            "Positions in the cache (default: the preset's, else 128)", 1, kMaxSize)
      ->default_str("");
  sub->add_option(
      "--dtype", a->dtype,
      "float16, bfloat16, float32 or float64 (default: the preset's, float16 "
      "for exaone-4.0-1.2b; a folder's config.json torch_dtype; else float32)");
  return {sub, [a] { return memory(*a); }};
}

}  // namespace glassllm::cli
