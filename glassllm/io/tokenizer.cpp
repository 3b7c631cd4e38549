// tokenizer.cpp: the character-level tokenizer of tokenizer.h, its hand-written
// UTF-8 decoder, and its JSON file (glassllm_tokenizer.json).
//
// Nothing here knows about the model: a token id is an index into tokens_.
// Read checkpoint.cpp next for how the file sits beside the weights.
#include "glassllm/io/tokenizer.h"

#include <stdexcept>
#include <string_view>

#include "glassllm/io/checkpoint_internal.h"

namespace glassllm {

namespace {

constexpr const char* kFormat = "glassllm-char-tokenizer";
constexpr int kVersion = 1;
const std::string kUnk = "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER in UTF-8

// ---- UTF-8 ---------------------------------------------------------------------
//
// A code point takes 1 to 4 bytes:
//   U+0000  .. U+007F    0xxxxxxx
//   U+0080  .. U+07FF    110xxxxx 10xxxxxx
//   U+0800  .. U+FFFF    1110xxxx 10xxxxxx 10xxxxxx
//   U+10000 .. U+10FFFF  11110xxx 10xxxxxx 10xxxxxx 10xxxxxx
// Valid UTF-8 also forbids overlong forms (U+002F written in two bytes),
// surrogates (U+D800 .. U+DFFF) and anything above U+10FFFF. Checking the
// allowed range of the *second* byte, as the Unicode standard's table 3-7
// does, catches all three at once.

bool is_continuation(unsigned char b) {
  return (b & 0xC0) == 0x80;
}

// Decodes the code point starting at s[i] into `cp` and returns its length in
// bytes, or returns 0 when the bytes there are not valid UTF-8.
std::size_t decode_utf8(std::string_view s, std::size_t i, char32_t& cp) {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  unsigned char b0 = byte(0);
  if (b0 < 0x80) {
    cp = b0;
    return 1;
  }
  std::size_t len;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
    cp = b0 & 0x1F;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    cp = b0 & 0x0F;
    if (b0 == 0xE0) lo = 0xA0;  // below: overlong
    if (b0 == 0xED) hi = 0x9F;  // above: surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    cp = b0 & 0x07;
    if (b0 == 0xF0) lo = 0x90;  // below: overlong
    if (b0 == 0xF4) hi = 0x8F;  // above: beyond U+10FFFF
  } else {
    return 0;  // a continuation byte, 0xC0/0xC1 (always overlong) or 0xF5..0xFF
  }
  if (s.size() - i < len) return 0;  // truncated
  if (byte(1) < lo || byte(1) > hi) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    if (!is_continuation(byte(k))) return 0;
    cp = (cp << 6) | (byte(k) & 0x3F);
  }
  return len;
}

// A string as a JSON literal, for error messages: "a", "\n", "\ufffd"; bytes
// that are not UTF-8 show as U+FFFD rather than breaking the message.
std::string json_quoted(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// A JSON value for an error message: strings and numbers as written, arrays
// and objects by their type only (they may be huge or deeply nested).
std::string shown(const nlohmann::ordered_json& v) {
  if (v.is_string()) return json_quoted(v.get<std::string>());
  if (v.is_primitive()) return v.dump();
  return v.type_name();
}

std::invalid_argument error(const std::string& what) {
  return std::invalid_argument("tokenizer: " + what);
}

}  // namespace

// ---- construction ----------------------------------------------------------------

namespace {

// The default vocabulary without the unknown token: printable ASCII, '\n',
// '\t', the end-of-text token; then, with `latin1`, the Latin-1 letters,
// after the end-of-text token so that ids 0-97 mean the same in both.
std::vector<std::string> default_characters(bool latin1) {
  std::vector<std::string> characters;
  for (char c = ' '; c <= '~'; ++c) characters.push_back(std::string(1, c));
  characters.push_back("\n");
  characters.push_back("\t");
  characters.push_back(std::string(1, Tokenizer::kEndOfText));
  if (!latin1) return characters;
  const std::string_view letters = Tokenizer::kLatin1Letters;
  for (std::size_t i = 0; i < letters.size();) {
    char32_t cp = 0;
    const std::size_t len = decode_utf8(letters, i, cp);
    characters.push_back(std::string(letters.substr(i, len)));
    i += len;
  }
  return characters;
}

}  // namespace

Tokenizer::Tokenizer()
    : Tokenizer(default_characters(false), std::string(1, kEndOfText)) {}

Tokenizer Tokenizer::with_latin1_letters() {
  return Tokenizer(default_characters(true), std::string(1, kEndOfText));
}

