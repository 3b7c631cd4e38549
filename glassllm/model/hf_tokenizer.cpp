// hf_tokenizer.cpp: Hugging Face tokenizer.json BPE tokenizers (see
// hf_tokenizer.h for the pipeline and what is supported).
//
// The file follows the pipeline: loading (each part of tokenizer.json parsed
// into a small struct, anything unknown refused by name), then encoding
// (added tokens, normalizer, pre-tokenizer, BPE, post-processor), then
// decoding. Regular expressions and Unicode normalization come from ICU, which
// works on UTF-16 strings (icu::UnicodeString); everything else here is UTF-8.
#include "glassllm/model/hf_tokenizer.h"

#include <unicode/normalizer2.h>
#include <unicode/regex.h>
#include <unicode/unistr.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <queue>
#include <stdexcept>
#include <unordered_map>

#include "glassllm/model/checkpoint_internal.h"

namespace glassllm {

namespace {

using json = nlohmann::json;

// ---- Unicode helpers -------------------------------------------------------

icu::UnicodeString to_utf16(const std::string& s) {
  return icu::UnicodeString::fromUTF8(icu::StringPiece(s.data(), int32_t(s.size())));
}
std::string to_utf8(const icu::UnicodeString& u) {
  std::string out;
  u.toUTF8String(out);
  return out;
}

// The code points of valid UTF-8 text as separate strings: "hé" -> "h", "é".
std::vector<std::string> split_chars(const std::string& s) {
  std::vector<std::string> chars;
  int32_t i = 0, n = int32_t(s.size());
  while (i < n) {
    int32_t start = i;
    UChar32 c;
    U8_NEXT(s.data(), i, n, c);
    chars.push_back(s.substr(std::size_t(start), std::size_t(i - start)));
  }
  return chars;
}

// Bytes to text, each ill-formed sequence replaced by U+FFFD (as Rust's
// String::from_utf8_lossy and JavaScript's TextDecoder do).
std::string utf8_lossy(const std::string& bytes) {
  return to_utf8(to_utf16(bytes));
}

// GPT-2's byte-to-character table (ByteLevel): every byte becomes a printable
// character, so that a BPE vocabulary of strings covers all 256 bytes. Bytes
// that are already printable and not a space ('!'..'~', '¡'..'¬', '®'..'ÿ')
// map to the character with the same number; the 68 others map, in order, to
// U+0100, U+0101, ...: the space (0x20) becomes U+0120 'Ġ', '\n' U+010A 'Ċ'.
struct ByteTable {
  std::string byte_to_char[256];                      // byte -> UTF-8 of its character
  std::unordered_map<std::string, int> char_to_byte;  // the inverse
  ByteTable() {
    int next = 256;
    for (int b = 0; b < 256; ++b) {
      bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      UChar32 c = printable ? b : next++;
      byte_to_char[b] = to_utf8(icu::UnicodeString(c));
      char_to_byte[byte_to_char[b]] = b;
    }
  }
};
const ByteTable& byte_table() {
  static const ByteTable table;
  return table;
}

// The byte-fallback token of a byte: 0x0A -> "<0x0A>" (upper-case digits, as
// SentencePiece writes them).
std::string byte_token(unsigned char b) {
  const char* hex = "0123456789ABCDEF";
  return std::string("<0x") + hex[b >> 4] + hex[b & 15] + ">";
}
// The byte of a byte-fallback token, or -1 when the string is not one.
int byte_of_token(const std::string& t) {
  if (t.size() != 6 || t.compare(0, 3, "<0x") != 0 || t[5] != '>') return -1;
  int value = 0;
  for (char c : t.substr(3, 2)) {
    int d = (c >= '0' && c <= '9') ? c - '0' : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
    if (d < 0) return -1;
    value = value * 16 + d;
  }
  return value;
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  for (std::size_t pos = s.find(from); pos != std::string::npos;
       pos = s.find(from, pos + to.size()))
    s.replace(pos, from.size(), to);
}

// ---- the parts of tokenizer.json -------------------------------------------

struct NormalizerStep {
  enum Kind { unicode_form, prepend, replace } kind;
  const icu::Normalizer2* form = nullptr;  // unicode_form: NFC, NFD, NFKC or NFKD
  std::string text, content;               // prepend: text; replace: text -> content
};

enum class Prepend { always, first, never };

struct PreTokenizerStep {
  enum Kind { split, byte_level, digits, metaspace } kind;
  std::shared_ptr<icu::RegexPattern> regex;  // split, digits; byte_level with use_regex
  bool add_prefix_space = false;             // byte_level
  std::string replacement;                   // metaspace: usually "▁" (U+2581)
  Prepend prepend_scheme = Prepend::always;  // metaspace
  bool split_words = true;                   // metaspace: cut before each replacement
};

struct DecoderStep {
  enum Kind { byte_level, metaspace, replace, byte_fallback, fuse, strip } kind;
  std::string text, content;        // replace: text -> content; strip: content (one char)
  std::size_t start = 0, stop = 0;  // strip: at most this many from each end
  Prepend prepend_scheme = Prepend::always;  // metaspace
  std::string replacement;                   // metaspace
};

struct AddedToken {
  std::string content;
  std::int64_t id;
  bool special, lstrip, rstrip;
};

struct Merge {
  std::int64_t rank;    // position in the merges list: lower merges first
  std::int64_t result;  // id of the merged token
};

// A template item: a token id, or (-1) the sequence itself.
using Template = std::vector<std::int64_t>;

std::string single_quoted(const std::string& s) {
  return "'" + s + "'";
}

// Reads a field's type string and refuses a part of tokenizer.json whose type
// is not in `supported`.
std::string part_type(const json& part, const std::string& what, const std::string& where,
                      const std::vector<std::string>& supported) {
  if (!part.is_object() || !part.contains("type") || !part["type"].is_string())
    throw std::runtime_error(where + ": " + what + " has no \"type\"");
  std::string type = part["type"].get<std::string>();
  if (std::find(supported.begin(), supported.end(), type) == supported.end()) {
    std::string list;
    for (const auto& s : supported) list += (list.empty() ? "" : ", ") + s;
    throw std::runtime_error(where + ": " + what + " type " + single_quoted(type) +
                             " is not supported (supported: " + list + ")");
  }
  return type;
}

// A field that must be absent, null, or equal to one of the given values;
// anything else is a feature this implementation does not have.
void require_value(const json& part, const std::string& key, const std::string& what,
                   const std::string& where, const std::vector<json>& allowed) {
  if (!part.contains(key) || part[key].is_null()) return;
  for (const auto& a : allowed)
    if (part[key] == a) return;
  throw std::runtime_error(where + ": " + what + " \"" + key + "\": " + part[key].dump() +
                           " is not supported");
}

// ICU's \s is narrower than the White_Space property that Rust's regex engines
// (and JavaScript, nearly) use: it leaves out \v and U+0085. Writing \s and \S
// as the property makes the three agree.
std::string widen_whitespace_classes(const std::string& pattern) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '\\' && i + 1 < pattern.size()) {
      char next = pattern[i + 1];
      if (next == 's')
        out += "\\p{White_Space}";
      else if (next == 'S')
        out += "\\P{White_Space}";
      else
        out += pattern.substr(i, 2);
      ++i;
    } else {
      out += pattern[i];
    }
  }
  return out;
}

