// model.h: the GlassLM transformer (Llama architecture, in miniature), its
// K/V cache, and generation.
//
// The math, the weight names and the defaults are fixed by the design
// (docs/design.md). With W x meaning x @ W^T, and a bias added to q, k and v
// only with cfg.qkv_bias (Qwen2; no other biases):
//   x = embed_tokens[tokens]                    [B, T] -> [B, T, d_model]
//   for each layer:
//     x = x + attention_block(x)
//     x = x + mlp_block(x)
//   logits = lm_head(rmsnorm(x) * norm)         [B, T, vocab_size]
// where
//   attention_block(x):
//     h = rmsnorm(x) * input_layernorm
//     q, k, v = split_heads(q_proj h (+ q_bias), k_proj h (+ k_bias),
//                           v_proj h (+ v_bias))            [B, H|Hkv, T, hd]
//     q, k = rope(q), rope(k)          positions start .. start+T-1
//     (with a cache: k, v = concat(cache, k|v) along the positions)
//     out = softmax(causal(q k^T / sqrt(hd))) v             [B, H, T, hd]
//     return o_proj merge_heads(out)                        [B, T, d_model]
//   mlp_block(x):
//     h = rmsnorm(x) * post_attention_layernorm
//     return down_proj(silu(gate_proj h) * up_proj h)       [B, T, d_model]
// That is Llama's family; Config's family options change it in one place
// (model.cpp's residual_add and block_plan; docs/design.md, "Model
// families"): EXAONE 4.0 puts each norm after its half,
//     x = x + rmsnorm(attention(x)) * post_attention_layernorm
//     x = x + rmsnorm(mlp(x)) * post_feedforward_layernorm
// normalises each head of q and k (qk_norm), and may give a layer a sliding
// window or no RoPE.
// forward, attention_block and mlp_block are in glassllm/model/model.cpp,
// the pieces first and forward last; the K/V cache is in kv_cache.cpp,
// generation in generate.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "glassllm/engine/tensor.h"
#include "glassllm/model/weights16.h"

namespace glassllm {

/// RoPE's frequency scaling (config.json's rope_scaling), as transformers'
/// modeling_rope_utils.py computes it. With base frequencies
/// f_i = theta^(-2i/hd):
///   none:   f_i unchanged;
///   linear: f_i / factor (positions squeezed by `factor`);
///   llama3 (Llama 3.1, 3.2): with wavelength w_i = 2 pi / f_i and
///     L = original_max_position_embeddings, frequencies whose wavelength is
///     shorter than L / high_freq_factor stay, those longer than
///     L / low_freq_factor are divided by factor, and the ones between are
///     blended: (1 - s) f_i / factor + s f_i, s = (L / w_i - low) / (high - low).
struct RopeScaling {
  enum class Type { none, linear, llama3 } type = Type::none;
  double factor = 1.0;
  double low_freq_factor = 1.0, high_freq_factor = 4.0;  ///< llama3
  double original_max_position_embeddings = 8192;        ///< llama3
};

/// Where each half of a block puts its RMSNorm (docs/design.md, "Model
/// families"):
///   pre:  x = x + f(norm(x))   Llama, Qwen2 (input_layernorm,
///                              post_attention_layernorm before the MLP)
///   post: x = x + norm(f(x))   EXAONE 4.0 (post_attention_layernorm after
///                              attention, post_feedforward_layernorm after the MLP)
enum class NormPlacement { pre, post };

/// The model's sizes. Defaults are the design's; vocab_size comes from the
/// tokenizer.
struct Config {
  std::size_t vocab_size = 0;
  std::size_t d_model = 128;    ///< residual width
  std::size_t n_layers = 4;     ///< transformer blocks
  std::size_t n_heads = 4;      ///< query heads (H)
  std::size_t n_kv_heads = 2;   ///< key/value heads (Hkv); must divide n_heads
  std::size_t d_ff = 384;       ///< hidden width of the MLP
  std::size_t max_len = 128;    ///< longest window the model is run on
  double rope_theta = 10000.0;  ///< RoPE base
  double norm_eps = 1e-5;       ///< RMSNorm epsilon
  /// The head dimension when it is not d_model / n_heads (config.json's
  /// head_dim, e.g. Qwen3); 0: d_model / n_heads.
  std::size_t explicit_head_dim = 0;
  /// Biases on the q, k and v projections (Qwen2 and Qwen2.5 have them; o_proj
  /// has none).
  bool qkv_bias = false;
  RopeScaling rope_scaling;  ///< none by default

