// hf_tokenizer_impl.h (private): the parts of a Hugging Face tokenizer.json
// as small structs, the Unicode and byte-level helpers, and HFTokenizer::Impl,
// shared by hf_tokenizer_load.cpp (reading tokenizer.json and
// tokenizer_config.json) and hf_tokenizer.cpp (encoding and decoding).
#pragma once

#include <unicode/normalizer2.h>
#include <unicode/regex.h>
#include <unicode/unistr.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "glassllm/io/hf_tokenizer.h"
#include "glassllm/io/json_reader.h"

namespace glassllm {
namespace hf {

using json = nlohmann::json;

// ---- Unicode helpers -------------------------------------------------------

inline icu::UnicodeString to_utf16(const std::string& s) {
  return icu::UnicodeString::fromUTF8(icu::StringPiece(s.data(), int32_t(s.size())));
}
inline std::string to_utf8(const icu::UnicodeString& u) {
  std::string out;
  u.toUTF8String(out);
  return out;
}

// The code points of valid UTF-8 text as separate strings: "hé" -> "h", "é".
inline std::vector<std::string> split_chars(const std::string& s) {
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
inline std::string utf8_lossy(const std::string& bytes) {
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
inline const ByteTable& byte_table() {
  static const ByteTable table;
  return table;
}

// The byte-fallback token of a byte: 0x0A -> "<0x0A>" (upper-case digits, as
// SentencePiece writes them).
inline std::string byte_token(unsigned char b) {
  const char* hex = "0123456789ABCDEF";
  return std::string("<0x") + hex[b >> 4] + hex[b & 15] + ">";
}
// The byte of a byte-fallback token, or -1 when the string is not one.
inline int byte_of_token(const std::string& t) {
  if (t.size() != 6 || t.compare(0, 3, "<0x") != 0 || t[5] != '>') return -1;
  int value = 0;
  for (char c : t.substr(3, 2)) {
    int d = (c >= '0' && c <= '9') ? c - '0' : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
    if (d < 0) return -1;
    value = value * 16 + d;
  }
  return value;
}

inline void replace_all(std::string& s, const std::string& from, const std::string& to) {
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

// ICU's limit on one regex search, in its steps of about a millisecond's work
// (counted, not timed, so the same on every machine): a real tokenizer's
// pattern needs a handful on a whole line; one that backtracks exponentially
// reaches it within seconds.
inline constexpr int32_t kRegexTimeLimit = 2000;

// How deep Sequences may nest in a normalizer, pre_tokenizer, decoder or
// post_processor (real files: 1 or 2).
inline constexpr int kMaxSequenceDepth = 16;

// 'text' for a message; a long one (a type name of 100,000 characters) cut.
inline std::string single_quoted(const std::string& s) {
  if (s.size() > 60) {
    std::size_t n = 60;
    while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
    return "'" + s.substr(0, n) + "...'";
  }
  return "'" + s + "'";
}

// Reads a field's type string and refuses a part of tokenizer.json whose type
// is not in `supported`.
inline std::string part_type(const json& part, const std::string& what,
                             const std::string& where,
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
inline void require_value(const json& part, const std::string& key,
                          const std::string& what, const std::string& where,
                          const std::vector<json>& allowed) {
  if (!part.contains(key) || part[key].is_null()) return;
  for (const auto& a : allowed)
    if (part[key] == a) return;
  throw std::runtime_error(where + ": " + what + " \"" + key + "\": " + part[key].dump() +
                           " is not supported");
}

// ICU's \s is narrower than the White_Space property that Rust's regex engines
// (and JavaScript, nearly) use: it leaves out \v and U+0085. Writing \s and \S
// as the property makes the three agree.
inline std::string widen_whitespace_classes(const std::string& pattern) {
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

inline std::shared_ptr<icu::RegexPattern> compile_regex(const std::string& pattern,
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
inline std::shared_ptr<icu::RegexPattern> pattern_regex(const json& pattern,
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

inline std::string pattern_string(const json& pattern, const std::string& what,
                                  const std::string& where) {
  if (pattern.is_object() && pattern.contains("String") && pattern["String"].is_string())
    return pattern["String"].get<std::string>();
  throw std::runtime_error(
      where + ": " + what +
      " with a \"Regex\" pattern is not supported (only \"String\")");
}

inline Prepend parse_prepend_scheme(const json& part, const std::string& where) {
  std::string scheme = "always";
  if (part.contains("prepend_scheme") && part["prepend_scheme"].is_string())
    scheme = part["prepend_scheme"].get<std::string>();
  else if (part.contains("prepend_scheme") && !part["prepend_scheme"].is_null())
    scheme = json_preview(part["prepend_scheme"]);
  if (scheme == "always") return Prepend::always;
  if (scheme == "first") return Prepend::first;
  if (scheme == "never") return Prepend::never;
  throw std::runtime_error(where +
                           ": Metaspace \"prepend_scheme\": " + single_quoted(scheme) +
                           " is not supported (always, first or never)");
}

// A JSON string field, or the content of an AddedToken object
// ({"content": "<s>", ...}) as tokenizer_config.json may write it.
inline std::optional<std::string> token_string(const json& config, const std::string& key,
                                               const std::string& where) {
  if (!config.contains(key) || config[key].is_null()) return std::nullopt;
  const json& v = config[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string())
    return v["content"].get<std::string>();
  throw std::runtime_error(where + ": \"" + key +
                           "\" must be a string or {\"content\": ...}");
}

}  // namespace hf

using namespace hf;

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

  static std::uint64_t pair_key(std::int64_t a, std::int64_t b);

  // ---- loading ----

  // Optional fields of `part` (found at JSON path `path`): absent or null
  // gives `fallback`, a value of another type an error naming the field.
  bool flag(const json& part, const std::string& key, bool fallback,
            const std::string& path) const;
  std::string text(const json& part, const std::string& key, const std::string& fallback,
                   const std::string& path) const;
  std::size_t count(const json& part, const std::string& key,
                    const std::string& path) const;
  const json& list(const json& part, const std::string& key,
                   const std::string& path) const;
  // A Sequence's steps, checked to nest at most kMaxSequenceDepth deep.
  const json& sequence(const json& part, const std::string& key, const std::string& path,
                       int depth) const;

  void load_model(const json& model);
  void load_vocab(const json& vocab);
  void load_merges(const json& merges);

  void set_token(std::int64_t id, const std::string& token);

  void load_added_tokens(const json& list);

  // `path`: where the part is in tokenizer.json ("normalizer.normalizers[1]");
  // `depth`: how many Sequences hold it.
  void load_normalizer(const json& n, const std::string& path = "normalizer",
                       int depth = 0);

  void load_pre_tokenizer(const json& p, const std::string& path = "pre_tokenizer",
                          int depth = 0);

  void load_decoder(const json& d, const std::string& path = "decoder", int depth = 0);

  void load_post_processor(const json& p, const std::string& path = "post_processor",
                           int depth = 0);
  Template load_template(const json& p, const std::string& path) const;

  void load_config(const json& config, const std::string& config_where);

  std::optional<std::int64_t> find_id(const std::string& token) const;

  // ---- encoding ----

  // One stretch of the text: an added token (id >= 0) or plain text (id -1).
  struct Section {
    std::string text;
    std::int64_t added_id = -1;
  };

  // Cuts the text at every added token, taking at each position the longest
  // one that starts there (as transformers.js and `tokenizers` do). An added
  // token with lstrip/rstrip also takes the whitespace on that side.
  std::vector<Section> split_added(const std::string& text) const;

  std::string normalize(std::string s) const;

  // Cuts `piece` at every match of `re`, keeping the matches and the text
  // between them as pieces of their own (the "Isolated" behavior). A pattern
  // from the file can backtrack for ever ((a+)+$ on 41 characters): each
  // search gets ICU's time limit, and running past it is an error naming
  // the pattern.
  std::vector<std::string> split_isolated(const icu::RegexPattern& re,
                                          const std::string& piece) const {
    std::vector<std::string> out;
    icu::UnicodeString u = to_utf16(piece);
    UErrorCode status = U_ZERO_ERROR;
    std::unique_ptr<icu::RegexMatcher> m(re.matcher(u, status));
    m->setTimeLimit(kRegexTimeLimit, status);
    int32_t previous_end = 0;
    while (m->find(status) && U_SUCCESS(status)) {
      int32_t start = m->start(status), end = m->end(status);
      if (start > previous_end)
        out.push_back(to_utf8(u.tempSubStringBetween(previous_end, start)));
      if (end > start) out.push_back(to_utf8(u.tempSubStringBetween(start, end)));
      previous_end = end;
    }
    if (U_FAILURE(status))
      throw std::runtime_error(
          where + ": pre_tokenizer regex " + json_preview(json(to_utf8(re.pattern()))) +
          (status == U_REGEX_TIME_OUT
               ? " runs past the time limit on a piece of " + std::to_string(u.length()) +
                     " characters (it backtracks without end); simplify the pattern"
               : std::string(" fails: ") + u_errorName(status)));
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
  // A piece's characters as token ids before any merge: each character's
  // own id, else its bytes' ids (byte_fallback), else unk (fused if asked).
  std::vector<std::int64_t> initial_symbols(const std::string& piece) const;
  // Merges neighbouring symbols, lowest rank first, until none applies.
  std::vector<std::int64_t> apply_merges(const std::vector<std::int64_t>& symbols) const;
  void bpe(const std::string& piece, std::vector<std::int64_t>& out) const;

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
  std::string run_decoder(std::vector<std::string> tokens, bool alone) const;

  void check_id(std::int64_t id) const;
};

}  // namespace glassllm