std::shared_ptr<icu::RegexPattern> compile_regex(const std::string& pattern,
                                                 const std::string& what,
                                                 const std::string& where) {
  UErrorCode status = U_ZERO_ERROR;
  UParseError parse_error;
  std::shared_ptr<icu::RegexPattern> re(icu::RegexPattern::compile(
      to_utf16(widen_whitespace_classes(pattern)), parse_error, status));
  if (U_FAILURE(status))
    throw std::runtime_error(where + ": " + what + " regex " + json(pattern).dump() +
                             " does not compile: " + u_errorName(status));
  return re;
}

// A Split or Replace pattern: {"Regex": "..."} or {"String": "..."}. A string
// is matched literally (escaped for the regex engine).
std::shared_ptr<icu::RegexPattern> pattern_regex(const json& pattern,
                                                 const std::string& what,
                                                 const std::string& where) {
  if (pattern.is_object() && pattern.contains("Regex") && pattern["Regex"].is_string())
    return compile_regex(pattern["Regex"].get<std::string>(), what, where);
  if (pattern.is_object() && pattern.contains("String") && pattern["String"].is_string())
    return compile_regex("\\Q" + pattern["String"].get<std::string>() + "\\E", what,
                         where);
  throw std::runtime_error(where + ": " + what +
                           " \"pattern\" must be {\"Regex\": ...} or " +
                           "{\"String\": ...}");
}

std::string pattern_string(const json& pattern, const std::string& what,
                           const std::string& where) {
  if (pattern.is_object() && pattern.contains("String") && pattern["String"].is_string())
    return pattern["String"].get<std::string>();
  throw std::runtime_error(
      where + ": " + what +
      " with a \"Regex\" pattern is not supported (only \"String\")");
}

Prepend parse_prepend_scheme(const json& part, const std::string& where) {
  std::string scheme = part.value("prepend_scheme", "always");
  if (scheme == "always") return Prepend::always;
  if (scheme == "first") return Prepend::first;
  if (scheme == "never") return Prepend::never;
  throw std::runtime_error(where +
                           ": Metaspace \"prepend_scheme\": " + single_quoted(scheme) +
                           " is not supported (always, first or never)");
}

// A JSON string field, or the content of an AddedToken object
// ({"content": "<s>", ...}) as tokenizer_config.json may write it.
std::optional<std::string> token_string(const json& config, const std::string& key,
                                        const std::string& where) {
  if (!config.contains(key) || config[key].is_null()) return std::nullopt;
  const json& v = config[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string())
    return v["content"].get<std::string>();
  throw std::runtime_error(where + ": \"" + key +
                           "\" must be a string or {\"content\": ...}");
}

}  // namespace

