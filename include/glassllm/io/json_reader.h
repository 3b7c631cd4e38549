// json_reader.h: the one JSON reader for every JSON file GlassLM reads
// (config.json, safetensors headers, shard indexes, tokenizer.json and
// tokenizer_config.json, glassllm_tokenizer.json, trainer_state.json,
// metrics.jsonl, tokenize --jsonl lines).
//
// A file's JSON is untrusted: it is parsed with a nesting limit checked as
// each object or list opens (a value nested 100,000 levels deep would
// otherwise overflow the stack where the parsed value is copied, printed or
// walked), without repeated keys, and every error is one line of our own
// that says where (line, column and the JSON path, e.g. model.merges[3]),
// what was found and what is allowed, never the parsing library's text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

namespace glassllm {

/// The deepest nesting of objects and lists a JSON file may have. Real
/// files nest a few levels (a tokenizer's Sequence of Sequences about 6).
inline constexpr std::size_t kMaxJsonDepth = 256;

/// Parses `text` as JSON with at most kMaxJsonDepth levels of nesting and no
/// object holding the same key twice. Throws std::invalid_argument, one line
/// without the file's name (the caller puts it first), e.g.
///   "invalid JSON at line 3, column 7 (in model.vocab): unexpected '}'"
///   "nesting deeper than 256 levels at a.b[0][0]...; at most 256 are allowed"
///   "duplicate key \"a\" in model.vocab"
/// J is nlohmann::json or nlohmann::ordered_json.
template <class J>
J parse_json_bounded(std::string_view text);

/// The same, for a file: "<path>: ..." starts every message, and a file
/// larger than `max_bytes` (or not a regular file) is refused before it is
/// read (files.h). Throws std::runtime_error.
nlohmann::ordered_json read_json_file(const std::string& path, std::uint64_t max_bytes,
                                      const char* kind);

/// The JSON path of a child for messages: json_path("model", "vocab") is
/// "model.vocab", json_path("", "a b") is "[\"a b\"]", json_path("merges", 3)
/// is "merges[3]".
std::string json_path(const std::string& parent, const std::string& key);
std::string json_path(const std::string& parent, std::size_t index);

/// A value as a message shows it: a number, true/false/null, a string
/// (quoted, cut to 60 characters, control characters escaped), or "an
/// object of 3 keys" / "a list of 2 items"; never the whole of a large value.
std::string json_preview(const nlohmann::json& value);
std::string json_preview(const nlohmann::ordered_json& value);

}  // namespace glassllm
