// checkpoint.cpp: a GlassLM as a Hugging Face Llama checkpoint folder.
//
//   model.safetensors        the weights by their Hugging Face names
//   config.json              LlamaConfig keys (see config_to_json)
//   glassllm_tokenizer.json  the tokenizer, when there is one
//
// Saving, and loading's file part: reading the folder's files (sharded
// weights included) and a Hugging Face tokenizer.json. What is done with the
// contents -- the checks against the design's weight table, building the
// model -- is checkpoint_load.cpp, shared with loading from memory.
// safetensors.cpp reads and writes the weight file itself.
#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>
#include <set>

#include "glassllm/io/checkpoint_internal.h"
#include "glassllm/io/files.h"

namespace glassllm {

namespace {

using Json = nlohmann::ordered_json;
namespace fs = std::filesystem;

constexpr const char* kWeightsFile = "model.safetensors";
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
NamedTensors read_shards(const fs::path& root, const std::string& index_path,
                         detail::Keep16* keep16) {
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
    // Every name the shard holds must be one the index puts there.
    auto check_listed = [&](const std::string& name) {
      auto it = file_of.find(name);
      if (it == file_of.end() || it->second != f)
        throw std::runtime_error(
            path + ": holds '" + name + "', which " + index_path +
            (it == file_of.end() ? " does not list" : " puts in " + it->second));
      file_of.erase(it);
    };
    const std::size_t kept_before = keep16 ? keep16->kept.size() : 0;
    for (auto& [name, tensor] : detail::read_safetensors_keeping(path, keep16)) {
      check_listed(name);
      all.emplace_back(name, std::move(tensor));
    }
    for (std::size_t i = kept_before; keep16 && i < keep16->kept.size(); ++i)
      check_listed(keep16->kept[i].first);
  }
  if (!file_of.empty())
    throw std::runtime_error(index_path + ": weight '" + file_of.begin()->first +
                             "' is not in its shard " + file_of.begin()->second);
  return all;
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
  write_file_safely((root / detail::kConfigFile).string(),
                    config_to_json(model.config(), model.dtype(),
                                   tokenizer ? tokenizer->eos_id() : std::nullopt));
  if (tokenizer)
    write_file_safely((root / kTokenizerFile).string(), tokenizer->to_json());
}

// ---- loading
// ---------------------------------------------------------------------------

// ---- loading
// ---------------------------------------------------------------------------

// The files of a folder, read in the order checkpoint_load.cpp asks for them,
// so that its messages come in the same order for a folder as in memory.
Checkpoint load_checkpoint(const std::string& dir, std::optional<DType> dtype,
                           bool allow_nonfinite, std::optional<WeightType> weights) {
  const fs::path root(dir);
  detail::CheckpointSource source;
  source.folder = dir;
  source.config_name = (root / detail::kConfigFile).string();
  source.config_text =
      read_regular_file(source.config_name, kMaxJsonBytes, "a config file");
  source.read_weights = [&root](std::string& name, detail::Keep16* keep16) {
    // model.safetensors, or the shards its index lists.
    name = (root / kWeightsFile).string();
    const std::string index_path = (root / kIndexFile).string();
    std::error_code ec;
    if (!fs::exists(name, ec) && fs::exists(index_path, ec)) {
      name = index_path;  // names the weights in the messages
      return read_shards(root, index_path, keep16);
    }
    return detail::read_safetensors_keeping(name, keep16);
  };
  source.tokenizer_name = (root / kTokenizerFile).string();
  source.read_tokenizer = [&source]() -> std::optional<std::string> {
    std::error_code ec;
    if (!fs::exists(source.tokenizer_name, ec)) return std::nullopt;
    return read_regular_file(source.tokenizer_name, kMaxJsonBytes, "a tokenizer file");
  };
  Checkpoint ckpt =
      detail::load_checkpoint_source(source, dtype, allow_nonfinite, weights);

  // A Hugging Face tokenizer. A model's embedding may have more rows than its
  // tokenizer has tokens (Qwen2.5 pads 151665 tokens to 151936 rows), never
  // fewer.
  std::error_code ec;
  const std::size_t vocab_size = ckpt.model.config().vocab_size;
  if (fs::exists(root / kHFTokenizerFile, ec)) {
    auto hf = std::make_shared<const HFTokenizer>(HFTokenizer::load(dir));
    if (hf->vocab_size() > vocab_size)
      throw std::runtime_error(
          (root / kHFTokenizerFile).string() + ": " + std::to_string(hf->vocab_size()) +
          " tokens, but config.json says vocab_size " + std::to_string(vocab_size));
    ckpt.hf_tokenizer = std::move(hf);
  }
  return ckpt;
}

}  // namespace glassllm
