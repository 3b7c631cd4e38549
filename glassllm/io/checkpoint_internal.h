// checkpoint_internal.h (private): the pieces of tokenizer.cpp,
// safetensors.cpp, checkpoint.cpp and checkpoint_load.cpp that they share with each
// other, with the tests and with the fuzz target, but not with students' code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "glassllm/io/checkpoint.h"
#include "glassllm/io/json_reader.h"

namespace glassllm::detail {

/// A checkpoint folder's model description (checkpoint.cpp writes and finds
/// it, config_json.cpp names it in its messages).
inline constexpr const char* kConfigFile = "config.json";

/// Parses JSON, keeping the order of object keys, with json_reader.h's
/// limits: at most kMaxJsonDepth levels, no object with the same key twice.
/// Throws std::invalid_argument with a message without the file's name.
inline nlohmann::ordered_json parse_json_strict(std::string_view text) {
  return parse_json_bounded<nlohmann::ordered_json>(text);
}

/// Called with each tensor's bytes once they are copied out.
using ReleaseFn = std::function<void(const std::uint8_t* bytes, std::size_t n)>;

/// A tensor of a 16-bit dtype ("BF16" or "F16") as the file stores it: its
/// bits, not widened to float32.
struct Tensor16 {
  std::string dtype;
  Shape shape;
  std::vector<std::uint16_t> bits;
};

/// Which 16-bit tensors a reader keeps as their bits (`wanted(name)`), and
/// the ones it kept, in the file's order. The weights that a model keeps in
/// 16 bits (weights16.h) are read straight into these: never a float32 copy.
struct Keep16 {
  std::function<bool(const std::string& name)> wanted;
  std::vector<std::pair<std::string, Tensor16>> kept;
};

/// read_safetensors on bytes already in memory; `name` (a path) starts every
/// error message. read_safetensors maps the file and calls this, with a
/// `done_with` that gives each tensor's pages back; the fuzz target calls it
/// directly. With `keep16`, the F16 and BF16 tensors it wants go to
/// keep16->kept instead of the result.
NamedTensors read_safetensors_bytes(const std::uint8_t* data, std::size_t size,
                                    const std::string& name,
                                    const ReleaseFn& done_with = {},
                                    Keep16* keep16 = nullptr);
/// read_safetensors, with keep16 as above.
NamedTensors read_safetensors_keeping(const std::string& path, Keep16* keep16);

/// A checkpoint's contents, wherever they come from (a folder, memory), for
/// load_checkpoint_source. Read in this order: config_text (already there),
/// then the weights, then the tokenizer, so errors come in one order.
struct CheckpointSource {
  std::string folder;  ///< prefixes config.json's messages: "<folder>/config.json: ..."
  std::string config_name;  ///< config.json's name in messages
  std::string config_text;
  /// Reads every weight; sets its argument to the weights' name in messages.
  /// The 16-bit ones that keep16 (when given) wants go there.
  std::function<NamedTensors(std::string& name, Keep16* keep16)> read_weights;
  std::string tokenizer_name;  ///< glassllm_tokenizer.json's name in messages
  /// glassllm_tokenizer.json's text, or nothing when there is none.
  std::function<std::optional<std::string>()> read_tokenizer;
};

/// Everything load_checkpoint does after reading config.json, except
/// tokenizer.json (checkpoint_load.cpp).
Checkpoint load_checkpoint_source(const CheckpointSource& source,
                                  std::optional<DType> dtype, bool allow_nonfinite,
                                  std::optional<WeightType> weights = WeightType::f32);

/// std::bit_cast, which the C++ library of Emscripten 3.1.6 (the inspector
/// page's engine, web/) does not have: the same bits as another type.
template <class To, class From>
To same_bits(const From& from) {
  static_assert(sizeof(To) == sizeof(From));
  To to;
  std::memcpy(&to, &from, sizeof to);
  return to;
}

/// IEEE half (1 sign, 5 exponent, 10 mantissa bits) and bfloat16 (the top 16
/// bits of a float32) to float32, exactly, including subnormals, inf and nan.
float f16_to_f32(std::uint16_t bits);
float bf16_to_f32(std::uint16_t bits);

}  // namespace glassllm::detail
