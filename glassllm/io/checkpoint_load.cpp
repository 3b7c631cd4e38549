// checkpoint_load.cpp: building a GlassLM from a checkpoint's contents --
// config.json's text, the weights already read, the tokenizer's text --
// wherever they came from: a folder (load_checkpoint in checkpoint.cpp reads
// its files) or memory (load_checkpoint_from_memory, for the inspector page's
// engine, which has no files). One parser, one set of checks and messages.
//
// Loading checks the weights against the design's weight table before the
// model is built: a wrong name or shape is reported with the file, the name
// and both shapes, and a huge config cannot make us allocate a huge model
// that the file does not actually hold.
#include <cmath>
#include <filesystem>
#include <set>

#include "glassllm/engine/ops.h"
#include "glassllm/io/budget.h"
#include "glassllm/io/checkpoint_internal.h"

namespace glassllm {

namespace {

using Json = nlohmann::ordered_json;
namespace fs = std::filesystem;

// Every weight's Hugging Face name and shape, in the order of the design's
// table.
struct Slot {
  std::string name;
  Shape shape;
};

std::vector<Slot> weight_slots(const Config& cfg) {
  std::vector<Slot> slots;
  for (auto& [name, shape] : weight_table(cfg)) slots.push_back({name, shape});
  return slots;
}

// A new tensor with its own copy of t's elements (astype to the same dtype
// would only make a view).
Tensor copy_of(const Tensor& t) {
  Tensor out = empty(t.shape(), t.dtype());
  dispatch(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    std::copy_n(t.data<T>(), t.size(), out.mutable_data<T>());
  });
  return out;
}

// "nan at index [3, 17]": the element at flat index i of a tensor of this
// shape, as one index per dimension, last dimension fastest.
std::string nonfinite_at(const Shape& shape, std::size_t i, bool is_nan, bool positive) {
  std::string index;
  for (std::size_t d = shape.size(), rest = i; d-- > 0;) {
    index = std::to_string(rest % shape[d]) + (index.empty() ? "" : ", ") + index;
    rest /= shape[d];
  }
  return std::string(is_nan     ? "nan"
                     : positive ? "inf"
                                : "-inf") +
         " at index [" + index + "]";
}

// The same for a tensor kept in 16 bits: nan and inf have every exponent
// bit set (bfloat16: 0x7F80, half: 0x7C00), nan a mantissa too.
std::string first_nonfinite16(const detail::Tensor16& t) {
  const std::uint16_t exponent = t.dtype == "BF16" ? 0x7F80 : 0x7C00;
  std::string found;
  std::size_t count = 0;
  for (std::size_t i = 0; i < t.bits.size(); ++i) {
    const std::uint16_t b = t.bits[i];
    if ((b & exponent) != exponent || count++ > 0) continue;
    found = nonfinite_at(t.shape, i, (b & 0x7FFF & ~exponent) != 0, (b & 0x8000) == 0);
  }
  if (count > 1) found += " (and " + std::to_string(count - 1) + " more non-finite)";
  return found;
}

// The first element of t that is nan or +-inf, as "nan at index [3, 17]"
// plus how many more there are; "" when every element is finite.
std::string first_nonfinite(const Tensor& t) {
  std::string found;
  std::size_t count = 0;
  dispatch(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* p = t.data<T>();
    const std::size_t n = t.size();
    // A quick pass first (every weight of every load is checked: a billion
    // for a 1B model): nan and inf are the values with every exponent bit
    // set, a test on the bits that the compiler turns into vector code.
    using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
    constexpr Bits exponent =
        sizeof(T) == 4 ? Bits(0x7F800000u) : Bits(0x7FF0000000000000ull);
    bool any = false;
    for (std::size_t i = 0; i < n; ++i)
      any |= (detail::same_bits<Bits>(p[i]) & exponent) == exponent;
    if (!any) return;
    for (std::size_t i = 0; i < n; ++i) {
      if (std::isfinite(p[i])) continue;
      if (count++ > 0) continue;
      found = nonfinite_at(t.shape(), i, std::isnan(p[i]), p[i] > 0);
    }
  });
  if (count > 1) found += " (and " + std::to_string(count - 1) + " more non-finite)";
  return found;
}

}  // namespace

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

