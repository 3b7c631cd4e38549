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

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "glassllm/io/hf_tokenizer.h"
#include "glassllm/io/tokenizer.h"
#include "glassllm/model/model.h"

namespace glassllm {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

/// Writes tensors (float32 or float64) to a .safetensors file, through a
/// temporary file renamed into place, so a crash never leaves half a file.
void write_safetensors(const std::string& path, const NamedTensors& tensors,
                       const std::map<std::string, std::string>& metadata = {});

/// Reads every tensor of a .safetensors file. F32 and F64 keep their dtype;
/// F16 and BF16 are widened to float32. The file is memory-mapped, and each
/// tensor's pages are given back once it is copied out. Validates the header (its length,
/// its JSON, known dtypes, shapes matching byte ranges, offsets inside the file, no
/// overlaps, no gaps) and throws std::runtime_error naming the file, the tensor and what
/// is wrong.
NamedTensors read_safetensors(const std::string& path);

/// Writes model.safetensors (with the metadata {"format": "pt"} transformers
/// expects), config.json and (if given) the tokenizer into `dir`, creating it.
/// Each file goes through a temporary name and a rename, so an interrupted
/// save leaves each file old or new, never torn. A tokenizer with an
/// end-of-text token puts its id in config.json as eos_token_id. Throws
/// std::invalid_argument if the tokenizer's size differs from the model's
/// vocab_size.
void save_checkpoint(const std::string& dir, const GlassLM& model,
                     const Tokenizer* tokenizer = nullptr);

struct Checkpoint {
  GlassLM model;
  std::optional<Tokenizer> tokenizer;  ///< absent when the folder has none
  /// With allow_nonfinite: one line per weight holding nan or inf, e.g.
  /// "ckpt/model.safetensors: weight 'lm_head.weight' has nan at index [3, 17]",
  /// for the caller to warn with. Empty when every weight is finite.
  std::vector<std::string> nonfinite;
  /// A Hugging Face tokenizer (tokenizer.json), when the folder has one.
  /// Shared, so that a program without one (the inspector page's engine,
  /// built without ICU) never needs HFTokenizer's code to destroy a Checkpoint.
  std::shared_ptr<const HFTokenizer> hf_tokenizer;
  /// config.json's bos_token_id, if given.
  std::optional<std::int64_t> bos_token_id;
  /// config.json's eos_token_id (one id, or several when it holds a list):
  /// the tokens that end generation. Empty when the model has none.
  std::vector<std::int64_t> eos_token_ids;
};

/// Loads a checkpoint folder. The weights are model.safetensors, or the
/// shards that model.safetensors.index.json lists (as transformers saves a
/// large model), each memory-mapped while it is read. Checks config.json (architecture,
/// every needed key, consistent sizes), then that model.safetensors has every expected
/// weight with the right shape and no unexpected one; throws
/// std::runtime_error saying exactly which file, name, shape or value is
/// wrong, e.g. "ckpt/model.safetensors: missing weight 'lm_head.weight'
/// (expected shape (98,128))". With tie_word_embeddings true, lm_head.weight
/// may be absent and is then a copy of the embedding. With `dtype` the weights
/// are converted; otherwise the model has the file's dtype (float32 for F16
/// and BF16; for a file mixing float32 and float64, config.json's torch_dtype).
/// The model is made of the arrays read from the files (GlassLM::from_weights):
/// nothing is initialised at random first, and nothing copied again unless
/// the dtype changes, so a 1B-parameter bfloat16 checkpoint loads in the
/// float32 model's 5 GB plus its tied lm_head's 1 GB.
/// A missing glassllm_tokenizer.json gives no tokenizer; a broken one throws.
/// A weight holding nan or inf throws, naming it and its first such element,
/// unless allow_nonfinite (for teaching what they do); Checkpoint::nonfinite
/// then lists them. Every file is read with read_regular_file (files.h).
/// An eos_token_id outside the vocabulary throws.
/// `weights` says how the projections and lm_head are kept (weights16.h):
/// f32 (the default) as float32 or float64 Tensors as above; bf16 or f16 in
/// 16 bits for inference (GlassLM::weights16; the rest of the model stays
/// float32, and `dtype` must be float32 or absent); std::nullopt as the file
/// stores them (16 bits for F16 or BF16 tensors, else f32). Tensors stored in
/// the 16 bits asked for are read straight into them, without a float32
/// copy; others are rounded to nearest, ties to even.
Checkpoint load_checkpoint(const std::string& dir,
                           std::optional<DType> dtype = std::nullopt,
                           bool allow_nonfinite = false,
                           std::optional<WeightType> weights = WeightType::f32);

/// load_checkpoint on a checkpoint's contents in memory, for a program with
/// no files (the inspector page's engine): config.json's text,
/// glassllm_tokenizer.json's text ("" for none) and model.safetensors' bytes.
/// The same checks and messages, naming the files as if they were in
/// `folder` ("model/config.json: ..."). The weights keep the file's dtype;
/// shards and tokenizer.json are folder-only.
Checkpoint load_checkpoint_from_memory(std::string_view config_json,
                                       std::string_view tokenizer_json,
                                       const std::uint8_t* weights,
                                       std::size_t weights_size,
                                       const std::string& folder = "model",
                                       bool allow_nonfinite = false);

/// config.json text for a model: the LlamaConfig keys architectures,
/// model_type, hidden_size, intermediate_size, num_attention_heads,
/// num_hidden_layers, num_key_value_heads, head_dim, max_position_embeddings,
/// rms_norm_eps, rope_theta, vocab_size, tie_word_embeddings (false),
/// hidden_act ("silu"), attention_bias and mlp_bias (false), torch_dtype, and
/// eos_token_id when one is given.
std::string config_to_json(const Config& cfg, DType dtype,
                           std::optional<std::int64_t> eos_token_id = std::nullopt);
/// The Config (and the dtype named by torch_dtype: float32 or float64, none
/// for float16/bfloat16 or when absent) of a config.json. As transformers
/// does, a missing num_key_value_heads means num_attention_heads. Throws
/// std::invalid_argument "config.json: ..." for text that is not JSON, a
/// model that is not Llama, a missing key or one of the wrong type, a
/// rope_scaling, biases, an activation other than silu, or sizes
/// Config::validate rejects.
std::pair<Config, std::optional<DType>> config_from_json(const std::string& json_text);

}  // namespace glassllm
