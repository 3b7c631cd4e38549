// config_json.cpp: config.json, the Hugging Face LlamaConfig keys of a
// checkpoint folder (checkpoint.cpp reads and writes the rest of the folder):
// writing a Config with its dtype, and reading one back with every key
// checked and anything that would change the math refused by name.
#include <cmath>
#include <limits>
#include <set>

#include "glassllm/io/checkpoint_internal.h"

namespace glassllm {

namespace {

using Json = nlohmann::ordered_json;

std::invalid_argument config_error(const std::string& what) {
  return std::invalid_argument(std::string(detail::kConfigFile) + ": " + what);
}

}  // namespace

// ---- config.json
// -----------------------------------------------------------------------

std::string config_to_json(const Config& cfg, DType dtype,
                           std::optional<std::int64_t> eos_token_id) {
  // Exactly the keys transformers' LlamaConfig reads for this architecture;
  // GlassLM's names are on the right.
  Json j;
  // Biases on q/k/v are Qwen2's architecture (Llama's attention_bias would put
  // one on o_proj too); norms after each half and QK-norm are EXAONE 4.0's.
  const bool exaone = cfg.norm_placement == NormPlacement::post;
  j["architectures"] = {exaone         ? "Exaone4ForCausalLM"
                        : cfg.qkv_bias ? "Qwen2ForCausalLM"
                                       : "LlamaForCausalLM"};
  j["model_type"] = exaone ? "exaone4" : cfg.qkv_bias ? "qwen2" : "llama";
  j["hidden_size"] = cfg.d_model;
  j["intermediate_size"] = cfg.d_ff;
  j["num_attention_heads"] = cfg.n_heads;
  j["num_hidden_layers"] = cfg.n_layers;
  j["num_key_value_heads"] = cfg.n_kv_heads;
  j["head_dim"] = cfg.head_dim();
  j["max_position_embeddings"] = cfg.max_len;
  j["rms_norm_eps"] = cfg.norm_eps;
  j["rope_theta"] = cfg.rope_theta;
  const RopeScaling& r = cfg.rope_scaling;
  if (r.type == RopeScaling::Type::linear)
    j["rope_scaling"] = {{"rope_type", "linear"}, {"factor", r.factor}};
  else if (r.type == RopeScaling::Type::llama3)
    j["rope_scaling"] = {{"rope_type", "llama3"},
                         {"factor", r.factor},
                         {"low_freq_factor", r.low_freq_factor},
                         {"high_freq_factor", r.high_freq_factor},
                         {"original_max_position_embeddings",
                          std::int64_t(r.original_max_position_embeddings)}};
  else
    j["rope_scaling"] = nullptr;
  j["vocab_size"] = cfg.vocab_size;
  j["tie_word_embeddings"] = false;
  j["hidden_act"] = "silu";
  if (exaone) {
    // Exaone4Config: one sliding_window for every sliding layer, and the
    // layers' kinds.
    std::size_t window = 0;
    Json types = Json::array();
    for (std::size_t l = 0; l < cfg.n_layers; ++l) {
      window = std::max(window, cfg.layer_window(l));
      types.push_back(cfg.layer_window(l) ? "sliding_attention" : "full_attention");
    }
    j["sliding_window"] = window ? Json(window) : Json(nullptr);
    j["layer_types"] = types;
  } else {
    if (!cfg.qkv_bias) j["attention_bias"] = false;
    j["mlp_bias"] = false;
  }
  j["torch_dtype"] = dtype_name(dtype);
  if (eos_token_id) j["eos_token_id"] = *eos_token_id;
  return j.dump(2) + "\n";
}

namespace {

// config.json's keys, each read with its type and range checked and a
// message naming the key.
class ConfigKeys {
 public:
  explicit ConfigKeys(const Json& j) : j(j) {}
  const Json& j;