namespace {

// The loaded weights against config.json: enough of them for its layers
// (checked before their names are made: 10^9 layers would take minutes and
// gigabytes to list), none missing (a tied lm_head is copied from the
// embedding), each of the design's shape, and none unexpected.
void check_weights_against_config(
    const std::vector<std::pair<std::string, Shape>>& loaded,
    const std::map<std::string, Shape>& by_name, const Config& cfg, bool tied,
    const std::string& weights_path, const std::string& config_path) {
  // Each layer has at least 9 weights.
  const double least_weights = 9.0 * double(cfg.n_layers) + 2;
  if (least_weights > double(loaded.size()))
    throw std::runtime_error(
        config_path + ": num_hidden_layers is " + std::to_string(cfg.n_layers) +
        ", which needs at least " + std::to_string(std::uint64_t(least_weights)) +
        " weights, but " + weights_path + " holds " + std::to_string(loaded.size()));
  const std::vector<Slot> slots = weight_slots(cfg);
  std::vector<std::string> missing;
  for (const Slot& s : slots) {
    if (by_name.count(s.name)) continue;
    if (tied && s.name == "lm_head.weight") continue;
    missing.push_back("'" + s.name + "' (expected shape " + shape_str(s.shape) + ")");
  }
  if (!missing.empty())
    throw std::runtime_error(weights_path + ": missing weight " + missing.front() +
                             (missing.size() > 1
                                  ? " and " + std::to_string(missing.size() - 1) + " more"
                                  : ""));
  for (const Slot& s : slots) {
    auto it = by_name.find(s.name);
    if (it != by_name.end() && it->second != s.shape)
      throw std::runtime_error(weights_path + ": weight '" + s.name + "' has shape " +
                               shape_str(it->second) + ", expected " +
                               shape_str(s.shape));
  }
  std::set<std::string> expected;
  for (const Slot& s : slots) expected.insert(s.name);
  std::string unexpected;
  std::size_t n_unexpected = 0;
  for (const auto& [name, shape] : loaded) {
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
}

// Non-finite weights make every output non-finite (a nan anywhere in a
// matrix product spreads to its whole row), and a check comparing nan with
// nan proves nothing: refused unless asked, naming the first one. Returns
// the lines that name them when they are allowed.
std::vector<std::string> nonfinite_weights(const NamedTensors& loaded,
                                           const detail::Keep16& keep16,
                                           const std::string& weights_path,
                                           bool allow_nonfinite) {
  std::vector<std::string> nonfinite;
  auto check = [&](const std::string& name, const std::string& bad) {
    if (bad.empty()) return;
    const std::string line = weights_path + ": weight '" + name + "' has " + bad;
    if (!allow_nonfinite)
      throw std::runtime_error(line +
                               "; non-finite weights make every output non-finite "
                               "(--allow-nonfinite loads them anyway)");
    nonfinite.push_back(line);
  };
  for (const auto& [name, t] : loaded) check(name, first_nonfinite(t));
  for (const auto& [name, t] : keep16.kept) check(name, first_nonfinite16(t));
  return nonfinite;
}

// The dtype: asked for, else the file's own, else (a file mixing float32 and
// float64) the config's torch_dtype.
DType model_dtype(const NamedTensors& loaded, std::optional<DType> asked,
                  std::optional<DType> config_dtype) {
  if (asked) return *asked;
  if (loaded.empty()) return DType::float32;
  bool mixed = false;
  for (std::size_t i = 1; i < loaded.size(); ++i)
    mixed |= loaded[i].second.dtype() != loaded[0].second.dtype();
  return mixed ? config_dtype.value_or(DType::float32) : loaded[0].second.dtype();
}

// The model, made from the loaded tensors themselves: no random
// initialisation, and no copy unless the dtype changes (a 1B-parameter model
// is 5 GB in float32; a second copy would not fit in 8 GB). Takes the
// tensors out of `by_name` as the model takes them.
GlassLM model_from_tensors(const Config& cfg, DType target,
                           std::map<std::string, Tensor>& by_name,
                           std::shared_ptr<const Weights16> weights16) {
  no_grad guard;  // the conversions are not part of any graph
  return GlassLM::from_weights(
      cfg, target,
      [&](const std::string& name, const Shape&) -> Tensor {
        if (weights16 && weights16->find(name)) return Tensor();  // kept in 16 bits
        auto it = by_name.find(name);
        const bool tied_head = it == by_name.end() && name == "lm_head.weight";
        if (tied_head) it = by_name.find("model.embed_tokens.weight");
        if (it == by_name.end())  // every slot was checked before
          throw std::logic_error("load_checkpoint: GlassLM asks for weight '" + name +
                                 "', which the checkpoint's weight table lacks");
        const bool same_dtype = it->second.dtype() == target;
        Tensor t = same_dtype ? it->second : astype(it->second, target);
        // A tied lm_head is its own copy (astype has made one already):
        // training may move it apart from the embedding, as GlassLM's two
        // weights always can.
        if (tied_head) return same_dtype ? copy_of(t) : t;
        // The model holds t now: a converted original is freed at once (the
        // embedding stays for a tied lm_head, the last weight).
        if (name != "model.embed_tokens.weight") by_name.erase(it);
        return t;
      },
      weights16);
}

// ---- 16-bit weights (weights16.h) ----

WeightType type_of(const std::string& safetensors_dtype) {
  return safetensors_dtype == "BF16" ? WeightType::bf16 : WeightType::f16;
}

// The type the projections are kept in: the one asked for, or (as stored)
// that of the first one the file holds in 16 bits; f32 when it holds none.
WeightType weights_type(std::optional<WeightType> asked, const detail::Keep16& keep16) {
  if (asked) return *asked;
  return keep16.kept.empty() ? WeightType::f32
                             : type_of(keep16.kept.front().second.dtype);
}

// The model's 16-bit projections, each from its bits as read (converted when
// the file stores the other 16-bit type) or else rounded from its float
// tensor, which is then freed; a tied lm_head is rounded from the embedding.
std::shared_ptr<const Weights16> weights16_from(const Config& cfg, WeightType type,
                                                detail::Keep16& keep16,
                                                std::map<std::string, Tensor>& by_name) {
  auto w16 = std::make_shared<Weights16>();
  w16->type = type;
  w16->layers.resize(cfg.n_layers);
  std::map<std::string, detail::Tensor16*> kept;
  for (auto& [name, t] : keep16.kept) kept[name] = &t;
  for (const Slot& s : weight_slots(cfg)) {
    Weight16* w = w16->find(s.name);
    if (!w) continue;
    if (auto k = kept.find(s.name); k != kept.end()) {
      detail::Tensor16& t = *k->second;
      *w = Weight16{type, s.shape[0], s.shape[1], std::move(t.bits)};
      const WeightType stored = type_of(t.dtype);
      if (stored != type)
        for (std::uint16_t& b : w->bits) b = to_16_bits(type, from_16_bits(stored, b));
      continue;
    }
    auto it = by_name.find(s.name);
    if (it == by_name.end())  // a tied lm_head (checked before)
      it = by_name.find("model.embed_tokens.weight");
    *w = Weight16::from_tensor(it->second, type);
    if (it->first != "model.embed_tokens.weight") by_name.erase(it);
  }
  keep16.kept.clear();
  return w16;
}

// The folder's character tokenizer, when it has one, with as many tokens as
// config.json's vocabulary.
std::optional<Tokenizer> tokenizer_of(const detail::CheckpointSource& source,
                                      const Config& cfg) {
  std::optional<Tokenizer> tokenizer;
  if (std::optional<std::string> text = source.read_tokenizer()) {
    try {
      tokenizer = Tokenizer::from_json(*text);
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(source.tokenizer_name + ": " + e.what());
    }
    if (tokenizer->vocab_size() != cfg.vocab_size)
      throw std::runtime_error(
          source.tokenizer_name + ": " + std::to_string(tokenizer->vocab_size()) +
          " tokens, but config.json says vocab_size " + std::to_string(cfg.vocab_size));
  }
  return tokenizer;
}

// config.json's bos_token_id: absent or null (none), else a token id.
std::optional<std::int64_t> bos_id_of(const Json& j, std::size_t vocab_size,
                                      const std::string& config_path) {
  if (!j.contains("bos_token_id") || j["bos_token_id"].is_null()) return std::nullopt;
  const Json& v = j["bos_token_id"];
  if (!v.is_number_integer() || v.get<std::int64_t>() < 0 ||
      v.get<std::uint64_t>() >= vocab_size)
    throw std::runtime_error(config_path + ": bos_token_id " + v.dump() +
                             " is not a token id in [0, vocab_size)");
  return v.get<std::int64_t>();
}

}  // namespace

// Loading in the order of the files: config.json, then every weight's name,
// shape and dtype against it, then the tokenizer.
// long-function: the steps of a load in the order they run, each a few lines
Checkpoint detail::load_checkpoint_source(const CheckpointSource& source,
                                          std::optional<DType> dtype,
                                          bool allow_nonfinite,
                                          std::optional<WeightType> weights) {
  const fs::path root(source.folder);
  const std::string& config_path = source.config_name;

  // 1. config.json
  Config cfg;
  std::optional<DType> config_dtype;
  try {
    std::tie(cfg, config_dtype) = config_from_json(source.config_text);
  } catch (const std::invalid_argument& e) {
    // "config.json: ..." -> "<dir>/config.json: ..."
    throw std::runtime_error((root / e.what()).string());
  }
  const Json j = detail::parse_json_strict(source.config_text);  // parsed fine above
  const bool tied = j.contains("tie_word_embeddings") &&
                    j["tie_word_embeddings"].is_boolean() &&
                    j["tie_word_embeddings"].get<bool>();
  std::vector<std::int64_t> eos_token_ids = eos_ids_of(j, cfg.vocab_size, config_path);
  // The weights these sizes make, against this machine's memory (budget.h),
  // before a byte of them is read: a config.json claiming 10^9 layers or a
  // vocabulary of 10^12 is refused here, in milliseconds.
  check_fits_in_memory(
      config_path + ": a model of these sizes (" + std::to_string(cfg.n_layers) +
          " layers, d_model " + std::to_string(cfg.d_model) + ", vocab " +
          std::to_string(cfg.vocab_size) + ")",
      parameter_bytes(cfg, dtype.value_or(DType::float32)), "check config.json's sizes");

  // 16-bit weights multiply float32 activations; as stored, a float64 model
  // keeps float32 Tensors.
  if (weights && *weights != WeightType::f32 && dtype && *dtype != DType::float32)
    throw std::invalid_argument(std::string("--weights ") + weight_type_name(*weights) +
                                " runs with float32 activations; drop --dtype " +
                                dtype_name(*dtype) + " or use --weights f32");
  if (!weights && dtype && *dtype != DType::float32) weights = WeightType::f32;

  // 2. The weights (model.safetensors or its shards), checked name by name
  // against the design's table; the projections that stay in 16 bits are
  // read into keep16, as their bits.
  std::string weights_path;  // what the messages call the weights
  detail::Keep16 keep16;
  if (weights != WeightType::f32) keep16.wanted = kept_in_16_bits;
  NamedTensors loaded =
      source.read_weights(weights_path, keep16.wanted ? &keep16 : nullptr);
  std::vector<std::pair<std::string, Shape>> shapes;
  for (const auto& [name, t] : loaded) shapes.emplace_back(name, t.shape());
  for (const auto& [name, t] : keep16.kept) shapes.emplace_back(name, t.shape);
  check_weights_against_config(shapes,
                               std::map<std::string, Shape>(shapes.begin(), shapes.end()),
                               cfg, tied, weights_path, config_path);
  std::vector<std::string> nonfinite =
      nonfinite_weights(loaded, keep16, weights_path, allow_nonfinite);

  // 3. The dtype, and 4. the model made from the tensors (and the 16-bit
  // weights, which leave no float32 Tensor).
  const WeightType type = weights_type(weights, keep16);
  const DType target =
      type == WeightType::f32 ? model_dtype(loaded, dtype, config_dtype) : DType::float32;
  std::map<std::string, Tensor> by_name(loaded.begin(), loaded.end());
  loaded.clear();  // by_name holds the tensors now
  std::shared_ptr<const Weights16> w16 =
      type == WeightType::f32 ? nullptr : weights16_from(cfg, type, keep16, by_name);
  GlassLM model = model_from_tensors(cfg, target, by_name, std::move(w16));

  // 5. The tokenizer, when the folder has one, and 6. config.json's BOS id.
  std::optional<Tokenizer> tokenizer = tokenizer_of(source, cfg);
  const std::optional<std::int64_t> bos = bos_id_of(j, cfg.vocab_size, config_path);
  return Checkpoint{
      std::move(model),        std::move(tokenizer), std::move(nonfinite), nullptr, bos,
      std::move(eos_token_ids)};
}

Checkpoint load_checkpoint_from_memory(std::string_view config_json,
                                       std::string_view tokenizer_json,
                                       const std::uint8_t* weights,
                                       std::size_t weights_size,
                                       const std::string& folder, bool allow_nonfinite) {
  const fs::path root(folder);
  detail::CheckpointSource source;
  source.folder = folder;
  source.config_name = (root / "config.json").string();
  source.config_text = std::string(config_json);
  source.read_weights = [&](std::string& name, detail::Keep16* keep16) {
    name = (root / "model.safetensors").string();
    return detail::read_safetensors_bytes(weights, weights_size, name, {}, keep16);
  };
  source.tokenizer_name = (root / "glassllm_tokenizer.json").string();
  source.read_tokenizer = [&]() -> std::optional<std::string> {
    if (tokenizer_json.empty()) return std::nullopt;
    return std::string(tokenizer_json);
  };
  return detail::load_checkpoint_source(source, std::nullopt, allow_nonfinite);
}

}  // namespace glassllm