  // The model family's options (docs/design.md, "Model families"): the
  // defaults are Llama's; EXAONE 4.0 sets them from its config.json.
  NormPlacement norm_placement = NormPlacement::pre;
  /// A per-head RMSNorm over head_dim on q and on k, after their projection and
  /// before RoPE (self_attn.q_norm.weight, self_attn.k_norm.weight, [hd]).
  bool qk_norm = false;
  /// Per layer: its sliding window (a query at position i sees keys
  /// i - window < j <= i), 0 for full attention. Empty: every layer full.
  std::vector<std::size_t> window;
  /// Per layer: whether q and k are rotated by RoPE. Empty: every layer is.
  /// (EXAONE 4.0's hybrid models leave their global layers without RoPE.)
  std::vector<bool> rope;

  std::size_t layer_window(std::size_t l) const {
    return l < window.size() ? window[l] : 0;
  }
  bool layer_rope(std::size_t l) const { return l < rope.size() ? bool(rope[l]) : true; }

  std::size_t head_dim() const {
    return explicit_head_dim ? explicit_head_dim : d_model / n_heads;
  }  ///< hd
  std::size_t n_rep() const {
    return n_heads / n_kv_heads;
  }  ///< G: query heads per K/V head
  /// Throws std::invalid_argument naming the first field that is wrong, e.g.
  /// "config: n_kv_heads (3) must divide n_heads (4)".
  void validate() const;
};

/// The sizes a user picks for a new model, each with its command-line flag
/// (glassllm init and glassllm train): the one list that parsing the flags,
/// --init-from's check against a checkpoint and a resumed run's checks go
/// through.
struct SizeFlag {
  const char* flag;            ///< "--d-model"
  std::size_t Config::*field;  ///< &Config::d_model
  const char* help;            ///< "Residual width"
};
inline constexpr SizeFlag kSizeFlags[] = {
    {"--d-model", &Config::d_model, "Residual width"},
    {"--n-layers", &Config::n_layers, "Transformer blocks"},
    {"--n-heads", &Config::n_heads, "Query heads"},
    {"--n-kv-heads", &Config::n_kv_heads, "Key/value heads, a divisor of --n-heads"},
    {"--d-ff", &Config::d_ff, "Hidden width of the MLP"},
    {"--max-len", &Config::max_len, "Longest window; in training, tokens per row"},
};

/// Every weight a model of this config has: its Hugging Face name and shape
/// (projections [out, in]), in named_parameters() order.
std::vector<std::pair<std::string, Shape>> weight_table(const Config& cfg);

/// RoPE's hd/2 inverse frequencies for a config (theta, head_dim and the
/// scaling above), computed in double.
std::vector<double> rope_inv_freq(const Config& cfg);

/// How the query heads share K/V heads (both give the same results).
enum class Attention {
  repeat_kv,  ///< copy K and V from Hkv to H heads, then ordinary batched matmuls
  grouped,    ///< fold Q to [B, Hkv, G*T, hd]; K and V are never copied
  custom,     ///< call GlassLM::custom_attention (an extension point, see AttentionFn)
};
const char* attention_name(Attention a);  ///< "repeat_kv", "grouped" or "custom"
/// Only "repeat_kv" and "grouped": a custom path needs a function, not a name.
Attention parse_attention(const std::string& name);  ///< throws on anything else

/// An attention path supplied at run time (the extension point behind
/// Attention::custom; the exercises plug in here). Given, for one layer,
///   q      [B, H, T, hd]   the new queries, after RoPE
///   keys   [B, Hkv, m, hd] every key attended over (after RoPE), and
///   values [B, Hkv, m, hd] the matching values,
///   query_start: the position of query 0 (queries at query_start .. +T-1),
///   key_start:   the position of key 0 (0 with a cache, else query_start),
/// it returns out = softmax(causal(q k^T / sqrt(hd))) v, [B, H, T, hd], where
/// query head h uses K/V head h / (H / Hkv). Build it from ops (ops.h) and
/// the model's backward goes through it. The model throws if it is unset or
/// returns another shape.
///   model.attention = Attention::custom;
///   model.custom_attention = [](const Tensor& q, const Tensor& k, const Tensor& v,
///                               std::size_t qs, std::size_t ks) { ... };
using AttentionFn =
    std::function<Tensor(const Tensor& q, const Tensor& keys, const Tensor& values,
                         std::size_t query_start, std::size_t key_start)>;

/// A replacement for a concatenating cache's append step (an extension point;
/// the exercises plug in here): given what the cache holds, [B, Hkv, m, hd]
/// (an undefined Tensor while empty), and the new positions [B, Hkv, T, hd],
/// returns what it should hold next, [B, Hkv, m+T, hd], detached from the
/// graph. Called once for the keys and once for the values.
using CacheAppendFn = std::function<Tensor(const Tensor& held, const Tensor& fresh)>;

/// How a KVCache stores its keys and values.
enum class CacheMode {
  concat,        ///< grow by concatenation: each append copies the old arrays
  preallocated,  ///< one fixed buffer of max_len positions, written in place
};
const char* cache_mode_name(CacheMode m);
CacheMode parse_cache_mode(const std::string& name);

/// The keys (after RoPE) and values (after their projection) of one layer, for
/// all positions seen so far. It stores Hkv heads, never H.
class KVCache {
 public:
  explicit KVCache(CacheMode mode = CacheMode::concat, std::size_t capacity = 0);

