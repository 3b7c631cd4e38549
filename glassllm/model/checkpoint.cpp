// checkpoint.cpp: a GlassLM as a Hugging Face Llama checkpoint folder.
//
//   model.safetensors        the weights by their Hugging Face names
//   config.json              LlamaConfig keys (see config_to_json)
//   glassllm_tokenizer.json  the tokenizer, when there is one
//
// Loading checks the folder against the design's weight table before the
// model is built: a wrong name or shape is reported with the file, the name
// and both shapes, and a huge config cannot make us allocate a huge model
// that the file does not actually hold. safetensors.cpp reads and writes the
// weight file itself.
#include <cmath>
#include <filesystem>
#include <limits>
#include <set>

#include "glassllm/engine/node.h"
#include "glassllm/model/checkpoint_internal.h"
#include "glassllm/model/files.h"

namespace glassllm {

namespace {

using Json = nlohmann::ordered_json;
namespace fs = std::filesystem;

constexpr const char* kWeightsFile = "model.safetensors";
constexpr const char* kConfigFile = "config.json";
constexpr const char* kTokenizerFile = "glassllm_tokenizer.json";
// config.json is a few hundred bytes, a tokenizer a few KB (a large BPE
// vocabulary a few MB): a bigger file is not one of them.
constexpr std::uint64_t kMaxJsonBytes = 64ull << 20;

constexpr const char* kIndexFile = "model.safetensors.index.json";
constexpr const char* kHFTokenizerFile = "tokenizer.json";

// The tensors of a sharded checkpoint: model.safetensors.index.json maps each
// weight name to the shard file that holds it ({"weight_map": {"name":
// "model-00001-of-00002.safetensors", ...}}). Every shard is read once, and
// must hold exactly the weights the index gives it.
NamedTensors read_shards(const fs::path& root, const std::string& index_path) {
  Json index;
  try {
    index = detail::parse_json_strict(
        read_regular_file(index_path, kMaxJsonBytes, "a checkpoint index file"));
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(index_path + ": " + e.what());
  }
  if (!index.is_object() || !index.contains("weight_map") ||
      !index["weight_map"].is_object())
    throw std::runtime_error(index_path + ": no \"weight_map\" object");
  std::map<std::string, std::string> file_of;  // weight name -> shard file
  std::set<std::string> files;
  for (const auto& [name, file] : index["weight_map"].items()) {
    if (!file.is_string())
      throw std::runtime_error(index_path + ": weight_map['" + name +
                               "'] is not a file name");
    std::string f = file.get<std::string>();
    if (f.empty() || f.find('/') != std::string::npos || f == "..")
      throw std::runtime_error(index_path + ": weight_map['" + name + "'] is '" + f +
                               "', expected a file name in the same folder");
    file_of[name] = f;
    files.insert(f);
  }
  NamedTensors all;
  for (const std::string& f : files) {
    const std::string path = (root / f).string();
    for (auto& [name, tensor] : read_safetensors(path)) {
      auto it = file_of.find(name);
      if (it == file_of.end() || it->second != f)
        throw std::runtime_error(
            path + ": holds '" + name + "', which " + index_path +
            (it == file_of.end() ? " does not list" : " puts in " + it->second));
      file_of.erase(it);
      all.emplace_back(name, std::move(tensor));
    }
  }
  if (!file_of.empty())
    throw std::runtime_error(index_path + ": weight '" + file_of.begin()->first +
                             "' is not in its shard " + file_of.begin()->second);
  return all;
}

// Every weight's Hugging Face name and shape, in the order of the design's
// table, paired with where it lives in a model (nullptr when `model` is null).
struct Slot {
  std::string name;
  Shape shape;
  Tensor* tensor;
};

std::vector<Slot> weight_slots(const Config& cfg, GlassLM* model) {
  const std::size_t V = cfg.vocab_size, D = cfg.d_model, F = cfg.d_ff;
  const std::size_t q_out = cfg.n_heads * cfg.head_dim();      // H*hd
  const std::size_t kv_out = cfg.n_kv_heads * cfg.head_dim();  // Hkv*hd
  std::vector<Slot> slots;
  auto at = [&](Tensor GlassLM::*member) { return model ? &(model->*member) : nullptr; };
  slots.push_back({"model.embed_tokens.weight", {V, D}, at(&GlassLM::embed_tokens)});
  for (std::size_t l = 0; l < cfg.n_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    LayerWeights* L = model ? &model->layers.at(l) : nullptr;
    auto in = [&](Tensor LayerWeights::*member) { return L ? &(L->*member) : nullptr; };
    slots.push_back(
        {p + "input_layernorm.weight", {D}, in(&LayerWeights::input_layernorm)});
    slots.push_back(
        {p + "self_attn.q_proj.weight", {q_out, D}, in(&LayerWeights::q_proj)});
    slots.push_back(
        {p + "self_attn.k_proj.weight", {kv_out, D}, in(&LayerWeights::k_proj)});
    slots.push_back(
        {p + "self_attn.v_proj.weight", {kv_out, D}, in(&LayerWeights::v_proj)});
    if (cfg.qkv_bias) {
      slots.push_back({p + "self_attn.q_proj.bias", {q_out}, in(&LayerWeights::q_bias)});
      slots.push_back({p + "self_attn.k_proj.bias", {kv_out}, in(&LayerWeights::k_bias)});
      slots.push_back({p + "self_attn.v_proj.bias", {kv_out}, in(&LayerWeights::v_bias)});
    }
    slots.push_back(
        {p + "self_attn.o_proj.weight", {D, q_out}, in(&LayerWeights::o_proj)});
    slots.push_back({p + "post_attention_layernorm.weight",
                     {D},
                     in(&LayerWeights::post_attention_layernorm)});
    slots.push_back({p + "mlp.gate_proj.weight", {F, D}, in(&LayerWeights::gate_proj)});
    slots.push_back({p + "mlp.up_proj.weight", {F, D}, in(&LayerWeights::up_proj)});
    slots.push_back({p + "mlp.down_proj.weight", {D, F}, in(&LayerWeights::down_proj)});
  }
  slots.push_back({"model.norm.weight", {D}, at(&GlassLM::norm)});
  slots.push_back({"lm_head.weight", {V, D}, at(&GlassLM::lm_head)});
  return slots;
}

std::invalid_argument config_error(const std::string& what) {
  return std::invalid_argument(std::string(kConfigFile) + ": " + what);
}

// A new tensor with its own copy of t's elements (astype to the same dtype
// would only make a view).
Tensor copy_of(const Tensor& t) {
  Tensor out = empty(t.shape(), t.dtype());
  dispatch(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    std::copy_n(ptr<T>(t), t.size(), ptr<T>(out));
  });
  return out;
}

// The first element of t that is nan or +-inf, as "nan at index [3, 17]"
// plus how many more there are; "" when every element is finite.
std::string first_nonfinite(const Tensor& t) {
  std::string found;
  std::size_t count = 0;
  dispatch(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* p = ptr<T>(t);
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (std::isfinite(p[i])) continue;
      if (count++ > 0) continue;
      // The flat index as one index per dimension, last dimension fastest.
      std::string index;
      for (std::size_t d = t.ndim(), rest = i; d-- > 0;) {
        index = std::to_string(rest % t.shape()[d]) + (index.empty() ? "" : ", ") + index;
        rest /= t.shape()[d];
      }
      found = std::string(std::isnan(p[i]) ? "nan"
                          : p[i] > 0       ? "inf"
                                           : "-inf") +
              " at index [" + index + "]";
    }
  });
  if (count > 1) found += " (and " + std::to_string(count - 1) + " more non-finite)";
  return found;
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
  // one on o_proj too).
  j["architectures"] = {cfg.qkv_bias ? "Qwen2ForCausalLM" : "LlamaForCausalLM"};
  j["model_type"] = cfg.qkv_bias ? "qwen2" : "llama";
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
  if (!cfg.qkv_bias) j["attention_bias"] = false;
  j["mlp_bias"] = false;
  j["torch_dtype"] = dtype_name(dtype);
  if (eos_token_id) j["eos_token_id"] = *eos_token_id;
  return j.dump(2) + "\n";
}

