// model.cpp: the GlassLM model: its configuration checks, the weights and
// their initialisation, the forward pass in the order of docs/design.md's
// pseudo-code, and the training loss. The K/V cache is in kv_cache.cpp,
// generation in generate.cpp.
//
// The forward is written with the engine's ops only (ops.h), so that every
// step is recorded on the autograd tape and a backward through the whole
// model needs nothing written here. Shapes are noted wherever they change,
// with B (batch), T (new tokens), H (query heads), Hkv (key/value heads),
// G = H / Hkv, hd (head dim) and m (keys attended over).
//
// Read ops.h first for what each op does; read tests/test_model.cpp for the
// equivalences this file promises (cached == full, grouped == repeat_kv).
#include "glassllm/model/model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "glassllm/engine/ops.h"
#include "glassllm/model/forward_observer.h"

namespace glassllm {

// ---- configuration ------------------------------------------------------------------

void Config::validate() const {
  auto fail = [](const std::string& why) {
    throw std::invalid_argument("config: " + why);
  };
  auto positive = [&](const char* field, std::size_t value) {
    if (value == 0) fail(std::string(field) + " (0) must be positive");
  };
  positive("vocab_size", vocab_size);
  positive("d_model", d_model);
  positive("n_layers", n_layers);
  positive("n_heads", n_heads);
  positive("n_kv_heads", n_kv_heads);
  positive("d_ff", d_ff);
  positive("max_len", max_len);
  if (n_heads % n_kv_heads != 0)
    fail("n_kv_heads (" + std::to_string(n_kv_heads) + ") must divide n_heads (" +
         std::to_string(n_heads) + ")");
  if (explicit_head_dim == 0 && d_model % n_heads != 0)
    fail("n_heads (" + std::to_string(n_heads) + ") must divide d_model (" +
         std::to_string(d_model) + ")");
  if (head_dim() % 2 != 0)
    fail("head_dim (" +
         (explicit_head_dim ? std::string("explicit, ")
                            : std::string("d_model / n_heads = ")) +
         std::to_string(head_dim()) +
         ") must be even: RoPE rotates pairs (i, i + head_dim/2)");
  if (!(rope_scaling.factor >= 1))
    fail("rope_scaling factor (" + std::to_string(rope_scaling.factor) +
         ") must be >= 1");
  if (rope_scaling.type == RopeScaling::Type::llama3 &&
      !(rope_scaling.high_freq_factor > rope_scaling.low_freq_factor &&
        rope_scaling.low_freq_factor > 0 &&
        rope_scaling.original_max_position_embeddings > 0))
    fail(
        "rope_scaling llama3 needs high_freq_factor > low_freq_factor > 0 and "
        "original_max_position_embeddings > 0");
  if (!(rope_theta > 0))
    fail("rope_theta (" + std::to_string(rope_theta) + ") must be positive");
  if (!(norm_eps >= 0)) fail("norm_eps (" + std::to_string(norm_eps) + ") must be >= 0");
  if (!window.empty() && window.size() != n_layers)
    fail("window lists " + std::to_string(window.size()) +
         " layers, expected n_layers (" + std::to_string(n_layers) + ") or none");
  if (!rope.empty() && rope.size() != n_layers)
    fail("rope lists " + std::to_string(rope.size()) + " layers, expected n_layers (" +
         std::to_string(n_layers) + ") or none");
}

std::vector<double> rope_inv_freq(const Config& cfg) {
  const std::size_t hd = cfg.head_dim();
  const RopeScaling& r = cfg.rope_scaling;
  std::vector<double> inv_freq(hd / 2);
  const double pi = 3.14159265358979323846;
  for (std::size_t i = 0; i < hd / 2; ++i) {
    double f = std::pow(cfg.rope_theta, -2.0 * double(i) / double(hd));
    if (r.type == RopeScaling::Type::linear) {
      f /= r.factor;
    } else if (r.type == RopeScaling::Type::llama3) {
      // Long wavelengths (low frequencies) are slowed by `factor`, short ones
      // kept, the band between blended (model.h; transformers'
      // _compute_llama3_parameters).
      const double L = r.original_max_position_embeddings;
      const double wavelength = 2 * pi / f;
      if (wavelength > L / r.low_freq_factor) {
        f /= r.factor;
      } else if (wavelength >= L / r.high_freq_factor) {
        double smooth = (L / wavelength - r.low_freq_factor) /
                        (r.high_freq_factor - r.low_freq_factor);
        f = (1 - smooth) * f / r.factor + smooth * f;
      }
    }
    inv_freq[i] = f;
  }
  return inv_freq;
}

const char* attention_name(Attention a) {
  if (a == Attention::custom) return "custom";
  return a == Attention::repeat_kv ? "repeat_kv" : "grouped";
}

Attention parse_attention(const std::string& name) {
  if (name == "repeat_kv") return Attention::repeat_kv;
  if (name == "grouped") return Attention::grouped;
  throw std::invalid_argument("attention: unknown path '" + name +
                              "'; expected repeat_kv or grouped");
}

// ---- weights ---------------------------------------------------------------------

namespace {

// A block's weights for a config, in named_parameters() order: each name
// after "model.layers.<l>." and its field. The one place that lists them;
// the model family decides which norms there are (model.h, Config).
std::vector<std::pair<std::string, Tensor LayerWeights::*>> layer_slots(
    const Config& cfg) {
  using W = LayerWeights;
  std::vector<std::pair<std::string, Tensor W::*>> s;
  if (cfg.norm_placement == NormPlacement::pre)
    s.push_back({"input_layernorm.weight", &W::input_layernorm});
  s.push_back({"self_attn.q_proj.weight", &W::q_proj});
  s.push_back({"self_attn.k_proj.weight", &W::k_proj});
  s.push_back({"self_attn.v_proj.weight", &W::v_proj});
  if (cfg.qkv_bias) {
    s.push_back({"self_attn.q_proj.bias", &W::q_bias});
    s.push_back({"self_attn.k_proj.bias", &W::k_bias});
    s.push_back({"self_attn.v_proj.bias", &W::v_bias});
  }
  s.push_back({"self_attn.o_proj.weight", &W::o_proj});
  if (cfg.qk_norm) {
    s.push_back({"self_attn.q_norm.weight", &W::q_norm});
    s.push_back({"self_attn.k_norm.weight", &W::k_norm});
  }
  s.push_back({"post_attention_layernorm.weight", &W::post_attention_layernorm});
  if (cfg.norm_placement == NormPlacement::post)
    s.push_back({"post_feedforward_layernorm.weight", &W::post_feedforward_layernorm});
  s.push_back({"mlp.gate_proj.weight", &W::gate_proj});
  s.push_back({"mlp.up_proj.weight", &W::up_proj});
  s.push_back({"mlp.down_proj.weight", &W::down_proj});
  return s;
}

// Calls f(name, weight) for every weight of `model` (const or not), in the
// fixed order of named_parameters().
template <class Model, class F>
void for_each_weight(Model& model, F f) {
  f("model.embed_tokens.weight", model.embed_tokens);
  const auto slots = layer_slots(model.config());
  for (std::size_t l = 0; l < model.layers.size(); ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    for (const auto& [name, field] : slots) f(p + name, model.layers[l].*field);
  }
  f("model.norm.weight", model.norm);
  f("lm_head.weight", model.lm_head);
}

}  // namespace

namespace {

// A weight's shape from its name (docs/design.md's table): projections are
// [out, in].
Shape weight_shape(const Config& cfg, const std::string& name) {
  const std::size_t D = cfg.d_model, hd = cfg.head_dim(), F = cfg.d_ff;
  const std::size_t H = cfg.n_heads, Hkv = cfg.n_kv_heads, V = cfg.vocab_size;
  auto is = [&](const char* part) { return name.find(part) != std::string::npos; };
  if (is("embed_tokens") || is("lm_head")) return {V, D};
  if (is("q_norm") || is("k_norm")) return {hd};  // per head, over head_dim
  if (is("norm")) return {D};
  if (is("q_proj.bias")) return {H * hd};
  if (is("k_proj.bias") || is("v_proj.bias")) return {Hkv * hd};
  if (is("q_proj")) return {H * hd, D};
  if (is("k_proj") || is("v_proj")) return {Hkv * hd, D};
  if (is("o_proj")) return {D, H * hd};
  if (is("gate_proj") || is("up_proj")) return {F, D};
  return {D, F};  // down_proj
}

}  // namespace

std::vector<std::pair<std::string, Shape>> weight_table(const Config& cfg) {
  std::vector<std::pair<std::string, Shape>> table;
  auto add = [&](const std::string& name) {
    table.emplace_back(name, weight_shape(cfg, name));
  };
  add("model.embed_tokens.weight");
  const auto slots = layer_slots(cfg);
  for (std::size_t l = 0; l < cfg.n_layers; ++l)
    for (const auto& slot : slots)
      add("model.layers." + std::to_string(l) + "." + slot.first);
  add("model.norm.weight");
  add("lm_head.weight");
  return table;
}

// The initialisation: one random stream, drawn in named_parameters() order,
// so a seed fixes every weight (and float32 weights are the rounded float64
// ones). Norm weights start at 1, the identity scaling, and draw nothing;
// biases (Qwen2's q/k/v) start at 0 and draw nothing either, so a model
// without them draws the same weights as before they existed.
GlassLM::GlassLM(const Config& cfg, std::uint64_t seed, DType dtype)
    : GlassLM(cfg, dtype,
              [rng = Rng(seed), dtype](const std::string& name,
                                       const Shape& shape) mutable -> Tensor {
                if (name.find("norm") != std::string::npos) return ones(shape, dtype);
                if (name.ends_with(".bias")) return zeros(shape, dtype);
                return rng.normal(shape, 0.0, 0.02, dtype);
              }) {}

GlassLM GlassLM::from_weights(const Config& cfg, DType dtype, const WeightSource& weight,
                              std::shared_ptr<const Weights16> weights16) {
  return GlassLM(cfg, dtype, weight, std::move(weights16));
}

GlassLM::GlassLM(const Config& cfg, DType dtype, const WeightSource& weight,
                 std::shared_ptr<const Weights16> w16)
    : weights16(std::move(w16)), cfg_(cfg), dtype_(dtype) {
  cfg_.validate();
  if (weights16 && (dtype != DType::float32 || weights16->layers.size() != cfg_.n_layers))
    throw std::invalid_argument(
        "GlassLM::from_weights: 16-bit weights need a float32 model of as many layers");
  layers.resize(cfg_.n_layers);
  for_each_weight(*this, [&](const std::string& name, Tensor& t) {
    const Shape shape = weight_shape(cfg_, name);
    Tensor given = weight(name, shape);
    // A weight kept in 16 bits has no float32 Tensor (weights16.h).
    if (const Weight16* held = weights16 ? weights16->find(name) : nullptr;
        held && !given.defined()) {
      if (Shape{held->rows, held->cols} != shape)
        throw std::invalid_argument("GlassLM::from_weights: 16-bit weight '" + name +
                                    "' is " + shape_str({held->rows, held->cols}) +
                                    ", expected " + shape_str(shape));
      return;
    }
    if (!given.defined() || given.shape() != shape || given.dtype() != dtype)
      throw std::invalid_argument(
          "GlassLM::from_weights: weight '" + name + "' is " +
          (given.defined() ? shape_str(given.shape()) + " " + dtype_name(given.dtype())
                           : std::string("undefined")) +
          ", expected " + shape_str(shape) + " " + dtype_name(dtype));
    t = given.detach();
    t.requires_grad_();
  });
}

std::vector<std::pair<std::string, Tensor>> GlassLM::named_parameters() const {
  std::vector<std::pair<std::string, Tensor>> out;
  for_each_weight(*this, [&](const std::string& name, const Tensor& t) {
    out.emplace_back(name, t);
  });
  return out;
}

Tensor& GlassLM::parameter(const std::string& name) {
  Tensor* found = nullptr;
  for_each_weight(*this, [&](const std::string& n, Tensor& t) {
    if (n == name) found = &t;
  });
  if (!found)
    throw std::invalid_argument("parameter: no weight named '" + name +
                                "' (names look like "
                                "'model.layers.0.self_attn.q_proj.weight')");
  return *found;
}

const Tensor& GlassLM::parameter(const std::string& name) const {
  return const_cast<GlassLM*>(this)->parameter(name);
}

std::size_t GlassLM::parameter_count() const {
  std::size_t n = 0;
  for_each_weight(*this, [&](const std::string& name, const Tensor& t) {
    n += t.defined() ? t.size() : weights16->find(name)->bits.size();
  });
  return n;
}

GlassLM GlassLM::to(DType dtype) const {
  if (weights16)
    throw std::invalid_argument(
        "to: the model keeps weights in 16 bits; load it with float32 weights");
  GlassLM copy = *this;  // copies the handles; each weight is replaced below
  copy.dtype_ = dtype;
  for_each_weight(copy, [dtype](const std::string&, Tensor& t) {
    // A new array, never a view: astype makes one when the dtype changes; for
    // the same dtype (where astype gives a view) the elements are copied.
    Tensor fresh;
    if (t.dtype() != dtype) {
      fresh = astype(t, dtype);
    } else {
      fresh = zeros(t.shape(), dtype);
      if (dtype == DType::float32)
        std::copy_n(t.data<float>(), t.size(), fresh.mutable_data<float>());
      else
        std::copy_n(t.data<double>(), t.size(), fresh.mutable_data<double>());
    }
    t = fresh.requires_grad_();
  });
  return copy;
}

// ---- the forward pass ------------------------------------------------------------
//
// Read bottom-up: the argument checks, the small helpers, attend (the one
// place the two K/V paths differ), the two halves of a block, and forward
// itself at the end, which reads like the pseudo-code in model.h.

namespace {

std::int64_t i64(std::size_t v) {
  return std::int64_t(v);
}

// Every check forward() makes, in one place; each message names what is
// wrong and, when known, the fix. Returns the ids [B, T] flattened row-major.
std::vector<std::int64_t> check_forward_args(const Config& cfg, const TokenBatch& tokens,
                                             const Cache* cache, std::size_t start) {
  if (tokens.empty() || tokens[0].empty())
    throw std::invalid_argument("forward: no tokens; pass at least one row with one id");
  const std::size_t B = tokens.size(), T = tokens[0].size();
  std::vector<std::int64_t> ids;
  ids.reserve(B * T);
  for (std::size_t b = 0; b < B; ++b) {
    if (tokens[b].size() != T)
      throw std::invalid_argument("forward: row " + std::to_string(b) + " has " +
                                  std::to_string(tokens[b].size()) +
                                  " tokens but row 0 has " + std::to_string(T) +
                                  "; rows must have equal lengths");
    for (std::size_t t = 0; t < T; ++t) {
      std::int64_t id = tokens[b][t];
      if (id < 0 || id >= i64(cfg.vocab_size))
        throw std::invalid_argument("forward: token id " + std::to_string(id) +
                                    " at position (" + std::to_string(b) + ", " +
                                    std::to_string(t) + ") is out of range [0, " +
                                    std::to_string(cfg.vocab_size) + ")");
      ids.push_back(id);
    }
  }
  if (cache) {
    if (cache->size() != cfg.n_layers)
      throw std::invalid_argument(
          "forward: the cache has " + std::to_string(cache->size()) +
          " layers but the model has " + std::to_string(cfg.n_layers) +
          "; make it with new_cache()");
    std::size_t held = (*cache)[0].length();
    if (start != held)
      throw std::invalid_argument("forward: start is " + std::to_string(start) +
                                  " but the cache holds " + std::to_string(held) +
                                  " positions; pass start=" + std::to_string(held));
  }
  if (start + T > cfg.max_len)
    throw std::invalid_argument("forward: positions " + std::to_string(start) + ".." +
                                std::to_string(start + T - 1) + " exceed max_len " +
                                std::to_string(cfg.max_len) + " (start " +
                                std::to_string(start) + " + " + std::to_string(T) +
                                " tokens); crop the input to its last max_len tokens");
  return ids;
}

// rmsnorm(x) * weight, the norm before each half of a block and before the
// logits. [B, T, d_model] -> [B, T, d_model]
Tensor rms_norm(const Tensor& x, const Tensor& weight, double eps) {
  return mul(rmsnorm(x, eps), weight);
}

// One row of `heads` heads per position, then heads outermost:
// [B, T, heads*hd] -> [B, T, heads, hd] -> [B, heads, T, hd]
Tensor split_heads(const Tensor& x, std::size_t heads) {
  const std::int64_t hd = i64(x.dim(2) / heads);
  return permute(reshape(x, {i64(x.dim(0)), i64(x.dim(1)), i64(heads), hd}),
                 {0, 2, 1, 3});
}

// The inverse: [B, H, T, hd] -> [B, T, H, hd] -> [B, T, H*hd]
Tensor merge_heads(const Tensor& x) {
  const std::int64_t B = i64(x.dim(0)), H = i64(x.dim(1)), T = i64(x.dim(2));
  return reshape(permute(x, {0, 2, 1, 3}), {B, T, H * i64(x.dim(3))});
}

// Attention::custom: calls the user's function and checks its result's shape.
Tensor custom_attention_out(const AttentionFn& fn, const Tensor& q, const Tensor& keys,
                            const Tensor& values, std::size_t query_start,
                            std::size_t key_start) {
  if (!fn)
    throw std::invalid_argument(
        "forward: attention is custom but custom_attention is not set; assign a function "
        "(model.h, AttentionFn) or choose repeat_kv or grouped");
  Tensor out = fn(q, keys, values, query_start, key_start);
  if (!out.defined() || out.shape() != q.shape())
    throw std::invalid_argument(
        "forward: custom_attention returned " +
        (out.defined() ? shape_str(out.shape()) : std::string("an undefined tensor")) +
        "; expected q's shape [B, H, T, hd] = " + shape_str(q.shape()));
  return out;
}

}  // namespace

// The one place the two K/V sharing paths differ. Both compute, per query
// head h (meeting K/V head h / G):
//   scores = q k^T / sqrt(hd), probs = softmax over the keys, where a query
//   sees a key iff the key's position <= the query's and, on a sliding-window
//   layer, > the query's - window (causal_softmax: the hidden scores count as
//   -inf, their probabilities are exactly 0),
//   out = probs v.
Tensor attend(const Tensor& q, const Tensor& keys, const Tensor& values,
              std::size_t start, std::size_t key_start, Attention path, std::size_t layer,
              std::size_t window) {
  if (q.ndim() != 4 || keys.ndim() != 4 || keys.shape() != values.shape() ||
      q.dim(0) != keys.dim(0) || q.dim(3) != keys.dim(3) || keys.dim(1) == 0 ||
      q.dim(1) % keys.dim(1) != 0)
    throw std::invalid_argument(
        "attend: expected q [B, H, T, hd] and keys, values [B, Hkv, m, hd] with Hkv "
        "dividing H, got " +
        shape_str(q.shape()) + ", " + shape_str(keys.shape()) + ", " +
        shape_str(values.shape()));
  const std::size_t B = q.dim(0), H = q.dim(1), T = q.dim(2), hd = q.dim(3);
  const std::size_t G = H / keys.dim(1), m = keys.dim(2);
  // The tracer shows scores and probabilities as [B, H, T, m] on both paths.
  const Shape per_head{B, H, T, m};

  Tensor out;
  if (path == Attention::repeat_kv) {
    // Reference path. [B, Hkv, m, hd] -> [B, H, m, hd]: K/V head i copied G
    // times, so query head h meets K/V head h / G.
    Tensor keys_rep = repeat_kv(keys, G), values_rep = repeat_kv(values, G);
    // [B, H, T, hd] @ [B, H, m, hd]^T -> [B, H, T, m]
    Tensor scores = matmul_t(q, keys_rep) * (1.0 / std::sqrt(double(hd)));
    trace::scores(layer, scores, per_head, start, key_start);
    Tensor probs = causal_softmax(scores, start, key_start, 0, window);  // [B, H, T, m]
    trace::snapshot("attn.softmax", layer, probs);
    out = matmul(probs, values_rep);  // [B, H, T, m] @ [B, H, m, hd] -> [B, H, T, hd]
  } else {
    // Grouped path, no copy of K or V: the engine's grouped_attention, which
    // stacks the G query heads of a K/V head as rows of one product
    // ([B, Hkv, G*T, hd]). It hands its scores and probabilities
    // [B, Hkv, G*T, m] to an active tracer; without one it may run a decode
    // step fused (ops.h), with the same bits.
    AttentionParts seen;
    out = grouped_attention(q, keys, values, start, key_start,
                            trace::active ? &seen : nullptr, window);
    trace::scores(layer, seen.scores, per_head, start, key_start);
    trace::snapshot("attn.softmax", layer, seen.probs, per_head);
  }
  return out;
}

namespace {

// Attention's core for block l, on the model's K/V path, with the layer's
// sliding window. A path supplied at run time (Attention::custom, model.h's
// AttentionFn) returns only its output, so the tracer sees no scores for it;
// it takes no window, so a sliding layer refuses it.
Tensor attention_core(const GlassLM& model, std::size_t l, const Tensor& q,
                      const Tensor& keys, const Tensor& values, std::size_t start,
                      std::size_t key_start) {
  const std::size_t window = model.config().layer_window(l);
  if (model.attention != Attention::custom)
    return attend(q, keys, values, start, key_start, model.attention, l, window);
  if (window > 0)
    throw std::invalid_argument(
        "forward: layer " + std::to_string(l) + " has a sliding window of " +
        std::to_string(window) +
        " and a custom attention path takes none; choose repeat_kv or grouped");
  return custom_attention_out(model.custom_attention, q, keys, values, start, key_start);
}

// x W^T for one of the model's projections [out, in]: [..., in] -> [..., out].
// The engine's linear on its float32/float64 Tensor `weight`, or, when the
// model keeps its projections in 16 bits (weights16.h), linear16 on the same
// weight there: layer l's `member` (nullptr: lm_head).
Tensor project(const GlassLM& model, const Tensor& x, const Tensor& weight,
               const Weight16 Weights16::Layer::*member, std::size_t l) {
  if (!model.weights16) return linear(x, weight);
  const Weights16& w16 = *model.weights16;
  return linear16(x, member ? w16.layers[l].*member : w16.lm_head);
}

// The attention half of block l on its input h (already normalised when the
// norm comes first), without its norm after or its residual add:
//   o_proj attention(h)     [B, T, d_model] -> [B, T, d_model]
// With a cache, the new keys and values are appended to it and the queries
// attend over everything it holds.
Tensor attention_block(const GlassLM& model, std::size_t l, const Tensor& h,
                       KVCache* cache, std::size_t start) {
  const Config& cfg = model.config();
  const LayerWeights& w = model.layers[l];
  // With cfg.qkv_bias (Qwen2), q, k and v have a bias: [B, T, N] + [N].
  using L = Weights16::Layer;
  auto qkv = [&](const Tensor& weight, const Tensor& bias, const Weight16 L::*half) {
    Tensor y = project(model, h, weight, half, l);
    return bias.defined() ? y + bias : y;
  };
  // [B, T, d_model] -> q [B, H, T, hd], k and v [B, Hkv, T, hd]
  Tensor q = split_heads(qkv(w.q_proj, w.q_bias, &L::q_proj), cfg.n_heads);
  Tensor k = split_heads(qkv(w.k_proj, w.k_bias, &L::k_proj), cfg.n_kv_heads);
  Tensor v = split_heads(qkv(w.v_proj, w.v_bias, &L::v_proj), cfg.n_kv_heads);
  if (cfg.qk_norm) {
    // QK-norm (EXAONE 4.0): every head's q and k scaled to unit RMS over
    // head_dim, times a learned [hd] weight, before RoPE. Shapes unchanged.
    q = rms_norm(q, w.q_norm, cfg.norm_eps);
    k = rms_norm(k, w.k_norm, cfg.norm_eps);
    // Recorded before RoPE turns them: each head's vector has RMS |weight|.
    trace::snapshot("attn.q_norm", l, q);
    trace::snapshot("attn.k_norm", l, k);
  }
  if (cfg.layer_rope(l)) {
    // Rotate by the absolute positions start .. start+T-1 (shapes unchanged),
    // with the frequencies of config.json's rope_scaling (e.g. Llama 3's).
    const std::vector<double> inv_freq = rope_inv_freq(cfg);  // [hd/2]
    q = rope(q, start, inv_freq);
    k = rope(k, start, inv_freq);
  }
  // Recorded as they enter the scores: any score is q . k / sqrt(hd).
  trace::snapshot("attn.q", l, q);
  trace::snapshot("attn.k", l, k);
  trace::snapshot("attn.v", l, v);

  // The keys and values to attend over, [B, Hkv, m, hd], and the absolute
  // position of key 0. Without a cache: the new tokens only (m = T, key j at
  // position start + j). With one: the whole history (key j at position j).
  Tensor keys = k, values = v;
  std::size_t key_start = start;
  if (cache) {
    cache->append(k, v);
    keys = cache->k();
    values = cache->v();
    key_start = 0;
    // A preallocated cache hands back its whole buffer, [B, Hkv, max_len, hd]:
    // m = max_len, and slots >= length() hold zeros. They are at positions
    // > start + T - 1, later than every query, so the causal mask hides them
    // and they get probability exactly 0. (llama.cpp also keeps a fixed K/V
    // buffer and masks the cells not written, but attends only over the
    // written cells, padded to a multiple of 32 or 256; here every step
    // reads the whole buffer, as docs/05 says.) A sliding-window layer keeps
    // every position too; the mask hides the ones behind its window.
  }

  // [B, H, T, hd] attending over [B, Hkv, m, hd] -> [B, H, T, hd]
  Tensor out = attention_core(model, l, q, keys, values, start, key_start);
  trace::snapshot("attn.out", l, out);
  // [B, T, H*hd] -> [B, T, d_model]
  return project(model, merge_heads(out), w.o_proj, &Weights16::Layer::o_proj, l);
}

// The MLP half of block l (SwiGLU) on its input h, without its norm or its
// residual add:
//   down_proj(silu(gate_proj h) * up_proj h)     [B, T, d_model]
Tensor mlp_block(const GlassLM& model, std::size_t l, const Tensor& h) {
  const LayerWeights& w = model.layers[l];
  using L = Weights16::Layer;
  // [B, T, d_model] -> [B, T, d_ff] (gate and up) -> [B, T, d_model]
  Tensor gate = project(model, h, w.gate_proj, &L::gate_proj, l);
  Tensor up = project(model, h, w.up_proj, &L::up_proj, l);
  return project(model, silu(gate) * up, w.down_proj, &L::down_proj, l);
}

// The model family's seam (docs/design.md, "Model families"): one half of a
// block, x + sublayer with its RMSNorm where cfg.norm_placement puts it:
//   pre  (Llama):       x + sublayer(rmsnorm(x) * norm_weight)
//   post (EXAONE 4.0):  x + rmsnorm(sublayer(x)) * norm_weight
template <class Sublayer>
Tensor residual_add(const Config& cfg, const Tensor& x, const Tensor& norm_weight,
                    Sublayer sublayer) {
  if (cfg.norm_placement == NormPlacement::pre)
    return x + sublayer(rms_norm(x, norm_weight, cfg.norm_eps));
  return x + rms_norm(sublayer(x), norm_weight, cfg.norm_eps);
}

// Which norm weight each half of block l uses; the names differ by family:
//   pre:  input_layernorm, then post_attention_layernorm (before the MLP)
//   post: post_attention_layernorm, then post_feedforward_layernorm
struct BlockPlan {
  const Tensor& attention_norm;
  const Tensor& mlp_norm;
};

BlockPlan block_plan(const Config& cfg, const LayerWeights& w) {
  if (cfg.norm_placement == NormPlacement::pre)
    return {w.input_layernorm, w.post_attention_layernorm};
  return {w.post_attention_layernorm, w.post_feedforward_layernorm};
}

}  // namespace

Tensor GlassLM::forward(const std::vector<std::int64_t>& tokens, Cache* cache,
                        std::size_t start) const {
  return forward(TokenBatch{tokens}, cache, start);
}

Tensor GlassLM::forward(const TokenBatch& tokens, Cache* cache, std::size_t start) const {
  std::vector<std::int64_t> ids = check_forward_args(cfg_, tokens, cache, start);
  const std::size_t B = tokens.size(), T = tokens[0].size();
  // An active tracer records this call as one step (nothing happens otherwise).
  trace::StepScope step(*this, ids, B, T, start, cache);

  Tensor x = embedding(embed_tokens, ids, {B, T});  // [B, T] -> [B, T, d_model]
  for (std::size_t l = 0; l < layers.size(); ++l) {
    trace::layer(int(l));
    trace::snapshot("resid.in", l, x);  // the residual stream entering block l
    const BlockPlan plan = block_plan(cfg_, layers[l]);
    KVCache* layer_cache = cache ? &(*cache)[l] : nullptr;
    x = residual_add(cfg_, x, plan.attention_norm, [&](const Tensor& h) {
      return attention_block(*this, l, h, layer_cache, start);
    });
    x = residual_add(cfg_, x, plan.mlp_norm,
                     [&](const Tensor& h) { return mlp_block(*this, l, h); });
  }
  trace::layer(-1);
  x = rms_norm(x, norm, cfg_.norm_eps);  // [B, T, d_model]
  // [B, T, d_model] -> [B, T, vocab_size]
  Tensor logits = project(*this, x, lm_head, nullptr, 0);
  step.finish(logits, cache);
  return logits;
}

// ---- training loss ---------------------------------------------------------------

Tensor GlassLM::loss(const TokenBatch& tokens, const TokenBatch& targets) const {
  if (targets.size() != tokens.size())
    throw std::invalid_argument("loss: " + std::to_string(targets.size()) +
                                " target rows for " + std::to_string(tokens.size()) +
                                " token rows; pass one target per token");
  std::vector<std::int64_t> flat;  // [B, T] flattened, one target per logits row
  for (std::size_t b = 0; b < tokens.size(); ++b) {
    if (targets[b].size() != tokens[b].size())
      throw std::invalid_argument("loss: targets row " + std::to_string(b) + " has " +
                                  std::to_string(targets[b].size()) +
                                  " ids but tokens row " + std::to_string(b) + " has " +
                                  std::to_string(tokens[b].size()));
    flat.insert(flat.end(), targets[b].begin(), targets[b].end());
  }
  return cross_entropy(forward(tokens), flat, -100);  // [B, T, vocab_size] -> ()
}

}  // namespace glassllm
