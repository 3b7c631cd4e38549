// checkpoint_internal.h (private): the pieces of tokenizer.cpp,
// safetensors.cpp and checkpoint.cpp that they share with each other, with
// the tests and with the fuzz target, but not with students' code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "glassllm/model/checkpoint.h"

namespace glassllm::detail {

/// Parses JSON, keeping the order of object keys, and rejects an object with
/// the same key twice (nlohmann alone would keep the last one silently).
/// Throws std::invalid_argument: "invalid JSON: <nlohmann's message with the
/// position>" or "duplicate key 'x'".
nlohmann::ordered_json parse_json_strict(std::string_view text);

/// Called with each tensor's bytes once they are copied out.
using ReleaseFn = std::function<void(const std::uint8_t* bytes, std::size_t n)>;

/// read_safetensors on bytes already in memory; `name` (a path) starts every
/// error message. read_safetensors maps the file and calls this, with a
/// `done_with` that gives each tensor's pages back; the fuzz target calls it
/// directly.
NamedTensors read_safetensors_bytes(const std::uint8_t* data, std::size_t size,
                                    const std::string& name,
                                    const ReleaseFn& done_with = {});

/// IEEE half (1 sign, 5 exponent, 10 mantissa bits) and bfloat16 (the top 16
/// bits of a float32) to float32, exactly, including subnormals, inf and nan.
float f16_to_f32(std::uint16_t bits);
float bf16_to_f32(std::uint16_t bits);

}  // namespace glassllm::detail