// long-function: config.json read key by key, each key's checks and message
// right beside the line that reads it.
std::pair<Config, std::optional<DType>> config_from_json(const std::string& json_text) {
  Json j;
  try {
    j = detail::parse_json_strict(json_text);
  } catch (const std::invalid_argument& e) {
    throw config_error(e.what());
  }
  if (!j.is_object()) throw config_error("the JSON is not an object");

  auto type_error = [&](const char* key, const char* expected) {
    return config_error("'" + std::string(key) + "' is " + j[key].type_name() +
                        ", expected " + expected);
  };
  // A size: a positive integer, at most 2^31 (a bigger one is a broken file,
  // and products of sizes must not overflow).
  auto size = [&](const char* key) -> std::size_t {
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
  };
  auto positive_number = [&](const char* key) -> double {
    if (!j.contains(key)) throw config_error(std::string("missing key '") + key + "'");
    if (!j[key].is_number()) throw type_error(key, "a number");
    double v = j[key].get<double>();
    if (!(v > 0) || !std::isfinite(v))
      throw config_error("'" + std::string(key) + "' is " + j[key].dump() +
                         ", expected a positive number");
    return v;
  };
  auto string_or = [&](const char* key, const char* fallback) -> std::string {
    if (!j.contains(key) || j[key].is_null()) return fallback;
    if (!j[key].is_string()) throw type_error(key, "a string");
    return j[key].get<std::string>();
  };
  auto bool_or = [&](const char* key, bool fallback) -> bool {
    if (!j.contains(key) || j[key].is_null()) return fallback;
    if (!j[key].is_boolean()) throw type_error(key, "true or false");
    return j[key].get<bool>();
  };

  // Every key config.json may hold: the ones read below, and metadata that
  // does not change the forward pass. Anything else is a feature GlassLM does
  // not have, refused by name rather than silently ignored.
  static const std::set<std::string> known = {
      "architectures", "model_type", "hidden_size", "intermediate_size",
      "num_attention_heads", "num_hidden_layers", "num_key_value_heads", "head_dim",
      "max_position_embeddings", "rms_norm_eps", "rope_theta", "rope_scaling",
      "vocab_size", "tie_word_embeddings", "hidden_act", "attention_bias", "mlp_bias",
      "torch_dtype", "dtype", "bos_token_id", "eos_token_id", "pad_token_id",
      "pretraining_tp", "rope_interleaved", "use_sliding_window", "sliding_window",
      "max_window_layers", "layer_types",
      // metadata and training-only settings
      "_name_or_path", "transformers_version", "use_cache", "initializer_range",
      "attention_dropout", "is_llama_config", "tokenizer_class"};

  // The architecture: Llama or Qwen2 (Llama with biases on q, k and v), and
  // only the parts of them GlassLM implements.
  if (!j.contains("model_type")) throw config_error("missing key 'model_type'");
  std::string model_type = string_or("model_type", "");
  if (model_type != "llama" && model_type != "qwen2")
    throw config_error("model_type is '" + model_type + "', expected 'llama' or 'qwen2'");
  const bool qwen2 = model_type == "qwen2";
  for (const auto& [key, value] : j.items())
    if (!known.count(key))
      throw config_error("key '" + key + "' is not supported (GlassLM runs Llama and " +
                         "Qwen2 models without it)");
  const std::string architecture = qwen2 ? "Qwen2ForCausalLM" : "LlamaForCausalLM";
  if (j.contains("architectures")) {
    const Json& a = j["architectures"];
    if (!a.is_array()) throw type_error("architectures", "a list of strings");
    for (const Json& name : a)
      if (!name.is_string() || name.get<std::string>() != architecture)
        throw config_error("architecture " +
                           (name.is_string() ? "'" + name.get<std::string>() + "'"
                                             : std::string(name.type_name())) +
                           " is not supported, expected '" + architecture + "'");
  }
  std::string act = string_or("hidden_act", "silu");
  if (act != "silu")
    throw config_error("hidden_act is '" + act + "'; GlassLM's MLP uses 'silu' (SwiGLU)");
  if (bool_or("attention_bias", false))
    throw config_error(
        "attention_bias is true; GlassLM has biases on q, k and v only (Qwen2), not on "
        "o_proj");
  if (bool_or("mlp_bias", false))
    throw config_error("mlp_bias is true; GlassLM's MLP has no biases");
  bool_or("tie_word_embeddings", false);  // only its type here; load_checkpoint uses it
  if (bool_or("use_sliding_window", false))
    throw config_error("use_sliding_window is true; GlassLM attends over every position");
  if (bool_or("rope_interleaved", false))
    throw config_error("rope_interleaved is true; GlassLM's RoPE rotates halves");
  if (j.contains("pretraining_tp") && !(j["pretraining_tp"].is_number_integer() &&
                                        j["pretraining_tp"].get<std::int64_t>() == 1))
    throw config_error("pretraining_tp is " + j["pretraining_tp"].dump() +
                       ", expected 1");
  if (j.contains("layer_types") && j["layer_types"].is_array())
    for (const Json& t : j["layer_types"])
      if (t != "full_attention")
        throw config_error("layer_types has " + t.dump() +
                           "; GlassLM supports only \"full_attention\"");

  // rope_scaling: null, or {"rope_type" (older files: "type"): "linear" or
  // "llama3", ...}. transformers' "default" type is plain RoPE.
  RopeScaling rope;
  if (j.contains("rope_scaling") && !j["rope_scaling"].is_null()) {
    const Json& r = j["rope_scaling"];
    if (!r.is_object()) throw type_error("rope_scaling", "an object or null");
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
  }

  Config cfg;
  cfg.d_model = size("hidden_size");
  cfg.d_ff = size("intermediate_size");
  cfg.n_heads = size("num_attention_heads");
  cfg.n_layers = size("num_hidden_layers");
  cfg.vocab_size = size("vocab_size");
  cfg.max_len = size("max_position_embeddings");
  // As in transformers: without num_key_value_heads every head has its own K/V.
  cfg.n_kv_heads =
      j.contains("num_key_value_heads") && !j["num_key_value_heads"].is_null()
          ? size("num_key_value_heads")
          : cfg.n_heads;
  cfg.norm_eps = positive_number("rms_norm_eps");
  cfg.rope_theta = positive_number("rope_theta");
  // An explicit head_dim may differ from hidden_size / num_attention_heads
  // (Qwen3: 1024 / 16 = 64, head_dim 128); q_proj is then [H*hd, d_model].
  if (j.contains("head_dim") && !j["head_dim"].is_null()) {
    std::size_t hd = size("head_dim");
    if (cfg.d_model % cfg.n_heads != 0 || hd != cfg.d_model / cfg.n_heads)
      cfg.explicit_head_dim = hd;
  }
  cfg.qkv_bias = qwen2;
  cfg.rope_scaling = rope;

  // torch_dtype (newer transformers write "dtype"): float32 and float64 are
  // GlassLM's; float16 and bfloat16 weights are widened to float32 on loading,
  // so they name no GlassLM dtype.
  std::optional<DType> dtype;
  const char* dtype_key = j.contains("torch_dtype") ? "torch_dtype" : "dtype";
  std::string dtype_text = string_or(dtype_key, "");
  if (dtype_text == "float32" || dtype_text == "float64")
    dtype = parse_dtype(dtype_text);
  else if (!dtype_text.empty() && dtype_text != "float16" && dtype_text != "bfloat16")
    throw config_error(std::string(dtype_key) + " '" + dtype_text +
                       "' is not supported (float32, float64, float16 or bfloat16)");

  try {
    cfg.validate();
  } catch (const std::invalid_argument& e) {
    throw config_error(e.what());
  }
  return {cfg, dtype};
}

