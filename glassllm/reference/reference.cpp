// reference.cpp: GlassLM's forward pass as the NumPy original wrote it, with
// xtensor arrays (xt::xarray<double>, NumPy's ndarray) and xtensor-blas's
// xt::linalg::dot (np.dot). Each line says in a comment what it is in NumPy.
//
// What it is for: a second computation of the logits that shares no code
// with the engine (no Tensor, no ops.h, no fast/ kernels), so that the tests
// can hold the engine to it (tests/test_reference.cpp), and so that a reader
// can put the engine's forward beside the NumPy one it came from
// (docs/13-reference-in-numpy-style.md). Speed is not a goal: every matrix
// product goes through np.dot-style calls on copies, K^T is materialised,
// and repeat_kv really repeats.
//
// Two xtensor rules it follows: a reduction with keep_dims is assigned to an
// array before it is used in another expression (in xtensor 0.24 a lazy one
// used inside an expression gives wrong numbers, and the immediate
// evaluation strategy, on an expression such as x * x, evaluates into a
// 4-D temporary whatever x's rank), and results are returned as
// xt::xarray<double>, never as a lazy `auto` expression that could outlive
// the arrays it reads. The axis -1 is spelled x.dimension() - 1.
#include "glassllm/reference/reference.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <xtensor-blas/xlinalg.hpp>
#include <xtensor/xadapt.hpp>
#include <xtensor/xarray.hpp>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xstrided_view.hpp>
#include <xtensor/xview.hpp>

