// tokenizer.h: a character-level tokenizer whose every token displays as
// readable text.
//
// The vocabulary is a list of single characters (UTF-8 code points): by
// default the 95 printable ASCII characters, newline, tab and the end-of-text
// token; with_latin1_letters() adds the 46 Latin-1 characters of Portuguese,
// Spanish and French (kLatin1Letters). Text with a character outside the vocabulary
// encodes that character as the unknown token, which decodes to U+FFFD (the replacement
// character) so the loss is visible, never silent. The tokenizer is saved beside a
// checkpoint as glassllm_tokenizer.json:
//
//   {"format": "glassllm-char-tokenizer", "version": 1,
//    "tokens": [" ", "!", ..., "~", "\n", "\t", "\u0003", "\uFFFD"],
//    "unk_token": "\uFFFD", "eos_token": "\u0003"}
//
// "tokens" lists every token's text in id order, each exactly one code point,
// no repeats, the unknown token (always U+FFFD) last. The implementation is
// glassllm/io/tokenizer.cpp, which also decodes UTF-8 by hand.
//
// The end-of-text token (Hugging Face calls it eos, "end of sequence") is the
// control character U+0003, whose ASCII name is END OF TEXT: one byte, so
// every token is still one character, and no ordinary text contains it. The
// synthetic tasks end every answer with it, so a trained model says where its
// answer ends and generation stops there; `train` writes its id to
// config.json as eos_token_id. The inspector draws it as the symbol U+2403
// (the glyph for END OF TEXT). "eos_token" is optional in the file: a
// tokenizer saved without one has no end-of-text token.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace glassllm {

class Tokenizer {
 public:
  /// Printable ASCII (' ' .. '~') as ids 0-94, '\n' 95, '\t' 96, the
  /// end-of-text token 97 and the unknown token 98: 99 ids.
  Tokenizer();
  /// The default vocabulary with the characters of kLatin1Letters as ids
  /// 98-143 and the unknown token 144: 145 ids. Ids 0-97 mean what they mean
  /// in the default one. `glassllm train` uses it for the +accents tasks
  /// (tasks.h); it stays a choice because a larger vocabulary changes the
  /// random start of every model, and the lessons' copy run at the defaults
  /// learned more slowly from most of the starts tried.
  static Tokenizer with_latin1_letters();
  /// A vocabulary of the given characters (each one UTF-8 code point, no
  /// repeats, not U+FFFD) plus the unknown token at the end. `eos_token`, if
  /// given, must be one of the characters and becomes the end-of-text token.
  /// Throws std::invalid_argument naming a bad entry:
  /// "tokenizer: token 3 ("ab") is 2 code points, not one".
  explicit Tokenizer(const std::vector<std::string>& characters,
                     const std::optional<std::string>& eos_token = std::nullopt);

  /// The end-of-text character of the default vocabulary: U+0003.
  static constexpr char kEndOfText = '\x03';
  /// The characters with_latin1_letters() adds, in code point order
  /// (UTF-8): the letters with accents of Portuguese, Spanish and French that
  /// Latin-1 has, upper and lower case (a-, e-, i-, o-, u- with acute, grave,
  /// circumflex, tilde or diaeresis as those languages use them, c cedilla,
  /// n tilde), and the punctuation of Spanish and Portuguese text (inverted
  /// question and exclamation marks, guillemets, ordinal indicators). Left
  /// out: y with diaeresis (Latin-1 has no upper case of it) and the ligature
  /// oe (not in Latin-1).
  static constexpr const char* kLatin1Letters =
      "\u00A1\u00AA\u00AB\u00BA\u00BB\u00BF"                    // ¡ ª « º » ¿
      "\u00C0\u00C1\u00C2\u00C3\u00C7\u00C8\u00C9\u00CA\u00CB"  // À Á Â Ã Ç È É Ê Ë
      "\u00CD\u00CE\u00CF\u00D1\u00D3\u00D4\u00D5"              // Í Î Ï Ñ Ó Ô Õ
      "\u00D9\u00DA\u00DB\u00DC"                                // Ù Ú Û Ü
      "\u00E0\u00E1\u00E2\u00E3\u00E7\u00E8\u00E9\u00EA\u00EB"  // à á â ã ç è é ê ë
      "\u00ED\u00EE\u00EF\u00F1\u00F3\u00F4\u00F5"              // í î ï ñ ó ô õ
      "\u00F9\u00FA\u00FB\u00FC";                               // ù ú û ü

  std::size_t vocab_size() const { return tokens_.size(); }
  std::int64_t unk_id() const { return std::int64_t(tokens_.size()) - 1; }
  /// The end-of-text token's id (97 by default); none for a vocabulary
  /// without one.
  std::optional<std::int64_t> eos_id() const { return eos_id_; }

  /// Ids of the characters of UTF-8 text; unknown characters (and bytes that
  /// are not valid UTF-8) become unk_id().
  std::vector<std::int64_t> encode(const std::string& text) const;
  /// Text of ids; throws std::invalid_argument for an id outside the vocabulary.
  std::string decode(const std::vector<std::int64_t>& ids) const;
  /// The text of one token ("\uFFFD" for the unknown token).
  const std::string& token_text(std::int64_t id) const;
  /// Number of characters of `text` that encode() maps to unk_id().
  std::size_t count_unknown(const std::string& text) const;

  /// Writes glassllm_tokenizer.json content / reads it back. from_json throws
  /// std::invalid_argument naming the field that is wrong, e.g.
  /// "tokenizer: token 5 ("a") repeats token 2", or for text that is not JSON
  /// "tokenizer: invalid JSON: ... parse error at line 1, column 7: ...".
  std::string to_json() const;
  static Tokenizer from_json(const std::string& json_text);

 private:
  std::vector<std::string> tokens_;                 // the unknown token last
  std::unordered_map<char32_t, std::int64_t> ids_;  // code point -> id, unk excluded
  std::optional<std::int64_t> eos_id_;
};

}  // namespace glassllm