// ---- the tokenizer ---------------------------------------------------------

struct HFTokenizer::Impl {
  std::string where;  // "<dir>/tokenizer.json", starts every error message

  // The BPE model.
  std::unordered_map<std::string, std::int64_t> vocab;  // token string -> id
  std::vector<std::string> id_to_token;                 // every id, added tokens included
  std::unordered_map<std::uint64_t, Merge> merges;      // (left id, right id) -> merge
  std::optional<std::int64_t> unk_id;
  bool byte_fallback = false, fuse_unk = false, ignore_merges = false;

  std::vector<AddedToken> added;  // longest content first (so the longest match wins)
  std::vector<bool> special;      // by id

  std::vector<NormalizerStep> normalizer;
  std::vector<PreTokenizerStep> pre_tokenizer;
  std::vector<DecoderStep> decoder;
  bool has_decoder = false;
  std::optional<Template> template_single;  // TemplateProcessing's "single"

  std::optional<std::int64_t> bos, eos;
  bool add_bos = false, add_eos = false;  // tokenizer_config.json, when no template

  static std::uint64_t pair_key(std::int64_t a, std::int64_t b) {
    return (std::uint64_t(a) << 32) | std::uint64_t(b);
  }

  // ---- loading ----

  void load_model(const json& model) {
    part_type(model, "model", where, {"BPE"});
    require_value(model, "dropout", "BPE", where, {0.0});
    require_value(model, "continuing_subword_prefix", "BPE", where, {""});
    require_value(model, "end_of_word_suffix", "BPE", where, {""});
    byte_fallback = model.value("byte_fallback", false);
    fuse_unk = model.value("fuse_unk", false);
    ignore_merges = model.value("ignore_merges", false);
    if (!model.contains("vocab") || !model["vocab"].is_object())
      throw std::runtime_error(where + ": model \"vocab\" must be an object");
    for (const auto& [token, id] : model["vocab"].items()) {
      if (!id.is_number_integer() || id.get<std::int64_t>() < 0)
        throw std::runtime_error(where + ": model \"vocab\" entry " + json(token).dump() +
                                 " has id " + id.dump() + " (must be an integer >= 0)");
      vocab[token] = id.get<std::int64_t>();
      set_token(id.get<std::int64_t>(), token);
    }
    if (!model.contains("merges") || !model["merges"].is_array())
      throw std::runtime_error(where + ": model \"merges\" must be a list");
    std::int64_t rank = 0;
    for (const json& m : model["merges"]) {
      // Two spellings: "a b" (older files) or ["a", "b"] (tokenizers >= 0.20).
      std::string left, right;
      if (m.is_string()) {
        std::string s = m.get<std::string>();
        std::size_t space = s.find(' ');
        if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos)
          throw std::runtime_error(where + ": merge " + std::to_string(rank) + " " +
                                   json(s).dump() +
                                   " is not two tokens separated by a space");
        left = s.substr(0, space);
        right = s.substr(space + 1);
      } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
        left = m[0].get<std::string>();
        right = m[1].get<std::string>();
      } else {
        throw std::runtime_error(where + ": merge " + std::to_string(rank) + " " +
                                 m.dump() + " is not a pair of tokens");
      }
      auto l = vocab.find(left), r = vocab.find(right), result = vocab.find(left + right);
      if (l == vocab.end() || r == vocab.end() || result == vocab.end())
        throw std::runtime_error(where + ": merge " + std::to_string(rank) + " (" +
                                 json(left).dump() + ", " + json(right).dump() +
                                 ") uses a token missing from the vocabulary");
      merges.emplace(pair_key(l->second, r->second), Merge{rank, result->second});
      ++rank;
    }
    if (model.contains("unk_token") && !model["unk_token"].is_null()) {
      std::string unk = model["unk_token"].get<std::string>();
      auto it = vocab.find(unk);
      if (it == vocab.end())
        throw std::runtime_error(where + ": model \"unk_token\" " + json(unk).dump() +
                                 " is not in the vocabulary");
      unk_id = it->second;
    }
  }

  void set_token(std::int64_t id, const std::string& token) {
    if (std::size_t(id) >= id_to_token.size()) id_to_token.resize(std::size_t(id) + 1);
    id_to_token[std::size_t(id)] = token;
  }

  void load_added_tokens(const json& list) {
    if (list.is_null()) return;
    if (!list.is_array())
      throw std::runtime_error(where + ": \"added_tokens\" must be a list");
    for (const json& t : list) {
      if (!t.is_object() || !t.contains("id") || !t.contains("content"))
        throw std::runtime_error(where + ": added token " + t.dump() +
                                 " needs \"id\" and \"content\"");
      AddedToken a{t["content"].get<std::string>(), t["id"].get<std::int64_t>(),
                   t.value("special", false), t.value("lstrip", false),
                   t.value("rstrip", false)};
      if (t.value("single_word", false))
        throw std::runtime_error(where + ": added token " + json(a.content).dump() +
                                 " has \"single_word\": true, which is not supported");
      if (a.content.empty() || a.id < 0)
        throw std::runtime_error(where + ": added token " + t.dump() +
                                 " needs a non-empty content and an id >= 0");
      set_token(a.id, a.content);
      added.push_back(a);
    }
    std::stable_sort(added.begin(), added.end(),
                     [](const AddedToken& a, const AddedToken& b) {
                       return a.content.size() > b.content.size();
                     });
    special.assign(id_to_token.size(), false);
    for (const AddedToken& a : added) special[std::size_t(a.id)] = a.special;
  }

  void load_normalizer(const json& n) {
    if (n.is_null()) return;
    std::string type =
        part_type(n, "normalizer", where,
                  {"Sequence", "NFC", "NFD", "NFKC", "NFKD", "Prepend", "Replace"});
    UErrorCode status = U_ZERO_ERROR;
    if (type == "Sequence") {
      for (const json& step : n.value("normalizers", json::array()))
        load_normalizer(step);
    } else if (type == "Prepend") {
      normalizer.push_back(
          {NormalizerStep::prepend, nullptr, n.value("prepend", ""), ""});
    } else if (type == "Replace") {
      normalizer.push_back({NormalizerStep::replace, nullptr,
                            pattern_string(n["pattern"], "normalizer Replace", where),
                            n.value("content", "")});
    } else {
      const icu::Normalizer2* form =
          type == "NFC"    ? icu::Normalizer2::getNFCInstance(status)
          : type == "NFD"  ? icu::Normalizer2::getNFDInstance(status)
          : type == "NFKC" ? icu::Normalizer2::getNFKCInstance(status)
                           : icu::Normalizer2::getNFKDInstance(status);
      if (U_FAILURE(status))
        throw std::runtime_error(where + ": ICU has no " + type +
                                 " data: " + u_errorName(status));
      normalizer.push_back({NormalizerStep::unicode_form, form, "", ""});
    }
  }

  void load_pre_tokenizer(const json& p) {
    if (p.is_null()) return;
    std::string type =
        part_type(p, "pre_tokenizer", where,
                  {"Sequence", "Split", "ByteLevel", "Digits", "Metaspace"});
    PreTokenizerStep step{};
    if (type == "Sequence") {
      for (const json& s : p.value("pretokenizers", json::array())) load_pre_tokenizer(s);
      return;
    } else if (type == "Split") {
      require_value(p, "behavior", "pre_tokenizer Split", where, {"Isolated"});
      require_value(p, "invert", "pre_tokenizer Split", where, {false});
      step.kind = PreTokenizerStep::split;
      step.regex = pattern_regex(p["pattern"], "pre_tokenizer Split", where);
    } else if (type == "ByteLevel") {
      step.kind = PreTokenizerStep::byte_level;
      step.add_prefix_space = p.value("add_prefix_space", false);
      // GPT-2's own split, used when the ByteLevel step is the only one.
      if (p.value("use_regex", true))
        step.regex = compile_regex(
            R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)",
            "ByteLevel", where);
    } else if (type == "Digits") {
      step.kind = PreTokenizerStep::digits;
      step.regex =
          compile_regex(p.value("individual_digits", false) ? R"(\p{N})" : R"(\p{N}+)",
                        "Digits", where);
    } else {  // Metaspace
      step.kind = PreTokenizerStep::metaspace;
      step.replacement = p.value("replacement", "\u2581");
      step.prepend_scheme = parse_prepend_scheme(p, where);
      step.split_words = p.value("split", true);
      if (split_chars(step.replacement).size() != 1)
        throw std::runtime_error(where +
                                 ": Metaspace \"replacement\" must be one character");
    }
    pre_tokenizer.push_back(step);
  }

  void load_decoder(const json& d) {
    if (d.is_null()) return;
    has_decoder = true;
    std::string type = part_type(d, "decoder", where,
                                 {"Sequence", "ByteLevel", "Metaspace", "Replace",
                                  "ByteFallback", "Fuse", "Strip"});
    DecoderStep step{};
    if (type == "Sequence") {
      for (const json& s : d.value("decoders", json::array())) load_decoder(s);
      return;
    } else if (type == "ByteLevel") {
      step.kind = DecoderStep::byte_level;
    } else if (type == "Metaspace") {
      step.kind = DecoderStep::metaspace;
      step.replacement = d.value("replacement", "\u2581");
      step.prepend_scheme = parse_prepend_scheme(d, where);
    } else if (type == "Replace") {
      step.kind = DecoderStep::replace;
      step.text = pattern_string(d["pattern"], "decoder Replace", where);
      step.content = d.value("content", "");
    } else if (type == "ByteFallback") {
      step.kind = DecoderStep::byte_fallback;
    } else if (type == "Fuse") {
      step.kind = DecoderStep::fuse;
    } else {  // Strip
      step.kind = DecoderStep::strip;
      step.content = d.value("content", " ");
      step.start = d.value("start", std::size_t(0));
      step.stop = d.value("stop", std::size_t(0));
    }
    decoder.push_back(step);
  }

  void load_post_processor(const json& p) {
    if (p.is_null()) return;
    std::string type = part_type(p, "post_processor", where,
                                 {"Sequence", "ByteLevel", "TemplateProcessing"});
    if (type == "Sequence") {
      for (const json& s : p.value("processors", json::array())) load_post_processor(s);
    } else if (type == "TemplateProcessing") {
      // Only "single" matters: we never encode pairs of sequences.
      Template t;
      for (const json& item : p.value("single", json::array())) {
        if (item.contains("Sequence")) {
          t.push_back(-1);
        } else if (item.contains("SpecialToken")) {
          std::string name = item["SpecialToken"].value("id", "");
          const json& specials = p.value("special_tokens", json::object());
          if (!specials.contains(name) || !specials[name].contains("ids"))
            throw std::runtime_error(where + ": post_processor template token " +
                                     json(name).dump() + " is not in \"special_tokens\"");
          for (const json& id : specials[name]["ids"])
            t.push_back(id.get<std::int64_t>());
        } else {
          throw std::runtime_error(where + ": post_processor template item " +
                                   item.dump() +
                                   " is neither a Sequence nor a SpecialToken");
        }
      }
      template_single = t;
    }
    // ByteLevel as a post-processor only trims offsets, which we do not report.
  }

  void load_config(const json& config, const std::string& config_where) {
    auto id_of = [&](const std::string& key) -> std::optional<std::int64_t> {
      auto name = token_string(config, key, config_where);
      if (!name) return std::nullopt;
      auto id = find_id(*name);
      if (!id)
        throw std::runtime_error(config_where + ": \"" + key + "\" " +
                                 json(*name).dump() +
                                 " is not a token of tokenizer.json");
      return id;
    };
    bos = id_of("bos_token");
    eos = id_of("eos_token");
    add_bos = config.value("add_bos_token", false);
    add_eos = config.value("add_eos_token", false);
    if (add_bos && !bos)
      throw std::runtime_error(
          config_where + ": \"add_bos_token\" is true but there is no \"bos_token\"");
    if (add_eos && !eos)
      throw std::runtime_error(
          config_where + ": \"add_eos_token\" is true but there is no \"eos_token\"");
  }

  std::optional<std::int64_t> find_id(const std::string& token) const {
    for (const AddedToken& a : added)
      if (a.content == token) return a.id;
    auto it = vocab.find(token);
    if (it != vocab.end()) return it->second;
    return std::nullopt;
  }

  // ---- encoding ----

  // One stretch of the text: an added token (id >= 0) or plain text (id -1).
  struct Section {
    std::string text;
    std::int64_t added_id = -1;
  };

  // Cuts the text at every added token, taking at each position the longest
  // one that starts there (as transformers.js and `tokenizers` do). An added
  // token with lstrip/rstrip also takes the whitespace on that side.
  std::vector<Section> split_added(const std::string& text) const {
    std::vector<Section> sections;
    std::string plain;
    std::size_t i = 0;
    while (i < text.size()) {
      const AddedToken* match = nullptr;
      for (const AddedToken& a : added)  // longest first
        if (text.compare(i, a.content.size(), a.content) == 0) {
          match = &a;
          break;
        }
      if (!match) {
        plain += text[i++];
        continue;
      }
      if (match->lstrip)
        while (!plain.empty() && std::isspace(static_cast<unsigned char>(plain.back())))
          plain.pop_back();
      if (!plain.empty()) sections.push_back({plain, -1});
      plain.clear();
      sections.push_back({match->content, match->id});
      i += match->content.size();
      if (match->rstrip)
        while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    }
    if (!plain.empty()) sections.push_back({plain, -1});
    return sections;
  }

  std::string normalize(std::string s) const {
    for (const NormalizerStep& step : normalizer) {
      if (step.kind == NormalizerStep::unicode_form) {
        UErrorCode status = U_ZERO_ERROR;
        s = to_utf8(step.form->normalize(to_utf16(s), status));
      } else if (step.kind == NormalizerStep::prepend) {
        if (!s.empty()) s = step.text + s;
      } else {
        replace_all(s, step.text, step.content);
      }
    }
    return s;
  }

  // Cuts `piece` at every match of `re`, keeping the matches and the text
  // between them as pieces of their own (the "Isolated" behavior).
  static std::vector<std::string> split_isolated(const icu::RegexPattern& re,
                                                 const std::string& piece) {
    std::vector<std::string> out;
    icu::UnicodeString u = to_utf16(piece);
    UErrorCode status = U_ZERO_ERROR;
    std::unique_ptr<icu::RegexMatcher> m(re.matcher(u, status));
    int32_t previous_end = 0;
    while (m->find(status) && U_SUCCESS(status)) {
      int32_t start = m->start(status), end = m->end(status);
      if (start > previous_end)
        out.push_back(to_utf8(u.tempSubStringBetween(previous_end, start)));
      if (end > start) out.push_back(to_utf8(u.tempSubStringBetween(start, end)));
      previous_end = end;
    }
    if (previous_end < u.length()) out.push_back(to_utf8(u.tempSubString(previous_end)));
    return out;
  }

  // The pre-tokenizer steps, each applied to every piece the previous ones
  // made. `first_section`: this text starts the whole input (Metaspace's
  // prepend_scheme "first").
  std::vector<std::string> pre_tokenize(const std::string& text,
                                        bool first_section) const {
    std::vector<std::string> pieces{text};
    for (const PreTokenizerStep& step : pre_tokenizer) {
      std::vector<std::string> next;
      for (std::size_t p = 0; p < pieces.size(); ++p) {
        std::string piece = pieces[p];
        if (step.kind == PreTokenizerStep::split ||
            step.kind == PreTokenizerStep::digits) {
          for (auto& s : split_isolated(*step.regex, piece)) next.push_back(std::move(s));
        } else if (step.kind == PreTokenizerStep::byte_level) {
          if (step.add_prefix_space && piece.compare(0, 1, " ") != 0) piece = " " + piece;
          std::vector<std::string> words = step.regex ? split_isolated(*step.regex, piece)
                                                      : std::vector<std::string>{piece};
          for (const std::string& w : words) {
            std::string mapped;
            for (unsigned char b : w) mapped += byte_table().byte_to_char[b];
            next.push_back(mapped);
          }
        } else {  // metaspace
          replace_all(piece, " ", step.replacement);
          bool prepend =
              step.prepend_scheme == Prepend::always ||
              (step.prepend_scheme == Prepend::first && first_section && p == 0);
          if (prepend && piece.compare(0, step.replacement.size(), step.replacement) != 0)
            piece = step.replacement + piece;
          if (!step.split_words) {
            next.push_back(piece);
            continue;
          }
          // Cut before each replacement character: "▁Hello▁world" -> "▁Hello", "▁world".
          std::size_t start = 0;
          for (std::size_t at = piece.find(step.replacement, 1); at != std::string::npos;
               at = piece.find(step.replacement, at + 1)) {
            next.push_back(piece.substr(start, at - start));
            start = at;
          }
          next.push_back(piece.substr(start));
        }
      }
      pieces = std::move(next);
    }
    return pieces;
  }

  // BPE on one piece. Start from its characters (a character missing from the
  // vocabulary becomes its byte tokens with byte_fallback, else the unknown
  // token), then repeatedly merge the adjacent pair whose merge comes first in
  // the merges list (the leftmost such pair on a tie), until no pair has a
  // merge. A priority queue finds that pair; entries that a previous merge made
  // stale are skipped when popped.
  void bpe(const std::string& piece, std::vector<std::int64_t>& out) const {
    if (piece.empty()) return;
    if (ignore_merges) {
      auto it = vocab.find(piece);
      if (it != vocab.end()) {
        out.push_back(it->second);
        return;
      }
    }
    struct Symbol {
      std::int64_t id;
      int prev, next;  // neighbours in the current word (-1: none)
      bool alive;
    };
    std::vector<Symbol> word;
    bool last_was_unk = false;
    for (const std::string& c : split_chars(piece)) {
      auto add = [&](std::int64_t id) {
        int index = int(word.size());
        word.push_back({id, index - 1, -1, true});
      };
      auto it = vocab.find(c);
      if (it != vocab.end()) {
        add(it->second);
        last_was_unk = false;
        continue;
      }
      if (byte_fallback) {
        std::vector<std::int64_t> bytes;
        for (unsigned char b : c) {
          auto bt = vocab.find(byte_token(b));
          if (bt == vocab.end()) break;
          bytes.push_back(bt->second);
        }
        if (bytes.size() == c.size()) {
          for (std::int64_t id : bytes) add(id);
          last_was_unk = false;
          continue;
        }
      }
      if (!unk_id)
        throw std::invalid_argument("tokenize: character " + json(c).dump() +
                                    " is not in the vocabulary and the tokenizer has no "
                                    "unk_token");
      if (!(fuse_unk && last_was_unk)) add(*unk_id);
      last_was_unk = true;
    }
    for (std::size_t i = 0; i + 1 < word.size(); ++i) word[i].next = int(i) + 1;

    // (rank, position of the left symbol, resulting id); smallest first.
    using Candidate = std::tuple<std::int64_t, int, std::int64_t>;
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
    auto consider = [&](int left) {
      if (left < 0 || word[std::size_t(left)].next < 0) return;
      auto it = merges.find(pair_key(word[std::size_t(left)].id,
                                     word[std::size_t(word[std::size_t(left)].next)].id));
      if (it != merges.end()) queue.emplace(it->second.rank, left, it->second.result);
    };
    for (int i = 0; i + 1 < int(word.size()); ++i) consider(i);
    while (!queue.empty()) {
      auto [rank, left, result] = queue.top();
      queue.pop();
      Symbol& a = word[std::size_t(left)];
      if (!a.alive || a.next < 0) continue;
      auto it = merges.find(pair_key(a.id, word[std::size_t(a.next)].id));
      if (it == merges.end() || it->second.result != result) continue;  // stale
      Symbol& b = word[std::size_t(a.next)];
      a.id = result;
      b.alive = false;
      a.next = b.next;
      if (b.next >= 0) word[std::size_t(b.next)].prev = left;
      consider(a.prev);
      consider(left);
    }
    for (const Symbol& s : word)
      if (s.alive) out.push_back(s.id);
  }

  std::vector<std::int64_t> encode(const std::string& text,
                                   bool add_special_tokens) const {
    int32_t i = 0, n = int32_t(text.size());
    while (i < n) {
      int32_t at = i;
      UChar32 c;
      U8_NEXT(text.data(), i, n, c);
      if (c < 0)
        throw std::invalid_argument("tokenize: the text is not valid UTF-8 (byte " +
                                    std::to_string(at) + ")");
    }
    std::vector<std::int64_t> ids;
    std::vector<Section> sections = split_added(text);
    for (std::size_t s = 0; s < sections.size(); ++s) {
      if (sections[s].added_id >= 0) {
        ids.push_back(sections[s].added_id);
        continue;
      }
      std::string normalized = normalize(sections[s].text);
      for (const std::string& piece : pre_tokenize(normalized, s == 0)) bpe(piece, ids);
    }
    if (!add_special_tokens) return ids;
    if (template_single) {
      std::vector<std::int64_t> out;
      for (std::int64_t t : *template_single) {
        if (t >= 0)
          out.push_back(t);
        else
          out.insert(out.end(), ids.begin(), ids.end());
      }
      return out;
    }
    if (add_bos) ids.insert(ids.begin(), *bos);
    if (add_eos) ids.push_back(*eos);
    return ids;
  }

  // ---- decoding ----

  // The decoder steps on a list of token strings. `alone`: decoding one token
  // for display, so the steps that exist to drop the space SentencePiece put
  // before the first word (Strip at the start, Metaspace's first token) keep it.
  std::string run_decoder(std::vector<std::string> tokens, bool alone) const {
    if (!has_decoder) {  // `tokenizers` joins the tokens with spaces
      std::string out;
      for (std::size_t i = 0; i < tokens.size(); ++i) out += (i ? " " : "") + tokens[i];
      return out;
    }
    for (const DecoderStep& step : decoder) {
      std::vector<std::string> next;
      switch (step.kind) {
        case DecoderStep::byte_level: {
          // Every character back to its byte; a token with a character outside
          // the table (an added token such as "<|eot_id|>" is inside it) keeps
          // its own UTF-8 bytes. Then the bytes as text, all tokens at once, so
          // a character split over two tokens comes back whole.
          std::string bytes;
          for (const std::string& t : tokens) {
            std::string these;
            bool all_mapped = true;
            for (const std::string& c : split_chars(t)) {
              auto it = byte_table().char_to_byte.find(c);
              if (it == byte_table().char_to_byte.end()) {
                all_mapped = false;
                break;
              }
              these += char(it->second);
            }
            bytes += all_mapped ? these : t;
          }
          next.push_back(utf8_lossy(bytes));
          break;
        }
        case DecoderStep::metaspace:
          for (std::size_t i = 0; i < tokens.size(); ++i) {
            std::string t = tokens[i];
            bool drop = i == 0 && !alone && step.prepend_scheme != Prepend::never;
            replace_all(t, step.replacement, drop ? "" : " ");
            next.push_back(t);
          }
          break;
        case DecoderStep::replace:
          for (std::string t : tokens) {
            replace_all(t, step.text, step.content);
            next.push_back(t);
          }
          break;
        case DecoderStep::byte_fallback: {
          // Runs of byte tokens ("<0xE2>", "<0x82>", "<0xAC>") become text ("€");
          // bytes that are not UTF-8 become one U+FFFD each, as in `tokenizers`.
          std::string run;
          auto flush = [&] {
            if (run.empty()) return;
            std::string text = utf8_lossy(run);
            if (text.find("\uFFFD") != std::string::npos) {
              text.clear();
              for (std::size_t k = 0; k < run.size(); ++k) text += "\uFFFD";
            }
            next.push_back(text);
            run.clear();
          };
          for (const std::string& t : tokens) {
            int b = byte_of_token(t);
            if (b >= 0) {
              run += char(b);
            } else {
              flush();
              next.push_back(t);
            }
          }
          flush();
          break;
        }
        case DecoderStep::fuse: {
          std::string all;
          for (const std::string& t : tokens) all += t;
          next.push_back(all);
          break;
        }
        case DecoderStep::strip:
          for (std::string t : tokens) {
            std::size_t start = 0, stop = t.size();
            if (!alone)
              for (std::size_t k = 0;
                   k < step.start &&
                   t.compare(start, step.content.size(), step.content) == 0;
                   ++k)
                start += step.content.size();
            for (std::size_t k = 0;
                 k < step.stop && stop >= start + step.content.size() &&
                 t.compare(stop - step.content.size(), step.content.size(),
                           step.content) == 0;
                 ++k)
              stop -= step.content.size();
            next.push_back(t.substr(start, stop - start));
          }
          break;
      }
      tokens = std::move(next);
    }
    std::string out;
    for (const std::string& t : tokens) out += t;
    return out;
  }

  void check_id(std::int64_t id) const {
    if (id < 0 || std::size_t(id) >= id_to_token.size())
      throw std::invalid_argument("decode: token id " + std::to_string(id) +
                                  " is outside the vocabulary [0, " +
                                  std::to_string(id_to_token.size()) + ")");
  }
};