  CacheMode mode() const { return mode_; }
  /// Positions stored (m).
  std::size_t length() const { return length_; }
  /// Bytes held: k and v as stored (for a preallocated cache, the whole buffers).
  std::size_t nbytes() const;

  /// Appends new keys and values, each [B, Hkv, T, hd]. Throws if the batch,
  /// head or head-dim sizes differ from what is stored, or if a preallocated
  /// cache would overflow its capacity. Stores detached copies: the cache is
  /// for inference, gradients do not flow into the history.
  void append(const Tensor& k_new, const Tensor& v_new);

  /// The keys/values to attend over: [B, Hkv, m, hd] for a concatenating cache;
  /// for a preallocated one the whole buffer [B, Hkv, capacity, hd], whose slots
  /// at positions >= length() hold zeros and are hidden by the causal mask.
  /// Undefined while empty.
  const Tensor& k() const { return k_; }
  const Tensor& v() const { return v_; }

  /// Forgets every position.
  void clear();

  /// When set, a concatenating cache appends with this function instead of
  /// concat() (see CacheAppendFn); append() checks the shape it returns. A
  /// preallocated cache does not use it.
  ///   for (KVCache& c : cache) c.append_fn = my_append;
  CacheAppendFn append_fn;

 private:
  void check_fits(const Tensor& k_new, const Tensor& v_new) const;  // throws
  void append_by_concat(const Tensor& k_new, const Tensor& v_new);
  void append_in_place(const Tensor& k_new, const Tensor& v_new);