namespace {

// config.json's eos_token_id: absent or null (none), one id, or a list of ids
// (as Llama 3 writes it), each inside the vocabulary.
std::vector<std::int64_t> eos_ids_of(const Json& j, std::size_t vocab_size,
                                     const std::string& config_path) {
  std::vector<std::int64_t> ids;
  if (!j.contains("eos_token_id") || j["eos_token_id"].is_null()) return ids;
  const Json& v = j["eos_token_id"];
  auto bad = [&](const std::string& why) {
    return std::runtime_error(config_path + ": eos_token_id " + why);
  };
  auto add = [&](const Json& e) {
    if (!e.is_number_integer())
      throw bad(std::string("holds a ") + e.type_name() +
                "; expected token ids (integers)");
    std::int64_t id = e.get<std::int64_t>();
    if (id < 0 || id >= std::int64_t(vocab_size))
      throw bad(std::to_string(id) + " is outside the vocabulary [0, " +
                std::to_string(vocab_size) + ")");
    ids.push_back(id);
  };
  if (v.is_array())
    for (const Json& e : v) add(e);
  else
    add(v);
  return ids;
}

}  // namespace

// ---- saving
// ----------------------------------------------------------------------------

void save_checkpoint(const std::string& dir, const GlassLM& model,
                     const Tokenizer* tokenizer) {
  if (tokenizer && tokenizer->vocab_size() != model.config().vocab_size)
    throw std::invalid_argument("save_checkpoint: the tokenizer has " +
                                std::to_string(tokenizer->vocab_size()) +
                                " tokens but the model's vocab_size is " +
                                std::to_string(model.config().vocab_size));
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw WriteError(dir + ": cannot write: cannot create the folder: " + ec.message());
  const fs::path root(dir);
  // transformers refuses safetensors files without {"format": "pt"}.
  write_safetensors((root / kWeightsFile).string(), model.named_parameters(),
                    {{"format", "pt"}});
  // The tokenizer's end-of-text id goes to config.json, where Hugging Face
  // tools (and load_checkpoint) look for the token that ends generation.
  write_file_safely((root / kConfigFile).string(),
                    config_to_json(model.config(), model.dtype(),
                                   tokenizer ? tokenizer->eos_id() : std::nullopt));
  if (tokenizer)
    write_file_safely((root / kTokenizerFile).string(), tokenizer->to_json());
}