HFTokenizer::HFTokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HFTokenizer::HFTokenizer(HFTokenizer&&) noexcept = default;
HFTokenizer& HFTokenizer::operator=(HFTokenizer&&) noexcept = default;
HFTokenizer::~HFTokenizer() = default;

HFTokenizer HFTokenizer::load(const std::string& dir) {
  namespace fs = std::filesystem;
  std::string tokenizer_path = (fs::path(dir) / "tokenizer.json").string();
  std::string config_path = (fs::path(dir) / "tokenizer_config.json").string();
  if (!fs::exists(tokenizer_path))
    throw std::runtime_error(tokenizer_path +
                             ": no such file (a Hugging Face tokenizer)");
  std::string config = fs::exists(config_path) ? detail::read_file(config_path) : "";
  return from_json(detail::read_file(tokenizer_path), config, dir);
}

HFTokenizer HFTokenizer::from_json(const std::string& tokenizer_json,
                                   const std::string& tokenizer_config_json,
                                   const std::string& where) {
  auto impl = std::make_unique<Impl>();
  impl->where = where + "/tokenizer.json";
  json root;
  try {
    root = json::parse(tokenizer_json);
  } catch (const json::exception& e) {
    throw std::runtime_error(impl->where + ": invalid JSON: " + e.what());
  }
  try {
    if (!root.is_object() || !root.contains("model"))
      throw std::runtime_error(impl->where + ": no \"model\"");
    require_value(root, "truncation", "tokenizer", impl->where, {});
    require_value(root, "padding", "tokenizer", impl->where, {});
    impl->load_model(root["model"]);
    impl->load_added_tokens(root.value("added_tokens", json::array()));
    impl->load_normalizer(root.value("normalizer", json()));
    impl->load_pre_tokenizer(root.value("pre_tokenizer", json()));
    impl->load_post_processor(root.value("post_processor", json()));
    impl->load_decoder(root.value("decoder", json()));
    impl->special.resize(impl->id_to_token.size(), false);
    if (!tokenizer_config_json.empty()) {
      std::string config_where = where + "/tokenizer_config.json";
      json config;
      try {
        config = json::parse(tokenizer_config_json);
      } catch (const json::exception& e) {
        throw std::runtime_error(config_where + ": invalid JSON: " + e.what());
      }
      impl->load_config(config, config_where);
    }
  } catch (const json::exception& e) {  // a field of the wrong JSON type
    throw std::runtime_error(impl->where + ": " + e.what());
  }
  return HFTokenizer(std::move(impl));
}