  CacheMode mode_;
  std::size_t capacity_;
  std::size_t length_ = 0;
  Tensor k_, v_;
};

/// One KVCache per layer.
using Cache = std::vector<KVCache>;

/// Token ids, one row per sequence: [B][T]. Rows must have equal lengths.
using TokenBatch = std::vector<std::vector<std::int64_t>>;

/// The weights of one transformer block (Hugging Face Llama names; EXAONE 4.0
/// has no input_layernorm but q_norm, k_norm and post_feedforward_layernorm).
struct LayerWeights {
  Tensor input_layernorm;             ///< [d_model]; only with NormPlacement::pre
  Tensor q_proj, k_proj, v_proj;      ///< [H*hd, d_model], [Hkv*hd, d_model] x 2
  Tensor q_bias, k_bias, v_bias;      ///< [H*hd], [Hkv*hd] x 2; only with cfg.qkv_bias
  Tensor o_proj;                      ///< [d_model, H*hd]
  Tensor q_norm, k_norm;              ///< [hd] each; only with cfg.qk_norm
  Tensor post_attention_layernorm;    ///< [d_model]
  Tensor post_feedforward_layernorm;  ///< [d_model]; only with NormPlacement::post
  Tensor gate_proj, up_proj;          ///< [d_ff, d_model]
  Tensor down_proj;                   ///< [d_model, d_ff]
};

/// Options of generate().
struct GenerateOptions {
  /// The most tokens generated; fewer when an end-of-text token or `stop` ends
  /// the answer first.
  std::size_t max_new_tokens = 32;
  /// Generation stops right after choosing one of these (the checkpoint's
  /// eos_token_id); the token is kept at the end of the result. Empty: never.
  std::vector<std::int64_t> eos_token_ids;
  /// Called after each new token with every token so far (prompt first);
  /// returning true stops generation there (`generate --stop` decodes the new
  /// tokens and looks for a string).
  std::function<bool(const std::vector<std::int64_t>& tokens)> stop;
  double temperature = 0.0;  ///< 0: greedy (argmax); > 0: sample softmax(logits / T)
  std::size_t top_k = 0;     ///< sample only among the k most likely tokens (0: all)
  std::uint64_t seed = 0;    ///< sampling seed
  CacheMode cache_mode = CacheMode::concat;
  /// Run every forward with grad mode on, so that a backward can follow each
  /// step (the tracer's gradients); off: everything runs under no_grad.
  bool record_graph = false;
  /// Called after each forward with its logits [1, T, vocab_size] and the id
  /// chosen from their last row (e.g. to tell a Tracer: set_next_token).
  std::function<void(const Tensor& logits, std::int64_t next)> on_step;
};

/// One layer's attention core, the part that differs between the two K/V
/// sharing paths: softmax(causal(q k^T / sqrt(hd))) v.
///   q [B, H, T, hd] (after RoPE) at positions query_start .. query_start+T-1,
///   keys, values [B, Hkv, m, hd] with key j at position key_start + j
///   -> [B, H, T, hd]. H must be a multiple of Hkv.
/// repeat_kv copies keys and values to H heads first; grouped folds q to
/// [B, Hkv, G*T, hd] and copies nothing. `layer` only labels what an active
/// tracer records. GlassLM::forward calls it once per block.
Tensor attend(const Tensor& q, const Tensor& keys, const Tensor& values,
              std::size_t query_start, std::size_t key_start, Attention path,
              std::size_t layer = 0, std::size_t window = 0);

class GlassLM {
 public:
  /// Deterministic initialisation from `seed`: embeddings and projections
  /// N(0, 0.02), norm weights 1. Validates cfg.
  GlassLM(const Config& cfg, std::uint64_t seed, DType dtype = DType::float32);

  /// Where from_weights gets each weight: called once per weight, in
  /// named_parameters() order, with its name and shape.
  using WeightSource = std::function<Tensor(const std::string& name, const Shape& shape)>;
  /// A model whose weights come from `weight` instead of being drawn at
  /// random (loading a checkpoint: a 1B-parameter model would otherwise fill
  /// 5 GB with numbers only to overwrite them). Each returned tensor must
  /// have the shape asked for and `dtype`; it becomes the weight as it is (no
  /// copy), detached and requiring gradients. Throws std::invalid_argument
  /// naming the weight otherwise. Validates cfg.
  /// With `weights16` (float32 models only), the weights it holds (the
  /// projections and lm_head, of cfg's shapes) may come back undefined from
  /// `weight`: they are then kept only in 16 bits (see weights16 below).
  static GlassLM from_weights(const Config& cfg, DType dtype, const WeightSource& weight,
                              std::shared_ptr<const Weights16> weights16 = nullptr);

  const Config& config() const { return cfg_; }
  DType dtype() const { return dtype_; }

  /// Which K/V sharing path forward() takes (repeat_kv by default).
  Attention attention = Attention::repeat_kv;
  /// The function Attention::custom calls (see AttentionFn).
  AttentionFn custom_attention;