namespace glassllm {

namespace {

using Array = xt::xarray<double>;  // np.ndarray of float64

// ---- the NumPy GlassLM's building blocks ---------------------------------------
// doc:begin blocks

// x @ w.T, w stored [out, in] (PyTorch's Linear): x [..., in] -> [..., out]
Array linear(const Array& x, const Array& w) {
  std::size_t in = x.shape().back();
  Array rows = x;
  rows.reshape({x.size() / in, in});                  // x.reshape(-1, in)
  Array y = xt::linalg::dot(rows, xt::transpose(w));  // rows @ w.T
  auto shape = x.shape();
  shape.back() = w.shape(0);
  y.reshape(shape);  // y.reshape(*x.shape[:-1], out)
  return y;
}

// a @ b for stacks of matrices, [B, H, n, k] @ [B, H, k, m] -> [B, H, n, m]:
// np.dot on each pair (np.dot alone would pair every matrix with every other)
Array matmul(const Array& a, const Array& b) {
  Array out = xt::zeros<double>({a.shape(0), a.shape(1), a.shape(2), b.shape(3)});
  for (std::size_t i = 0; i < a.shape(0); ++i)
    for (std::size_t j = 0; j < a.shape(1); ++j)
      xt::view(out, i, j) = xt::linalg::dot(xt::view(a, i, j), xt::view(b, i, j));
  return out;
}

// x / np.sqrt(np.mean(x**2, axis=-1, keepdims=True) + eps) * weight
Array rmsnorm(const Array& x, const Array& weight, double eps) {
  Array mean_square = xt::mean(x * x, {x.dimension() - 1}, xt::keep_dims);  // [..., 1]
  return x / xt::sqrt(mean_square + eps) * weight;
}

// e = np.exp(x - x.max(-1, keepdims=True)); e / e.sum(-1, keepdims=True)
// (an entry of -inf becomes exactly 0)
Array softmax(const Array& x) {
  const std::size_t last = x.dimension() - 1;          // axis -1
  Array row_max = xt::amax(x, {last}, xt::keep_dims);  // [..., 1]
  Array e = xt::exp(x - row_max);
  Array total = xt::sum(e, {last}, xt::keep_dims);  // [..., 1]
  return e / total;
}

// a * sigmoid(a)
Array silu(const Array& a) {
  return a / (1.0 + xt::exp(-a));
}

// np.concatenate((-x[..., hd//2:], x[..., :hd//2]), axis=-1)
Array rotate_half(const Array& x) {
  std::size_t half = x.shape().back() / 2;
  Array first = xt::strided_view(x, {xt::ellipsis(), xt::range(0, half)});
  Array second = xt::strided_view(x, {xt::ellipsis(), xt::range(half, 2 * half)});
  return xt::concatenate(xt::xtuple(-second, first), x.dimension() - 1);
}

// RoPE's frequencies, as transformers' modeling_rope_utils.py computes them:
//   inv_freq = theta ** (-np.arange(0, hd, 2) / hd)             # [hd/2]
// then, by rope_scaling's type, "linear": inv_freq / factor; "llama3": long
// wavelengths slowed by factor, short ones kept, the band between blended.
Array rope_frequencies(const Config& cfg) {
  const double hd = double(cfg.head_dim());
  const RopeScaling& r = cfg.rope_scaling;
  Array inv_freq = xt::pow(cfg.rope_theta, -xt::arange<double>(0, hd, 2) / hd);  // [hd/2]
  switch (r.type) {
    case RopeScaling::Type::none:
      return inv_freq;
    case RopeScaling::Type::linear:
      return inv_freq / r.factor;
    case RopeScaling::Type::llama3: {
      const double L = r.original_max_position_embeddings;
      const double low_freq_wavelen = L / r.low_freq_factor;
      const double high_freq_wavelen = L / r.high_freq_factor;
      Array wavelen = 2 * xt::numeric_constants<double>::PI / inv_freq;
      // np.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
      Array inv_freq_llama =
          xt::where(wavelen > low_freq_wavelen, inv_freq / r.factor, inv_freq);
      Array smooth =
          (L / wavelen - r.low_freq_factor) / (r.high_freq_factor - r.low_freq_factor);
      Array smoothed = (1 - smooth) * inv_freq_llama / r.factor + smooth * inv_freq_llama;
      auto is_medium = !(wavelen < high_freq_wavelen) && !(wavelen > low_freq_wavelen);
      return xt::where(is_medium, smoothed, inv_freq_llama);
    }
  }
  throw std::invalid_argument("ReferenceModel: rope_scaling type " +
                              std::to_string(int(r.type)) +
                              " is not implemented (none, linear, llama3 are)");
}

// RoPE on x [B, heads, T, hd] at positions start .. start+T-1
Array rope(const Array& x, std::size_t start, const Array& inv_freq) {
  std::size_t T = x.shape(2);
  Array positions = xt::arange<double>(start, start + T);                  // [T]
  Array angle = xt::view(positions, xt::all(), xt::newaxis()) * inv_freq;  // [T, hd/2]
  Array angles = xt::concatenate(xt::xtuple(angle, angle), 1);             // [T, hd]
  return x * xt::cos(angles) + rotate_half(x) * xt::sin(angles);
}

// x [B, T, heads*hd] -> x.reshape(B, T, heads, hd).transpose(0, 2, 1, 3)
Array split_heads(const Array& x, std::size_t heads) {
  Array y = x;
  y.reshape({x.shape(0), x.shape(1), heads, x.shape(2) / heads});
  return xt::transpose(y, {0, 2, 1, 3});
}

// x [B, heads, T, hd] -> x.transpose(0, 2, 1, 3).reshape(B, T, heads*hd)
Array merge_heads(const Array& x) {
  Array y = xt::transpose(x, {0, 2, 1, 3});
  y.reshape({x.shape(0), x.shape(2), x.shape(1) * x.shape(3)});
  return y;
}

// key_pos[None, :] <= query_pos[:, None]: query t (at query_start + t) sees
// key j (at key_start + j) iff the key is not later; with a sliding window,
// also key_pos > query_pos - window. [T, m]
xt::xarray<bool> causal_mask(std::size_t T, std::size_t m, std::size_t query_start,
                             std::size_t key_start, std::size_t window) {
  Array query_pos = xt::arange<double>(query_start, query_start + T);
  Array key_pos = xt::arange<double>(key_start, key_start + m);
  auto keys = xt::view(key_pos, xt::newaxis(), xt::all());
  auto queries = xt::view(query_pos, xt::all(), xt::newaxis());
  if (window == 0) return keys <= queries;
  return keys <= queries && keys > queries - double(window);
}

// doc:end blocks
// doc:begin attention

// softmax(causal(q @ k^T / sqrt(hd))) @ v for q [B, H, T, hd] and
// k, v [B, Hkv, m, hd]; query head h uses K/V head h // G.
Array attention(const Array& q, const Array& k, const Array& v, std::size_t query_start,
                std::size_t key_start, Attention path, std::size_t window) {
  std::size_t B = q.shape(0), H = q.shape(1), T = q.shape(2), hd = q.shape(3);
  std::size_t Hkv = k.shape(1), G = H / Hkv, m = k.shape(2);
  xt::xarray<bool> mask = causal_mask(T, m, query_start, key_start, window);  // [T, m]
  const double minus_inf = -std::numeric_limits<double>::infinity();
  if (path == Attention::repeat_kv) {
    Array keys = xt::repeat(k, G, 1);    // np.repeat(k, G, axis=1): [B, H, m, hd]
    Array values = xt::repeat(v, G, 1);  // heads 0,0,1,1 for G = 2
    Array scores = matmul(q, xt::transpose(keys, {0, 1, 3, 2})) / std::sqrt(double(hd));
    scores = xt::where(mask, scores, minus_inf);  // [B, H, T, m]
    return matmul(softmax(scores), values);       // [B, H, T, hd]
  }
  // grouped: q.reshape(B, Hkv, G*T, hd), row g*T + t is query t of head
  // h = i*G + g; k and v are used as they are, never repeated
  Array q_grouped = q;
  q_grouped.reshape({B, Hkv, G * T, hd});
  Array scores =
      matmul(q_grouped, xt::transpose(k, {0, 1, 3, 2})) / std::sqrt(double(hd));
  scores.reshape({B, Hkv, G, T, m});            // so that the [T, m] mask broadcasts
  scores = xt::where(mask, scores, minus_inf);  // over B, Hkv and G
  scores.reshape({B, Hkv, G * T, m});
  Array out = matmul(softmax(scores), v);  // [B, Hkv, G*T, hd]
  out.reshape({B, H, T, hd});
  return out;
}

// doc:end attention

Array to_array(const Tensor& t) {
  std::vector<double> values = t.to_vector();  // float32 or float64, as double
  return xt::adapt(values, t.shape());
}

}  // namespace

// One layer's weights, by their Hugging Face names.
struct LayerArrays {
  Array input_layernorm, q_proj, k_proj, v_proj, o_proj;
  Array q_bias, k_bias, v_bias;  // [H*hd], [Hkv*hd] x 2; zeros without qkv_bias
  Array post_attention_layernorm, gate_proj, up_proj, down_proj;
  Array q_norm, k_norm;              // [hd]; only with qk_norm
  Array post_feedforward_layernorm;  // [d_model]; only with norms after (EXAONE)
};

struct ReferenceModel::Weights {
  Config cfg;
  Attention path;
  Array embed_tokens, norm, lm_head;
  Array inv_freq;  // RoPE's frequencies [hd/2]
  std::vector<LayerArrays> layers;
};

struct ReferenceCache::Layers {
  std::vector<Array> k, v;  // per layer, [B, Hkv, m, hd]
  std::size_t length = 0;
};

ReferenceCache::ReferenceCache() : layers_(std::make_unique<Layers>()) {}
ReferenceCache::~ReferenceCache() = default;
ReferenceCache::ReferenceCache(ReferenceCache&&) noexcept = default;
ReferenceCache& ReferenceCache::operator=(ReferenceCache&&) noexcept = default;
std::size_t ReferenceCache::length() const {
  return layers_ ? layers_->length : 0;
}

ReferenceModel::ReferenceModel(const GlassLM& model, Attention path)
    : w_(std::make_unique<Weights>()) {
  if (path != Attention::repeat_kv && path != Attention::grouped)
    throw std::invalid_argument(std::string("ReferenceModel: attention path '") +
                                attention_name(path) +
                                "' is not one of repeat_kv, grouped");
  w_->cfg = model.config();
  w_->path = path;
  w_->embed_tokens = to_array(model.embed_tokens);
  w_->norm = to_array(model.norm);
  w_->lm_head = to_array(model.lm_head);
  w_->inv_freq = rope_frequencies(w_->cfg);
  const std::size_t q_width = w_->cfg.n_heads * w_->cfg.head_dim();
  const std::size_t kv_width = w_->cfg.n_kv_heads * w_->cfg.head_dim();
  // A bias the model does not have is zeros: h @ W.T + 0 is h @ W.T exactly.
  auto bias = [&](const Tensor& b, std::size_t width) {
    return w_->cfg.qkv_bias ? to_array(b) : Array(xt::zeros<double>({width}));
  };
  // A weight the family does not have stays an empty array, never read.
  auto maybe = [](const Tensor& t) { return t.defined() ? to_array(t) : Array(); };
  for (const LayerWeights& l : model.layers)
    w_->layers.push_back({maybe(l.input_layernorm), to_array(l.q_proj),
                          to_array(l.k_proj), to_array(l.v_proj), to_array(l.o_proj),
                          bias(l.q_bias, q_width), bias(l.k_bias, kv_width),
                          bias(l.v_bias, kv_width), to_array(l.post_attention_layernorm),
                          to_array(l.gate_proj), to_array(l.up_proj),
                          to_array(l.down_proj), maybe(l.q_norm), maybe(l.k_norm),
                          maybe(l.post_feedforward_layernorm)});
}
ReferenceModel::~ReferenceModel() = default;
ReferenceModel::ReferenceModel(ReferenceModel&&) noexcept = default;
ReferenceModel& ReferenceModel::operator=(ReferenceModel&&) noexcept = default;

const Config& ReferenceModel::config() const {
  return w_->cfg;
}

ReferenceCache ReferenceModel::new_cache() const {
  ReferenceCache cache;
  cache.layers_->k.resize(w_->cfg.n_layers);
  cache.layers_->v.resize(w_->cfg.n_layers);
  return cache;
}

// The same checks and messages as GlassLM::forward; returns the ids [B*T].
static std::vector<std::size_t> checked_ids(const Config& cfg, const TokenBatch& tokens,
                                            const ReferenceCache* cache,
                                            std::size_t start) {
  if (tokens.empty() || tokens[0].empty())
    throw std::invalid_argument("forward: no tokens; pass at least one row with one id");
  std::size_t T = tokens[0].size();
  std::vector<std::size_t> ids;
  for (std::size_t b = 0; b < tokens.size(); ++b) {
    if (tokens[b].size() != T)
      throw std::invalid_argument("forward: row " + std::to_string(b) + " has " +
                                  std::to_string(tokens[b].size()) +
                                  " tokens but row 0 has " + std::to_string(T) +
                                  "; rows must have equal lengths");
    for (std::int64_t id : tokens[b]) {
      if (id < 0 || std::size_t(id) >= cfg.vocab_size)
        throw std::invalid_argument("forward: token id " + std::to_string(id) +
                                    " is out of range [0, " +
                                    std::to_string(cfg.vocab_size) + ")");
      ids.push_back(std::size_t(id));
    }
  }
  if (cache && start != cache->length())
    throw std::invalid_argument(
        "forward: start is " + std::to_string(start) + " but the cache holds " +
        std::to_string(cache->length()) +
        " positions; pass start=" + std::to_string(cache->length()));
  if (start + T > cfg.max_len)
    throw std::invalid_argument("forward: positions " + std::to_string(start) + ".." +
                                std::to_string(start + T - 1) + " exceed max_len " +
                                std::to_string(cfg.max_len));
  return ids;
}

// doc:begin forward
ReferenceLogits ReferenceModel::forward(const TokenBatch& tokens, ReferenceCache* cache,
                                        std::size_t start) const {
  const Config& cfg = w_->cfg;
  std::vector<std::size_t> ids = checked_ids(cfg, tokens, cache, start);
  if (cache && cache->layers_->k.size() != cfg.n_layers)
    throw std::invalid_argument(
        "forward: make the cache with ReferenceModel::new_cache()");
  std::size_t B = tokens.size(), T = tokens[0].size();

  Array x = xt::view(w_->embed_tokens, xt::keep(ids), xt::all());  // embed_tokens[ids]
  x.reshape({B, T, cfg.d_model});                                  // [B, T, d_model]
  const bool norm_first = cfg.norm_placement == NormPlacement::pre;
  for (std::size_t l = 0; l < cfg.n_layers; ++l) {
    const LayerArrays& w = w_->layers[l];
    // Llama: the sub-layers read rmsnorm(x); EXAONE 4.0: x itself, and norm
    // their outputs instead.
    Array h = norm_first ? rmsnorm(x, w.input_layernorm, cfg.norm_eps) : x;
    Array q = split_heads(linear(h, w.q_proj) + w.q_bias, cfg.n_heads);  // [B, H, T, hd]
    Array k =
        split_heads(linear(h, w.k_proj) + w.k_bias, cfg.n_kv_heads);  // [B, Hkv, T, hd]
    Array v =
        split_heads(linear(h, w.v_proj) + w.v_bias, cfg.n_kv_heads);  // [B, Hkv, T, hd]
    if (cfg.qk_norm) {  // each head's q and k over head_dim, before RoPE
      q = rmsnorm(q, w.q_norm, cfg.norm_eps);
      k = rmsnorm(k, w.k_norm, cfg.norm_eps);
    }
    if (cfg.layer_rope(l)) {
      q = rope(q, start, w_->inv_freq);
      k = rope(k, start, w_->inv_freq);
    }
    std::size_t key_start = start;  // without a cache the keys are the new tokens
    if (cache) {                    // keys from position 0: the whole history
      Array& cached_k = cache->layers_->k[l];
      Array& cached_v = cache->layers_->v[l];
      if (cache->length() > 0) {  // np.concatenate((cache.k, k), axis=2)
        k = xt::concatenate(xt::xtuple(cached_k, k), 2);
        v = xt::concatenate(xt::xtuple(cached_v, v), 2);
      }
      cached_k = k;
      cached_v = v;
      key_start = 0;
    }
    Array out = attention(q, k, v, start, key_start, w_->path,
                          cfg.layer_window(l));  // [B, H, T, hd]
    Array attn = linear(merge_heads(out), w.o_proj);
    if (norm_first) {
      x = x + attn;
      h = rmsnorm(x, w.post_attention_layernorm, cfg.norm_eps);
      x = x + linear(silu(linear(h, w.gate_proj)) * linear(h, w.up_proj), w.down_proj);
    } else {
      x = x + rmsnorm(attn, w.post_attention_layernorm, cfg.norm_eps);
      Array mlp =
          linear(silu(linear(x, w.gate_proj)) * linear(x, w.up_proj), w.down_proj);
      x = x + rmsnorm(mlp, w.post_feedforward_layernorm, cfg.norm_eps);
    }
  }
  if (cache) cache->layers_->length = start + T;
  x = rmsnorm(x, w_->norm, cfg.norm_eps);
  Array logits = linear(x, w_->lm_head);  // [B, T, vocab_size]
  return {std::vector<double>(logits.begin(), logits.end()), {B, T, cfg.vocab_size}};
}
// doc:end forward

}  // namespace glassllm