Tokenizer::Tokenizer(const std::vector<std::string>& characters,
                     const std::optional<std::string>& eos_token) {
  for (std::size_t id = 0; id < characters.size(); ++id) {
    const std::string& text = characters[id];
    std::string where = "token " + std::to_string(id) + " (" + json_quoted(text) + ")";
    if (text.empty()) throw error(where + " is empty; a token is one code point");
    char32_t cp = 0;
    std::size_t len = decode_utf8(text, 0, cp);
    if (len == 0) throw error(where + " is not valid UTF-8");
    if (len != text.size()) {
      std::size_t count = 0;
      for (std::size_t i = 0; i < text.size(); ++count) {
        std::size_t n = decode_utf8(text, i, cp);
        i += n == 0 ? 1 : n;
      }
      throw error(where + " is " + std::to_string(count) + " code points, not one");
    }
    if (text == kUnk)
      throw error(where + " is U+FFFD, which only the unknown token (last) may be");
    auto [it, inserted] = ids_.emplace(cp, std::int64_t(id));
    if (!inserted) throw error(where + " repeats token " + std::to_string(it->second));
    tokens_.push_back(text);
    if (eos_token && text == *eos_token) eos_id_ = std::int64_t(id);
  }
  if (eos_token && !eos_id_)
    throw error("eos_token " + json_quoted(*eos_token) + " is not one of the tokens");
  tokens_.push_back(kUnk);
}

// ---- encoding and decoding ---------------------------------------------------------

std::vector<std::int64_t> Tokenizer::encode(const std::string& text) const {
  std::vector<std::int64_t> ids;
  ids.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    std::size_t len = decode_utf8(text, i, cp);
    if (len == 0) {
      // Not UTF-8 here: this one byte becomes unk and decoding resumes at the
      // next byte, so every invalid byte costs exactly one unk.
      ids.push_back(unk_id());
      i += 1;
      continue;
    }
    auto it = ids_.find(cp);
    ids.push_back(it == ids_.end() ? unk_id() : it->second);
    i += len;
  }
  return ids;
}

const std::string& Tokenizer::token_text(std::int64_t id) const {
  if (id < 0 || id >= std::int64_t(tokens_.size()))
    throw error("id " + std::to_string(id) + " is outside the vocabulary [0, " +
                std::to_string(tokens_.size()) + ")");
  return tokens_[std::size_t(id)];
}

std::string Tokenizer::decode(const std::vector<std::int64_t>& ids) const {
  std::string text;
  for (std::int64_t id : ids) text += token_text(id);
  return text;
}

std::size_t Tokenizer::count_unknown(const std::string& text) const {
  std::size_t n = 0;
  for (std::int64_t id : encode(text)) n += id == unk_id();
  return n;
}

// ---- glassllm_tokenizer.json ---------------------------------------------------------

std::string Tokenizer::to_json() const {
  nlohmann::ordered_json j;
  j["format"] = kFormat;
  j["version"] = kVersion;
  j["tokens"] = tokens_;
  j["unk_token"] = kUnk;
  if (eos_id_) j["eos_token"] = tokens_[std::size_t(*eos_id_)];
  return j.dump(2) + "\n";
}

Tokenizer Tokenizer::from_json(const std::string& json_text) {
  nlohmann::ordered_json j;
  try {
    j = detail::parse_json_strict(json_text);
  } catch (const std::invalid_argument& e) {
    throw error(e.what());
  }
  if (!j.is_object()) throw error("the JSON is not an object");
  for (const char* key : {"format", "version", "tokens", "unk_token"})
    if (!j.contains(key)) throw error(std::string("missing key '") + key + "'");

  const auto& format = j["format"];
  if (!format.is_string() || format.get<std::string>() != kFormat)
    throw error("format is " + shown(format) + ", expected \"" + kFormat + "\"");
  const auto& version = j["version"];
  if (!version.is_number_integer() || version.get<std::int64_t>() != kVersion)
    throw error("version " + shown(version) + " is not supported (this reader knows " +
                std::to_string(kVersion) + ")");

  const auto& unk = j["unk_token"];
  if (!unk.is_string() || unk.get<std::string>() != kUnk)
    throw error("unk_token is " + shown(unk) + ", expected \"\\ufffd\" (U+FFFD)");

  const auto& tokens = j["tokens"];
  if (!tokens.is_array()) throw error("tokens is not an array of strings");
  if (tokens.empty()) throw error("tokens is empty; it must end with the unknown token");
  std::vector<std::string> characters;
  for (std::size_t id = 0; id < tokens.size(); ++id) {
    if (!tokens[id].is_string())
      throw error("token " + std::to_string(id) + " is " + tokens[id].type_name() +
                  ", not a string");
    characters.push_back(tokens[id].get<std::string>());
  }
  if (characters.back() != kUnk)
    throw error("the last token is " + json_quoted(characters.back()) +
                "; it must be the unknown token \"\\ufffd\"");
  characters.pop_back();
  std::optional<std::string> eos;
  if (j.contains("eos_token")) {
    const auto& e = j["eos_token"];
    if (!e.is_string())
      throw error("eos_token is " + shown(e) + ", expected one of the tokens (a string)");
    eos = e.get<std::string>();
  }
  return Tokenizer(characters, eos);
}

}  // namespace glassllm