  // The weights, public so that a student can look at (and a test can poke)
  // any of them: model.layers[0].q_proj.
  Tensor embed_tokens;  ///< [vocab_size, d_model]
  std::vector<LayerWeights> layers;
  Tensor norm;     ///< [d_model]
  Tensor lm_head;  ///< [vocab_size, d_model]
  /// The projections kept in 16 bits for inference (weights16.h), or null.
  /// Each weight it holds is used in place of its float32 Tensor above, which
  /// is then undefined (named_parameters() lists it so); forward() runs
  /// under no_grad only.
  std::shared_ptr<const Weights16> weights16;

  /// Every weight with its Hugging Face name, in a fixed order
  /// ("model.embed_tokens.weight", "model.layers.0.input_layernorm.weight", ...).
  std::vector<std::pair<std::string, Tensor>> named_parameters() const;
  /// The weight with this Hugging Face name, to read or to replace:
  ///   model.parameter("lm_head.weight") = other;
  /// Throws std::invalid_argument for an unknown name.
  Tensor& parameter(const std::string& name);
  const Tensor& parameter(const std::string& name) const;
  /// Number of scalar weights.
  std::size_t parameter_count() const;
  /// The same model in another dtype (a copy of every weight). Throws for a
  /// model with weights16.
  GlassLM to(DType dtype) const;

  /// An empty cache, one KVCache per layer. A preallocated cache holds max_len
  /// positions.
  Cache new_cache(CacheMode mode = CacheMode::concat) const;

  /// Logits [B, T, vocab_size] for token ids [B][T] at positions start ..
  /// start+T-1. Without a cache, start is usually 0 and the keys are the new
  /// tokens only. With a cache, `start` must equal the cache's length
  /// ("forward: start is 5 but the cache holds 7 positions; pass start=7"),
  /// the new K/V are appended, and the queries attend over all cached keys.
  /// Throws for an id outside [0, vocab_size), ragged rows, or start + T >
  /// max_len.
  Tensor forward(const TokenBatch& tokens, Cache* cache = nullptr,
                 std::size_t start = 0) const;
  /// The same for one sequence (B = 1).
  Tensor forward(const std::vector<std::int64_t>& tokens, Cache* cache = nullptr,
                 std::size_t start = 0) const;
  /// The same for one sequence written in braces: forward({4, 5, 6}), forward({7},
  /// &cache, 3). Without this overload `{7}` would be ambiguous (it could also
  /// mean a TokenBatch of 7 empty rows). A batch in braces needs its type:
  /// forward(TokenBatch{{1}, {2}}).
  template <class Id, class = std::enable_if_t<std::is_integral_v<Id>>>
  Tensor forward(std::initializer_list<Id> tokens, Cache* cache = nullptr,
                 std::size_t start = 0) const {
    return forward(std::vector<std::int64_t>(tokens.begin(), tokens.end()), cache, start);
  }

  /// Mean cross-entropy of forward(tokens) against targets [B][T]; a target of
  /// -100 is ignored. The training loss.
  Tensor loss(const TokenBatch& tokens, const TokenBatch& targets) const;

  /// Prompt plus at most max_new_tokens generated tokens: fewer when one of
  /// options.eos_token_ids is chosen (it ends the result) or options.stop says
  /// so. Prefills the prompt (its
  /// last max_len tokens), then decodes one token per step through the cache.
  /// When the next insertion would make the cache longer than max_len, the
  /// cache is discarded and the last max_len tokens are run again with
  /// positions restarting at 0 (dropping only the oldest key would not
  /// reproduce the states computed on the cropped history), so every logit
  /// equals a fresh full forward over the last max_len tokens. Runs under
  /// no_grad unless options.record_graph. Throws for an empty prompt or an id
  /// outside the vocabulary.
  std::vector<std::int64_t> generate(const std::vector<std::int64_t>& prompt,
                                     const GenerateOptions& options = {}) const;

 private:
  // Both public ways of making a model end here: every weight from `weight`.
  GlassLM(const Config& cfg, DType dtype, const WeightSource& weight,
          std::shared_ptr<const Weights16> weights16 = nullptr);

  Config cfg_;
  DType dtype_;
};

}  // namespace glassllm
