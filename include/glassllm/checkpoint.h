// checkpoint.h: saving and loading models as Hugging Face Llama checkpoints,
// and the safetensors format under them.
//
// A checkpoint is a folder:
//   model.safetensors        every weight by its Hugging Face name
//   config.json              LlamaConfig keys (hidden_size, num_attention_heads, ...)
//   glassllm_tokenizer.json  the tokenizer (optional when loading)
// Such a folder loads unchanged in tools that read Llama checkpoints, and any
// Llama-architecture safetensors checkpoint of this shape family loads here.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "glassllm/model.h"
#include "glassllm/tokenizer.h"

namespace glassllm {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

/// Writes tensors (float32 or float64) to a .safetensors file, through a
/// temporary file renamed into place, so a crash never leaves half a file.
void write_safetensors(const std::string& path, const NamedTensors& tensors,
                       const std::map<std::string, std::string>& metadata = {});

/// Reads every tensor of a .safetensors file. F32 and F64 keep their dtype;
/// F16 and BF16 are widened to float32. Validates the header (its length, its
/// JSON, known dtypes, shapes matching byte ranges, offsets inside the file,
/// no overlaps, no gaps) and throws std::runtime_error naming the file, the
/// tensor and what is wrong.
NamedTensors read_safetensors(const std::string& path);

/// Writes model.safetensors, config.json and (if given) the tokenizer into
/// `dir`, creating it. Each file goes through a temporary name and a rename.
void save_checkpoint(const std::string& dir, const GlassLM& model,
                     const Tokenizer* tokenizer = nullptr);

struct Checkpoint {
  GlassLM model;
  std::optional<Tokenizer> tokenizer;  ///< absent when the folder has none
};

/// Loads a checkpoint folder. Checks config.json (architecture, every needed
/// key, consistent sizes), then that model.safetensors has every expected
/// weight with the right shape and no unexpected one; throws
/// std::runtime_error saying exactly which file, name, shape or value is
/// wrong. With `dtype` the weights are converted; otherwise the model has the
/// checkpoint's dtype.
Checkpoint load_checkpoint(const std::string& dir, std::optional<DType> dtype = std::nullopt);

/// config.json text for a model / the Config (and dtype) read from one.
std::string config_to_json(const Config& cfg, DType dtype);
std::pair<Config, std::optional<DType>> config_from_json(const std::string& json_text);

}  // namespace glassllm
