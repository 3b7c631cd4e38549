// Tests for hf_tokenizer.h on small hand-made tokenizer.json files whose
// results are worked out by hand in the comments. The same code on the real
// Llama 3, Qwen3 and SentencePiece-style files is compared with
// transformers.js by tests/tokenizer/parity.mjs (the tokenizer_parity test).
#include <nlohmann/json.hpp>

#include "check.h"
#include "glassllm/io/hf_tokenizer.h"

using namespace glassllm;
using Ids = std::vector<std::int64_t>;
using json = nlohmann::json;

namespace {

// SentencePiece style, as Llama 2 writes it: "▁" (U+2581) marks a space, the
// normalizer puts one before the text, characters missing from the vocabulary
// become byte tokens, and the template puts <s> first.
json sentencepiece_style() {
  return json::parse(R"({
    "version": "1.0", "truncation": null, "padding": null,
    "added_tokens": [
      {"id": 0, "content": "<unk>", "special": true, "single_word": false, "lstrip": false, "rstrip": false, "normalized": false},
      {"id": 1, "content": "<s>", "special": true, "single_word": false, "lstrip": false, "rstrip": false, "normalized": false},
      {"id": 2, "content": "</s>", "special": true, "single_word": false, "lstrip": false, "rstrip": false, "normalized": false}],
    "normalizer": {"type": "Sequence", "normalizers": [
      {"type": "Prepend", "prepend": "▁"},
      {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
    "pre_tokenizer": null,
    "post_processor": {"type": "TemplateProcessing",
      "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
      "pair": [],
      "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
    "decoder": {"type": "Sequence", "decoders": [
      {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
      {"type": "ByteFallback"}, {"type": "Fuse"},
      {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
    "model": {"type": "BPE", "dropout": null, "unk_token": "<unk>",
      "continuing_subword_prefix": null, "end_of_word_suffix": null,
      "fuse_unk": true, "byte_fallback": true,
      "vocab": {"<unk>": 0, "<s>": 1, "</s>": 2, "<0xC3>": 3, "<0xA9>": 4,
                "▁": 5, "a": 6, "b": 7, "ab": 8, "▁ab": 9, "c": 10},
      "merges": ["a b", "▁ ab"]}
  })");
}

// Byte level, as Llama 3 writes it: the Split regex cuts the text into
// words, ByteLevel writes each byte as a character (the space is "Ġ").
json byte_level() {
  return json::parse(R"({
    "added_tokens": [
      {"id": 20, "content": "<|end|>", "special": true, "single_word": false, "lstrip": false, "rstrip": false, "normalized": false}],
    "normalizer": null,
    "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
      {"type": "Split", "pattern": {"Regex": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
       "behavior": "Isolated", "invert": false},
      {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}]},
    "post_processor": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true},
    "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
    "model": {"type": "BPE", "dropout": null, "unk_token": null, "fuse_unk": false,
      "byte_fallback": false, "ignore_merges": false,
      "vocab": {"H": 0, "i": 1, "Ġ": 2, "Hi": 3, "ĠH": 4, "ĠHi": 5, "a": 6, "b": 7, "Ġb": 8,
                "1": 9, "2": 10, "3": 11, "4": 12, "5": 13, "12": 14, "123": 15, "45": 16,
                "Ã": 17, "©": 18, "Ã©": 19},
      "merges": [["H", "i"], ["Ġ", "H"], ["Ġ", "Hi"], ["Ġ", "b"], ["1", "2"], ["12", "3"],
                 ["4", "5"], ["Ã", "©"]]}
  })");
}

HFTokenizer make(const json& tokenizer, const json& config = json()) {
  return HFTokenizer::from_json(tokenizer.dump(), config.is_null() ? "" : config.dump(),
                                "t");
}

std::string load_error(const json& tokenizer, const json& config = json()) {
  try {
    make(tokenizer, config);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(loaded)";
}

}  // namespace

TEST_CASE("hf_tokenizer: SentencePiece style, merges in the order of the merges list") {
  HFTokenizer tok = make(sentencepiece_style());
  CHECK(tok.vocab_size() == 11);
  // "ab ab" -> "▁ab▁ab" -> ▁ a b ▁ a b. Merge 0 (a b) applies at both places
  // before merge 1 (▁ ab): ▁ ab ▁ ab, then ▁ab ▁ab. The template puts <s> first.
  CHECK(tok.encode("ab ab") == Ids{1, 9, 9});
  CHECK(tok.encode("ab ab", false) == Ids{9, 9});
  // "ba": ▁ b a, no merge applies.
  CHECK(tok.encode("ba", false) == Ids{5, 7, 6});
  // Decoding: "▁ab▁ab" -> " ab ab", Strip drops the one space the normalizer added.
  CHECK(tok.decode({1, 9, 9}, true) == "ab ab");
  CHECK(tok.decode({1, 9, 9}) == "<s> ab ab");
}

TEST_CASE("hf_tokenizer: byte fallback, fused unknowns, and their decoding") {
  HFTokenizer tok = make(sentencepiece_style());
  // "é" (C3 A9) is not in the vocabulary but both its byte tokens are.
  CHECK(tok.encode("é", false) == Ids{5, 3, 4});
  CHECK(tok.decode({5, 3, 4}) == "é");
  // "!" has no byte token (<0x21>) either: unknown, and two in a row fuse into one.
  CHECK(tok.encode("c!!", false) == Ids{5, 10, 0});
  // A lone byte that is not UTF-8 decodes to U+FFFD; a token shown alone keeps
  // its word boundary.
  CHECK(tok.token_text(3) == "\uFFFD");
  CHECK(tok.token_text(9) == " ab");
  CHECK(tok.token(9) == "▁ab");
  // Added tokens in the text are themselves; the sections around them are
  // normalized separately (each gets its "▁").
  CHECK(tok.encode("ab</s>ab", false) == Ids{9, 2, 9});
}

TEST_CASE("hf_tokenizer: byte level, the Llama 3 split regex and merge priority") {
  HFTokenizer tok = make(byte_level());
  // "Hi Hi" -> words "Hi", " Hi" -> "Hi", "ĠHi". In "ĠHi", merge 0 (H i) comes
  // before merge 1 (Ġ H): Ġ Hi, then merge 2 (Ġ Hi) makes ĠHi.
  CHECK(tok.encode("Hi Hi") == Ids{3, 5});
  // "a  b": \s+(?!\S) takes the first space only, so that the second stays
  // with "b": "a", " ", " b".
  CHECK(tok.encode("a  b") == Ids{6, 2, 8});
  // \p{N}{1,3}: "12345" -> "123", "45".
  CHECK(tok.encode("12345") == Ids{15, 16});
  // "é" is the bytes C3 A9, written "Ã©" (U+00C3 U+00A9), merged.
  CHECK(tok.encode("é") == Ids{19});
  CHECK(tok.decode({19}) == "é");
  CHECK(tok.decode({17, 18}) == "é");     // a character split over two tokens
  CHECK(tok.token_text(17) == "\uFFFD");  // half a character, alone
  CHECK(tok.decode({3, 5, 20, 2}) == "Hi Hi<|end|> ");
  CHECK(tok.decode({3, 20}, true) == "Hi");
  CHECK(tok.encode("Hi<|end|>") == Ids{3, 20});
  CHECK(tok.is_special(20));
  CHECK_FALSE(tok.is_special(3));
}

TEST_CASE("hf_tokenizer: NFC normalization before BPE") {
  json t = byte_level();
  t["normalizer"] = {{"type", "NFC"}};
  HFTokenizer tok = make(t);
  // "e" + U+0301 (combining acute) is "é" (U+00E9, bytes C3 A9) in NFC.
  CHECK(tok.encode("e\xCC\x81") == Ids{19});
}

TEST_CASE("hf_tokenizer: Metaspace pre-tokenizer and decoder") {
  json t = sentencepiece_style();
  t["normalizer"] = nullptr;
  t["pre_tokenizer"] = {{"type", "Metaspace"},
                        {"replacement", "▁"},
                        {"prepend_scheme", "first"},
                        {"split", true}};
  t["decoder"] = {
      {"type", "Metaspace"}, {"replacement", "▁"}, {"prepend_scheme", "first"}};
  HFTokenizer tok = make(t);
  // "ab ab" -> "▁ab▁ab" -> split before each ▁: "▁ab", "▁ab".
  CHECK(tok.encode("ab ab", false) == Ids{9, 9});
  // prepend_scheme "first": only the section at the start of the text gets "▁".
  CHECK(tok.encode("</s>ab", false) == Ids{2, 8});
  CHECK(tok.decode({9, 9}) == "ab ab");
}

TEST_CASE("hf_tokenizer: tokenizer_config.json gives bos/eos and add_bos_token") {
  json config = {{"bos_token", "<s>"}, {"eos_token", {{"content", "</s>"}}}};
  HFTokenizer tok = make(sentencepiece_style(), config);
  CHECK(tok.bos_id() == std::optional<std::int64_t>(1));
  CHECK(tok.eos_id() == std::optional<std::int64_t>(2));
  // Without a template, add_bos_token / add_eos_token decide.
  json t = sentencepiece_style();
  t["post_processor"] = nullptr;
  CHECK(make(t).encode("ab") == Ids{9});  // no template, no add_bos_token: no <s>
  config["add_bos_token"] = true;
  config["add_eos_token"] = true;
  CHECK(make(t, config).encode("c") == Ids{1, 5, 10, 2});
  CHECK(load_error(t, {{"bos_token", "<nope>"}}) ==
        "t/tokenizer_config.json: \"bos_token\" \"<nope>\" is not a token of "
        "tokenizer.json");
}

TEST_CASE("hf_tokenizer: features it does not have are refused by name") {
  json t = sentencepiece_style();
  t["pre_tokenizer"] = {{"type", "Whitespace"}};
  CHECK(load_error(t) ==
        "t/tokenizer.json: pre_tokenizer type 'Whitespace' is not supported (supported: "
        "Sequence, Split, ByteLevel, Digits, Metaspace)");
  t = sentencepiece_style();
  t["model"]["type"] = "WordPiece";
  CHECK(load_error(t).find("model type 'WordPiece' is not supported") !=
        std::string::npos);
  t = sentencepiece_style();
  t["normalizer"] = {{"type", "Lowercase"}};
  CHECK(load_error(t).find("normalizer type 'Lowercase' is not supported") !=
        std::string::npos);
  t = sentencepiece_style();
  t["decoder"] = {{"type", "WordPiece"}};
  CHECK(load_error(t).find("decoder type 'WordPiece' is not supported") !=
        std::string::npos);
  t = byte_level();
  t["pre_tokenizer"]["pretokenizers"][0]["behavior"] = "Removed";
  CHECK(
      load_error(t) ==
      "t/tokenizer.json: pre_tokenizer Split \"behavior\": \"Removed\" is not supported");
  t = sentencepiece_style();
  t["added_tokens"][1]["single_word"] = true;
  CHECK(load_error(t) ==
        "t/tokenizer.json: added token \"<s>\" has \"single_word\": true, which is not "
        "supported");
  t = sentencepiece_style();
  t["model"]["dropout"] = 0.1;
  CHECK(load_error(t) == "t/tokenizer.json: BPE \"dropout\": 0.1 is not supported");
  t = sentencepiece_style();
  t["model"]["merges"].push_back("a zz");
  CHECK(load_error(t) ==
        "t/tokenizer.json: merge 2 (\"a\", \"zz\") uses a token missing from the "
        "vocabulary");
}

TEST_CASE("hf_tokenizer: bad input is refused with its position") {
  HFTokenizer tok = make(byte_level());
  CHECK_THROWS_WITH(tok.encode("Hi\xFF"),
                    "tokenize: the text is not valid UTF-8 (byte 2)");
  CHECK_THROWS_WITH(tok.decode({21}),
                    "decode: token id 21 is outside the vocabulary [0, 21)");
  // A byte-level vocabulary missing a byte, and no unk_token: refused, not dropped.
  CHECK_THROWS_WITH(
      tok.encode("z"),
      "tokenize: character \"z\" is not in the vocabulary and the tokenizer "
      "has no unk_token");
}

TEST_CASE("hf_tokenizer: hostile files fail with the field, not a crash or a hang") {
  // A Sequence nested 100,000 deep is refused by the JSON reader's limit.
  std::string deep = "{\"model\": {}, \"normalizer\": ";
  for (int i = 0; i < 100000; ++i) deep += "{\"type\": \"Sequence\", \"normalizers\": [";
  deep += "null";
  for (int i = 0; i < 100000; ++i) deep += "]}";
  deep += "}";
  std::string error;
  try {
    HFTokenizer::from_json(deep, "", "t");
  } catch (const std::exception& e) {
    error = e.what();
  }
  CHECK(error.rfind("t/tokenizer.json: nesting deeper than 256 levels at normalizer."
                    "normalizers[0].normalizers[0]",
                    0) == 0);
  // 17 Sequences, within the JSON limit: the Sequence limit (16) names the path.
  json t = sentencepiece_style();
  json n = {{"type", "NFC"}};
  for (int i = 0; i < 17; ++i) n = {{"type", "Sequence"}, {"normalizers", {n}}};
  t["normalizer"] = n;
  std::string path = "normalizer";
  for (int i = 0; i < 16; ++i) path += ".normalizers[0]";
  CHECK(load_error(t) ==
        "t/tokenizer.json: " + path +
            ": Sequences nested more than 16 deep; at most 16 are allowed");
  // An id of 2^62 would make a table of exabytes: refused against the file's
  // 11 + 3 tokens (ids up to 2 * 11 + 1023 allowed).
  t = sentencepiece_style();
  t["model"]["vocab"]["c"] = std::int64_t(1) << 62;
  CHECK(load_error(t) ==
        "t/tokenizer.json: model \"vocab\" entry \"c\" has id 4611686018427387904, more "
        "than 1045 for a vocabulary of 11 tokens");
  // Wrong JSON types name the field.
  t = sentencepiece_style();
  t["model"]["byte_fallback"] = "yes";
  CHECK(load_error(t) ==
        "t/tokenizer.json: model.byte_fallback is \"yes\", expected true or false");
  t = sentencepiece_style();
  t["added_tokens"][2]["content"] = 7;
  CHECK(load_error(t) ==
        "t/tokenizer.json: added_tokens[2].content is 7, expected a string");
  t = sentencepiece_style();
  t["decoder"]["decoders"][3]["start"] = -1;
  CHECK(load_error(t) ==
        "t/tokenizer.json: decoder.decoders[3].start is -1, expected an "
        "integer >= 0");
  // tokenizer_config.json's errors name tokenizer_config.json.
  CHECK(load_error(sentencepiece_style(), {{"add_bos_token", "1"}}) ==
        "t/tokenizer_config.json: add_bos_token is \"1\", expected true or false");
  CHECK(load_error(sentencepiece_style(), json::array()) ==
        "t/tokenizer_config.json: the JSON is a list of 0 items, expected an object");
  // A template id outside the vocabulary (here -5) is refused, not used.
  t = sentencepiece_style();
  t["post_processor"]["special_tokens"]["<s>"]["ids"] = {-5};
  CHECK(load_error(t) ==
        "t/tokenizer.json: post_processor.special_tokens[\"<s>\"].ids is "
        "-5, expected a token id from 0 to 10");
}

TEST_CASE("hf_tokenizer: a Split regex that backtracks for ever hits the time limit") {
  json t = byte_level();
  t["pre_tokenizer"]["pretokenizers"][0]["pattern"] = {{"Regex", "(a+)+$"}};
  HFTokenizer tok = make(t);
  // 40 a's then b: every way of cutting the a's is tried before $ fails
  // (2^40 of them); the limit stops it within seconds.
  CHECK_THROWS_WITH(tok.encode(std::string(40, 'a') + "b"),
                    "t/tokenizer.json: pre_tokenizer regex \"(a+)+$\" runs past the time "
                    "limit on a piece of 41 characters (it backtracks without end); "
                    "simplify the pattern");
}
