// hf_tokenizer.h: the byte-pair-encoding (BPE) tokenizers of published
// Llama-family checkpoints, read from the tokenizer.json that Hugging Face's
// `tokenizers` library writes (and tokenizer_config.json beside it).
//
// Encoding runs the same pipeline as `tokenizers`:
//
//   text --split on added tokens ("<|begin_of_text|>", "<s>", ...)--> sections
//   each section --normalizer--> --pre-tokenizer--> pieces --BPE--> ids
//   ids --post-processor (e.g. a BOS token first)--> result
//
// Two families are supported, with exactly these parts:
//   byte-level (Llama 3, SmolLM2, Qwen2/3): normalizer NFC or none; pre-tokenizer
//     Split (a regex, behavior Isolated), ByteLevel, Digits, in a Sequence; BPE
//     over the 256 byte characters; decoder ByteLevel.
//   SentencePiece-style (Llama 2, TinyLlama, Mistral): normalizer Prepend and
//     Replace (or pre-tokenizer Metaspace); BPE with byte_fallback (a character
//     missing from the vocabulary becomes its UTF-8 bytes, tokens "<0x41>");
//     decoder Replace, ByteFallback, Fuse, Strip (or Metaspace).
//   Post-processors: TemplateProcessing (single sequences), ByteLevel, Sequence.
// Anything else (another model type, normalizer, pre-tokenizer, decoder,
// post-processor, or option value) is refused when loading, by name:
//   "tok/tokenizer.json: pre_tokenizer type 'Whitespace' is not supported
//    (supported: Sequence, Split, ByteLevel, Digits, Metaspace)".
//
// Differences from `tokenizers`, all documented in docs/14-real-models.md: added
// tokens are matched in the raw text (as transformers.js does), decode() never
// applies clean_up_tokenization_spaces (it would not give the text back), and
// an added token with single_word true is refused.
//
// The regular expressions (\p{L}, \p{N}, the lookahead \s+(?!\S)) and the
// Unicode normalization run on ICU (Debian's libicu-dev); this header does not
// expose it. The implementation is glassllm/io/hf_tokenizer.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace glassllm {

class HFTokenizer {
 public:
  /// Reads dir/tokenizer.json and, if present, dir/tokenizer_config.json
  /// (bos_token, eos_token, add_bos_token, add_eos_token). Throws
  /// std::runtime_error naming the file and the field that is wrong or
  /// unsupported.
  static HFTokenizer load(const std::string& dir);
  /// The same from the two files' text ("" for no tokenizer_config.json);
  /// `where` names the folder in error messages.
  static HFTokenizer from_json(const std::string& tokenizer_json,
                               const std::string& tokenizer_config_json,
                               const std::string& where = "tokenizer");

  HFTokenizer(HFTokenizer&&) noexcept;
  HFTokenizer& operator=(HFTokenizer&&) noexcept;
  ~HFTokenizer();

  /// One more than the highest token id (vocabulary and added tokens).
  std::size_t vocab_size() const;

  /// Token ids of UTF-8 text. With add_special_tokens, the post-processor's
  /// template is applied (e.g. Llama 2 and 3 put the BOS token first); when
  /// tokenizer.json has no template, tokenizer_config.json's add_bos_token and
  /// add_eos_token decide. Added tokens written in the text ("<|eot_id|>") are
  /// recognised as themselves. Throws std::invalid_argument for text that is
  /// not valid UTF-8, naming the byte offset.
  std::vector<std::int64_t> encode(const std::string& text,
                                   bool add_special_tokens = true) const;
  /// Text of ids through the decoder. skip_special_tokens leaves out the
  /// added tokens marked special (BOS, EOS, ...). Bytes that do not form UTF-8
  /// become U+FFFD. Throws std::invalid_argument for an id outside the
  /// vocabulary.
  std::string decode(const std::vector<std::int64_t>& ids,
                     bool skip_special_tokens = false) const;
  /// What one token shows as on its own: its decoded text, with the word
  /// boundary kept (" Hello", not "Hello") and U+FFFD for an incomplete UTF-8
  /// sequence (a byte token such as "<0xE2>").
  std::string token_text(std::int64_t id) const;
  /// The token's string as tokenizer.json spells it ("ĠHello", "▁Hello").
  const std::string& token(std::int64_t id) const;
  /// The id of a token string, if it is in the vocabulary or an added token.
  std::optional<std::int64_t> token_id(const std::string& token) const;
  /// Whether the id is an added token marked special.
  bool is_special(std::int64_t id) const;

  /// tokenizer_config.json's bos_token and eos_token, as ids (absent when not
  /// given or null).
  std::optional<std::int64_t> bos_id() const;
  std::optional<std::int64_t> eos_id() const;

 private:
  struct Impl;
  explicit HFTokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace glassllm