// ---- loading
// ---------------------------------------------------------------------------

// long-function: loading in the order of the files (config.json, then every
// weight's name, shape and dtype against it, then the tokenizer), each
// step's error messages beside it.
Checkpoint load_checkpoint(const std::string& dir, std::optional<DType> dtype,
                           bool allow_nonfinite) {
  const fs::path root(dir);
  const std::string config_path = (root / kConfigFile).string();
  const std::string tokenizer_path = (root / kTokenizerFile).string();

  // 1. config.json
  std::string config_text =
      read_regular_file(config_path, kMaxJsonBytes, "a config file");
  Config cfg;
  std::optional<DType> config_dtype;
  try {
    std::tie(cfg, config_dtype) = config_from_json(config_text);
  } catch (const std::invalid_argument& e) {
    // "config.json: ..." -> "<dir>/config.json: ..."
    throw std::runtime_error((root / e.what()).string());
  }
  bool tied = false;
  std::vector<std::int64_t> eos_token_ids;
  {
    Json j = detail::parse_json_strict(config_text);  // parsed fine a moment ago
    tied = j.contains("tie_word_embeddings") && j["tie_word_embeddings"].is_boolean() &&
           j["tie_word_embeddings"].get<bool>();
    eos_token_ids = eos_ids_of(j, cfg.vocab_size, config_path);
  }

  // 2. The weights (model.safetensors or its shards), checked name by name
  // against the design's table.
  std::string weights_path = (root / kWeightsFile).string();
  NamedTensors loaded;
  const std::string index_path = (root / kIndexFile).string();
  std::error_code exists_ec;
  if (!fs::exists(weights_path, exists_ec) && fs::exists(index_path, exists_ec)) {
    loaded = read_shards(root, index_path);
    weights_path = index_path;  // names the weights in the messages below
  } else {
    loaded = read_safetensors(weights_path);
  }
  std::map<std::string, Tensor> by_name(loaded.begin(), loaded.end());
  std::vector<Slot> slots = weight_slots(cfg, nullptr);
  std::vector<std::string> missing;
  for (const Slot& s : slots) {
    if (by_name.count(s.name)) continue;
    if (tied && s.name == "lm_head.weight") continue;  // copied from the embedding below
    missing.push_back("'" + s.name + "' (expected shape " + shape_str(s.shape) + ")");
  }
  if (!missing.empty())
    throw std::runtime_error(weights_path + ": missing weight " + missing.front() +
                             (missing.size() > 1
                                  ? " and " + std::to_string(missing.size() - 1) + " more"
                                  : ""));
  for (const Slot& s : slots) {
    auto it = by_name.find(s.name);
    if (it != by_name.end() && it->second.shape() != s.shape)
      throw std::runtime_error(weights_path + ": weight '" + s.name + "' has shape " +
                               shape_str(it->second.shape()) + ", expected " +
                               shape_str(s.shape));
  }
  std::set<std::string> expected;
  for (const Slot& s : slots) expected.insert(s.name);
  std::string unexpected;
  std::size_t n_unexpected = 0;
  for (const auto& [name, t] : loaded) {
    // Older transformers saved RoPE's inv_freq as a buffer; it is recomputed
    // from rope_theta, so it is not a weight.
    if (expected.count(name) || name.ends_with(".self_attn.rotary_emb.inv_freq"))
      continue;
    if (n_unexpected++ < 5) unexpected += (unexpected.empty() ? "'" : ", '") + name + "'";
  }
  if (n_unexpected > 0)
    throw std::runtime_error(
        weights_path + ": unexpected weight" + (n_unexpected > 1 ? "s " : " ") +
        unexpected +
        (n_unexpected > 5 ? " and " + std::to_string(n_unexpected - 5) + " more" : "") +
        "; a Llama model of this config has no such weight");

  // Non-finite weights make every output non-finite (a nan anywhere in a
  // matrix product spreads to its whole row), and a check comparing nan with
  // nan proves nothing: refuse them unless asked, naming the first one.
  std::vector<std::string> nonfinite;
  for (const auto& [name, t] : loaded) {
    std::string bad = first_nonfinite(t);
    if (bad.empty()) continue;
    const std::string line = weights_path + ": weight '" + name + "' has " + bad;
    if (!allow_nonfinite)
      throw std::runtime_error(line +
                               "; non-finite weights make every output non-finite "
                               "(--allow-nonfinite loads them anyway)");
    nonfinite.push_back(line);
  }

  // 3. The dtype: asked for, else the file's own, else (a file mixing float32
  // and float64) the config's torch_dtype.
  DType target = DType::float32;
  if (dtype) {
    target = *dtype;
  } else {
    bool mixed = false;
    for (std::size_t i = 1; i < loaded.size(); ++i)
      mixed |= loaded[i].second.dtype() != loaded[0].second.dtype();
    if (!loaded.empty()) target = loaded[0].second.dtype();
    if (mixed) target = config_dtype.value_or(DType::float32);
  }

  // 4. The model, with every weight replaced by the loaded one.
  GlassLM model(cfg, 0, target);
  slots = weight_slots(cfg, &model);
  {
    auto params = model.named_parameters();
    bool same = params.size() == slots.size();
    for (std::size_t i = 0; same && i < slots.size(); ++i)
      same = params[i].first == slots[i].name;
    if (!same)
      throw std::logic_error(
          "load_checkpoint: GlassLM::named_parameters() disagrees with the "
          "checkpoint's weight table");
  }
  no_grad guard;  // the conversions are not part of any graph
  for (Slot& s : slots) {
    auto it = by_name.find(s.name);
    if (it == by_name.end())
      it = by_name.find("model.embed_tokens.weight");  // tied lm_head
    Tensor t = it->second.dtype() == target ? it->second : astype(it->second, target);
    if (s.name == "lm_head.weight" && !by_name.count(s.name)) t = copy_of(t);
    bool trainable = s.tensor->requires_grad();
    *s.tensor = t.detach();
    s.tensor->requires_grad_(trainable);
  }

  // 5. The tokenizer, when the folder has one.
  std::optional<Tokenizer> tokenizer;
  std::error_code ec;
  if (fs::exists(tokenizer_path, ec)) {
    std::string text =
        read_regular_file(tokenizer_path, kMaxJsonBytes, "a tokenizer file");
    try {
      tokenizer = Tokenizer::from_json(text);
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(tokenizer_path + ": " + e.what());
    }
    if (tokenizer->vocab_size() != cfg.vocab_size)
      throw std::runtime_error(
          tokenizer_path + ": " + std::to_string(tokenizer->vocab_size()) +
          " tokens, but config.json says vocab_size " + std::to_string(cfg.vocab_size));
  }
  // 6. A Hugging Face tokenizer, and config.json's BOS id. A model's
  // embedding may have more rows than its tokenizer has tokens (Qwen2.5 pads
  // 151665 tokens to 151936 rows), never fewer.
  std::optional<HFTokenizer> hf_tokenizer;
  if (fs::exists(root / kHFTokenizerFile, ec)) {
    hf_tokenizer = HFTokenizer::load(dir);
    if (hf_tokenizer->vocab_size() > cfg.vocab_size)
      throw std::runtime_error((root / kHFTokenizerFile).string() + ": " +
                               std::to_string(hf_tokenizer->vocab_size()) +
                               " tokens, but config.json says vocab_size " +
                               std::to_string(cfg.vocab_size));
  }
  std::optional<std::int64_t> bos;
  {
    Json j = detail::parse_json_strict(config_text);
    if (j.contains("bos_token_id") && !j["bos_token_id"].is_null()) {
      const Json& v = j["bos_token_id"];
      if (!v.is_number_integer() || v.get<std::int64_t>() < 0 ||
          v.get<std::uint64_t>() >= cfg.vocab_size)
        throw std::runtime_error(config_path + ": bos_token_id " + v.dump() +
                                 " is not a token id in [0, vocab_size)");
      bos = v.get<std::int64_t>();
    }
  }
  return Checkpoint{std::move(model),
                    std::move(tokenizer),
                    std::move(nonfinite),
                    std::move(hf_tokenizer),
                    bos,
                    std::move(eos_token_ids)};
}

}  // namespace glassllm