  std::invalid_argument type_error(const char* key, const char* expected) const {
    return config_error("'" + std::string(key) + "' is " + j[key].type_name() +
                        ", expected " + expected);
  }
  // A size: a positive integer, at most 2^31 (a bigger one is a broken file,
  // and products of sizes must not overflow).
  std::size_t size(const char* key) const {
    if (!j.contains(key)) throw config_error(std::string("missing key '") + key + "'");
    const Json& v = j[key];
    if (!v.is_number_integer()) throw type_error(key, "an integer");
    constexpr std::uint64_t kMax = std::uint64_t(1) << 31;
    bool ok =
        v.is_number_unsigned()
            ? v.get<std::uint64_t>() >= 1 && v.get<std::uint64_t>() <= kMax
            : v.get<std::int64_t>() >= 1 && v.get<std::int64_t>() <= std::int64_t(kMax);
    if (!ok)
      throw config_error("'" + std::string(key) + "' is " + v.dump() +
                         ", expected a positive integer up to 2^31");
    return v.get<std::size_t>();
  }
  double positive_number(const char* key) const {
    if (!j.contains(key)) throw config_error(std::string("missing key '") + key + "'");
    if (!j[key].is_number()) throw type_error(key, "a number");
    double v = j[key].get<double>();
    if (!(v > 0) || !std::isfinite(v))
      throw config_error("'" + std::string(key) + "' is " + j[key].dump() +
                         ", expected a positive number");
    return v;
  }
  std::string string_or(const char* key, const char* fallback) const {
    if (!j.contains(key) || j[key].is_null()) return fallback;
    if (!j[key].is_string()) throw type_error(key, "a string");
    return j[key].get<std::string>();
  }
  bool bool_or(const char* key, bool fallback) const {
    if (!j.contains(key) || j[key].is_null()) return fallback;
    if (!j[key].is_boolean()) throw type_error(key, "true or false");
    return j[key].get<bool>();
  }
};

// Every key config.json may hold: the ones read here, and metadata that
// does not change the forward pass. Anything else is a feature GlassLM does
// not have, refused by name rather than silently ignored.
void refuse_unknown_keys(const Json& j) {
  static const std::set<std::string> known = {
      "architectures", "model_type", "hidden_size", "intermediate_size",
      "num_attention_heads", "num_hidden_layers", "num_key_value_heads", "head_dim",
      "max_position_embeddings", "rms_norm_eps", "rope_theta", "rope_scaling",
      "vocab_size", "tie_word_embeddings", "hidden_act", "attention_bias", "mlp_bias",
      "torch_dtype", "dtype", "bos_token_id", "eos_token_id", "pad_token_id",
      "pretraining_tp", "rope_interleaved", "use_sliding_window", "sliding_window",
      "max_window_layers", "layer_types", "sliding_window_pattern",
      // metadata and training-only settings
      "_name_or_path", "transformers_version", "use_cache", "initializer_range",
      "attention_dropout", "is_llama_config", "tokenizer_class"};
  for (const auto& [key, value] : j.items())
    if (!known.count(key))
      throw config_error("key '" + key + "' is not supported (GlassLM runs Llama, " +
                         "Qwen2 and EXAONE 4.0 models without it)");
}

// The model families GlassLM reads: Llama, Qwen2 (Llama with biases on q, k
// and v) and EXAONE 4.0 (norms after each half, QK-norm, sliding windows).
enum class Family { llama, qwen2, exaone4 };

// The architecture, and only the parts of it GlassLM implements.
Family read_architecture(const ConfigKeys& c) {
  const Json& j = c.j;
  if (!j.contains("model_type")) throw config_error("missing key 'model_type'");
  std::string model_type = c.string_or("model_type", "");
  if (model_type != "llama" && model_type != "qwen2" && model_type != "exaone4")
    throw config_error("model_type is '" + model_type +
                       "', expected 'llama', 'qwen2' or 'exaone4'");
  const Family family = model_type == "qwen2"     ? Family::qwen2
                        : model_type == "exaone4" ? Family::exaone4
                                                  : Family::llama;
  refuse_unknown_keys(j);
  const std::string architecture = family == Family::qwen2     ? "Qwen2ForCausalLM"
                                   : family == Family::exaone4 ? "Exaone4ForCausalLM"
                                                               : "LlamaForCausalLM";
  if (j.contains("architectures")) {
    const Json& a = j["architectures"];
    if (!a.is_array()) throw c.type_error("architectures", "a list of strings");
    for (const Json& name : a)
      if (!name.is_string() || name.get<std::string>() != architecture)
        throw config_error("architecture " +
                           (name.is_string() ? "'" + name.get<std::string>() + "'"
                                             : std::string(name.type_name())) +
                           " is not supported, expected '" + architecture + "'");
  }
  return family;
}

// EXAONE 4.0's layers, as Exaone4Config and Exaone4Attention read them:
// sliding_window (absent: 4096, the class default; null: no sliding layer),
// layer_types ("sliding_attention" | "full_attention" per layer; absent:
// every sliding_window_pattern-th layer full, the rest sliding), and RoPE on
// a layer iff sliding_window is null or the layer is a sliding one.
void read_exaone_layers(const ConfigKeys& c, Config& cfg) {
  const Json& j = c.j;
  std::size_t window = 4096;
  if (j.contains("sliding_window"))
    window = j["sliding_window"].is_null() ? 0 : c.size("sliding_window");
  std::vector<bool> sliding(cfg.n_layers, false);
  if (j.contains("layer_types") && !j["layer_types"].is_null()) {
    const Json& types = j["layer_types"];
    if (!types.is_array() || types.size() != cfg.n_layers)
      throw config_error("layer_types must list one type per layer (" +
                         std::to_string(cfg.n_layers) + "), got " + json_preview(types));
    for (std::size_t l = 0; l < cfg.n_layers; ++l) {
      if (types[l] != "sliding_attention" && types[l] != "full_attention")
        throw config_error("layer_types has " + json_preview(types[l]) +
                           "; expected \"sliding_attention\" or \"full_attention\"");
      sliding[l] = types[l] == "sliding_attention";
    }
  } else if (window > 0) {
    const Json pattern = j.contains("sliding_window_pattern")
                             ? j["sliding_window_pattern"]
                             : Json(4);  // Exaone4Config's default
    if (!pattern.is_number_integer() || pattern.get<std::int64_t>() < 1)
      throw config_error("sliding_window_pattern is " + json_preview(pattern) +
                         "; without layer_types GlassLM reads a positive integer");
    const std::size_t every = pattern.get<std::size_t>();
    for (std::size_t l = 0; l < cfg.n_layers; ++l) sliding[l] = (l + 1) % every != 0;
  }
  cfg.window.assign(cfg.n_layers, 0);
  cfg.rope.assign(cfg.n_layers, true);
  for (std::size_t l = 0; l < cfg.n_layers; ++l) {
    if (sliding[l] && window == 0)
      throw config_error("layer " + std::to_string(l) +
                         " is a sliding_attention layer but sliding_window is null");
    cfg.window[l] = sliding[l] ? window : 0;
    cfg.rope[l] = window == 0 || sliding[l];
  }
}

// Settings that would change the math, each refused by name.
void refuse_unsupported_features(const ConfigKeys& c, Family family) {
  const Json& j = c.j;
  std::string act = c.string_or("hidden_act", "silu");
  if (act != "silu")
    throw config_error("hidden_act is '" + act + "'; GlassLM's MLP uses 'silu' (SwiGLU)");
  if (c.bool_or("attention_bias", false))
    throw config_error(
        "attention_bias is true; GlassLM has biases on q, k and v only (Qwen2), not on "
        "o_proj");
  if (c.bool_or("mlp_bias", false))
    throw config_error("mlp_bias is true; GlassLM's MLP has no biases");
  c.bool_or("tie_word_embeddings", false);  // only its type here; load_checkpoint uses it
  if (c.bool_or("use_sliding_window", false))
    throw config_error("use_sliding_window is true; GlassLM attends over every position");
  if (c.bool_or("rope_interleaved", false))
    throw config_error("rope_interleaved is true; GlassLM's RoPE rotates halves");
  if (j.contains("pretraining_tp") && !(j["pretraining_tp"].is_number_integer() &&
                                        j["pretraining_tp"].get<std::int64_t>() == 1))
    throw config_error("pretraining_tp is " + j["pretraining_tp"].dump() +
                       ", expected 1");
  if (family != Family::exaone4 && j.contains("layer_types") &&
      j["layer_types"].is_array())
    for (const Json& t : j["layer_types"])
      if (t != "full_attention")
        throw config_error("layer_types has " + json_preview(t) +
                           "; GlassLM supports only \"full_attention\"");
}

// rope_scaling: null, or {"rope_type" (older files: "type"): "linear" or
// "llama3", ...}. transformers' "default" type is plain RoPE.
RopeScaling read_rope_scaling(const ConfigKeys& c) {
  RopeScaling rope;
  const Json& j = c.j;
  if (!j.contains("rope_scaling") || j["rope_scaling"].is_null()) return rope;
  const Json& r = j["rope_scaling"];
  if (!r.is_object()) throw c.type_error("rope_scaling", "an object or null");
  std::string type = r.contains("rope_type") && r["rope_type"].is_string()
                         ? r["rope_type"].get<std::string>()
                     : r.contains("type") && r["type"].is_string()
                         ? r["type"].get<std::string>()
                         : "";
  auto number = [&](const char* key) -> double {
    if (!r.contains(key) || !r[key].is_number())
      throw config_error("rope_scaling of type '" + type + "' needs a number '" + key +
                         "'");
    return r[key].get<double>();
  };
  if (type == "linear") {
    rope.type = RopeScaling::Type::linear;
    rope.factor = number("factor");
  } else if (type == "llama3") {
    rope.type = RopeScaling::Type::llama3;
    rope.factor = number("factor");
    rope.low_freq_factor = number("low_freq_factor");
    rope.high_freq_factor = number("high_freq_factor");
    rope.original_max_position_embeddings = number("original_max_position_embeddings");
  } else if (type != "default") {
    throw config_error("rope_scaling type '" + type +
                       "' is not supported (supported: llama3, linear)");
  }
  return rope;
}

// The sizes and the two constants of the math.
void read_sizes(const ConfigKeys& c, Config& cfg) {
  const Json& j = c.j;
  cfg.d_model = c.size("hidden_size");
  cfg.d_ff = c.size("intermediate_size");
  cfg.n_heads = c.size("num_attention_heads");
  cfg.n_layers = c.size("num_hidden_layers");
  cfg.vocab_size = c.size("vocab_size");
  cfg.max_len = c.size("max_position_embeddings");
  // As in transformers: without num_key_value_heads every head has its own K/V.
  cfg.n_kv_heads =
      j.contains("num_key_value_heads") && !j["num_key_value_heads"].is_null()
          ? c.size("num_key_value_heads")
          : cfg.n_heads;
  cfg.norm_eps = c.positive_number("rms_norm_eps");
  cfg.rope_theta = c.positive_number("rope_theta");
  // An explicit head_dim may differ from hidden_size / num_attention_heads
  // (Qwen3: 1024 / 16 = 64, head_dim 128); q_proj is then [H*hd, d_model].
  if (j.contains("head_dim") && !j["head_dim"].is_null()) {
    std::size_t hd = c.size("head_dim");
    if (cfg.d_model % cfg.n_heads != 0 || hd != cfg.d_model / cfg.n_heads)
      cfg.explicit_head_dim = hd;
  }
}

// torch_dtype (newer transformers write "dtype"): float32 and float64 are
// GlassLM's; float16 and bfloat16 weights are widened to float32 on loading,
// so they name no GlassLM dtype.
std::optional<DType> read_dtype(const ConfigKeys& c) {
  const char* dtype_key = c.j.contains("torch_dtype") ? "torch_dtype" : "dtype";
  std::string dtype_text = c.string_or(dtype_key, "");
  if (dtype_text == "float32" || dtype_text == "float64") return parse_dtype(dtype_text);
  if (!dtype_text.empty() && dtype_text != "float16" && dtype_text != "bfloat16")
    throw config_error(std::string(dtype_key) + " '" + dtype_text +
                       "' is not supported (float32, float64, float16 or bfloat16)");
  return std::nullopt;
}

}  // namespace

std::pair<Config, std::optional<DType>> config_from_json(const std::string& json_text) {
  Json j;
  try {
    j = detail::parse_json_strict(json_text);
  } catch (const std::invalid_argument& e) {
    throw config_error(e.what());
  }
  if (!j.is_object()) throw config_error("the JSON is not an object");
  const ConfigKeys keys(j);
  Config cfg;
  const Family family = read_architecture(keys);
  cfg.qkv_bias = family == Family::qwen2;
  refuse_unsupported_features(keys, family);
  if (family != Family::exaone4 && keys.j.contains("sliding_window_pattern"))
    throw config_error("sliding_window_pattern is EXAONE 4.0's; a " +
                       std::string(family == Family::qwen2 ? "Qwen2" : "Llama") +
                       " model has no sliding window here");
  cfg.rope_scaling = read_rope_scaling(keys);
  read_sizes(keys, cfg);
  if (family == Family::exaone4) {
    // Exaone4DecoderLayer: norms after attention and the MLP, and QK-norm.
    cfg.norm_placement = NormPlacement::post;
    cfg.qk_norm = true;
    read_exaone_layers(keys, cfg);
  }
  const std::optional<DType> dtype = read_dtype(keys);
  try {
    cfg.validate();
  } catch (const std::invalid_argument& e) {
    throw config_error(e.what());
  }
  return {cfg, dtype};
}

}  // namespace glassllm