std::size_t HFTokenizer::vocab_size() const {
  return impl_->id_to_token.size();
}

std::vector<std::int64_t> HFTokenizer::encode(const std::string& text,
                                              bool add_special_tokens) const {
  return impl_->encode(text, add_special_tokens);
}

std::string HFTokenizer::decode(const std::vector<std::int64_t>& ids,
                                bool skip_special_tokens) const {
  std::vector<std::string> tokens;
  for (std::int64_t id : ids) {
    impl_->check_id(id);
    if (skip_special_tokens && impl_->special[std::size_t(id)]) continue;
    tokens.push_back(impl_->id_to_token[std::size_t(id)]);
  }
  return impl_->run_decoder(tokens, false);
}

std::string HFTokenizer::token_text(std::int64_t id) const {
  impl_->check_id(id);
  return impl_->run_decoder({impl_->id_to_token[std::size_t(id)]}, true);
}

const std::string& HFTokenizer::token(std::int64_t id) const {
  impl_->check_id(id);
  return impl_->id_to_token[std::size_t(id)];
}

std::optional<std::int64_t> HFTokenizer::token_id(const std::string& token) const {
  return impl_->find_id(token);
}

bool HFTokenizer::is_special(std::int64_t id) const {
  impl_->check_id(id);
  return impl_->special[std::size_t(id)];
}

std::optional<std::int64_t> HFTokenizer::bos_id() const {
  return impl_->bos;
}
std::optional<std::int64_t> HFTokenizer::eos_id() const {
  return impl_->eos;
}

}  // namespace glassllm
