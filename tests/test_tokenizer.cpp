// Tests for tokenizer.h: the default vocabulary, UTF-8 handling, unknown
// characters, and glassllm_tokenizer.json (including the hand-made broken files
// in tests/data/checkpoint_corpus/).
#include <nlohmann/json.hpp>

#include "check.h"
#include "glassllm/io/checkpoint_internal.h"
#include "glassllm/io/files.h"
#include "glassllm/io/tokenizer.h"

using namespace glassllm;
using Ids = std::vector<std::int64_t>;

namespace {
const std::string kReplacement = "\xEF\xBF\xBD";  // U+FFFD in UTF-8
std::string corpus(const std::string& name) {
  return read_regular_file(std::string(GLASSLLM_TEST_DATA) + "/checkpoint_corpus/" +
                           name);
}
}  // namespace

TEST_CASE(
    "tokenizer: the default vocabulary is printable ASCII, newline, tab, end-of-text, "
    "then unk") {
  Tokenizer tok;
  CHECK(tok.vocab_size() == 99);  // 95 printable + '\n' + '\t' + eos + unk
  CHECK(tok.unk_id() == 98);
  REQUIRE(tok.eos_id());
  CHECK(*tok.eos_id() == 97);
  CHECK(tok.token_text(97) == "\x03");  // U+0003, END OF TEXT
  CHECK(tok.token_text(0) == " ");      // ' ' is 32, the first printable
  CHECK(tok.token_text(33) == "A");     // 'A' is 65 = 32 + 33
  CHECK(tok.token_text(94) == "~");     // '~' is 126 = 32 + 94
  CHECK(tok.token_text(95) == "\n");
  CHECK(tok.token_text(96) == "\t");
  CHECK(tok.token_text(98) == kReplacement);
  CHECK(tok.encode("Hi!\n") == Ids{40, 73, 1, 95});  // 'H'=72, 'i'=105, '!'=33
  CHECK(tok.encode("ab\x03") == Ids{65, 66, 97});    // the character is the token
}

TEST_CASE("tokenizer: printable ASCII, newline and tab survive encode then decode") {
  Tokenizer tok;
  std::string text;
  for (char c = ' '; c <= '~'; ++c) text += c;
  text += "\n\t";
  Ids ids = tok.encode(text);
  CHECK(ids.size() == 97);
  CHECK(tok.decode(ids) == text);
  CHECK(tok.count_unknown(text) == 0);
}

TEST_CASE("tokenizer: unknown characters become unk and decode to U+FFFD") {
  Tokenizer tok;
  // "é" (C3 A9), "€" (E2 82 AC) and "😀" (F0 9F 98 80) are one character each.
  CHECK(tok.encode("a\xC3\xA9") == Ids{65, 98});
  CHECK(tok.encode("\xE2\x82\xAC\xF0\x9F\x98\x80") == Ids{98, 98});
  CHECK(tok.decode(tok.encode("x\xC3\xA9y")) == "x" + kReplacement + "y");
  CHECK(tok.count_unknown("a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80") == 3);
}

TEST_CASE("tokenizer: every byte of invalid UTF-8 becomes one unk") {
  Tokenizer tok;
  const std::int64_t U = 98;
  CHECK(tok.encode("\xFF") == Ids{U});  // never valid
  CHECK(tok.encode("a\x80"
                   "b") == Ids{65, U, 66});                  // lone continuation byte
  CHECK(tok.encode("\xE2\x82") == Ids{U, U});                // truncated 3-byte form
  CHECK(tok.encode("\xC0\xAF") == Ids{U, U});                // overlong '/'
  CHECK(tok.encode("\xED\xA0\x80") == Ids{U, U, U});         // surrogate U+D800
  CHECK(tok.encode("\xF4\x90\x80\x80") == Ids{U, U, U, U});  // U+110000, past the end
  CHECK(tok.encode("\xE2\x82"
                   "a") == Ids{U, U, 65});  // decoding resumes at 'a'
  CHECK(tok.count_unknown("\xFF\xFE") == 2);
}

TEST_CASE("tokenizer: a vocabulary of multi-byte characters") {
  // a, é, €, 😀: 1, 2, 3 and 4 bytes; unk is id 4.
  Tokenizer tok({"a", "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80"});
  CHECK(tok.vocab_size() == 5);
  std::string text =
      "a\xE2\x82\xAC"
      "x\xF0\x9F\x98\x80\xC3\xA9";
  CHECK(tok.encode(text) == Ids{0, 2, 4, 3, 1});
  CHECK(tok.decode(tok.encode(text)) ==
        "a\xE2\x82\xAC" + kReplacement + "\xF0\x9F\x98\x80\xC3\xA9");
}

TEST_CASE("tokenizer: a bad vocabulary entry is named") {
  CHECK_THROWS_WITH_AS(
      Tokenizer({"a", "bc"}),
      doctest::Contains("tokenizer: token 1 (\"bc\") is 2 code points, not one"),
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(Tokenizer({"a", "b", "a"}),
                       doctest::Contains("token 2 (\"a\") repeats token 0"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(Tokenizer({""}), doctest::Contains("token 0 (\"\") is empty"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(Tokenizer({"\xFF"}), doctest::Contains("is not valid UTF-8"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(Tokenizer({kReplacement}),
                       doctest::Contains("only the unknown token (last) may be"),
                       std::invalid_argument);
}

TEST_CASE("tokenizer: decode rejects ids outside the vocabulary") {
  Tokenizer tok;
  CHECK_THROWS_WITH_AS(
      tok.decode({0, 99}),
      doctest::Contains("tokenizer: id 99 is outside the vocabulary [0, 99)"),
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(tok.token_text(-1), doctest::Contains("id -1 is outside"),
                       std::invalid_argument);
}

TEST_CASE(
    "tokenizer: every token's text is one readable character that encodes to itself") {
  Tokenizer tok;
  for (std::int64_t id = 0; id < std::int64_t(tok.vocab_size()); ++id) {
    CAPTURE(id);
    const std::string& text = tok.token_text(id);
    REQUIRE(!text.empty());
    if (id == tok.unk_id()) {
      CHECK(text == kReplacement);
    } else {
      CHECK(tok.encode(text) == Ids{id});
      unsigned char c = static_cast<unsigned char>(text[0]);
      CHECK((std::isprint(c) || c == '\n' || c == '\t' || c == Tokenizer::kEndOfText));
    }
  }
}

TEST_CASE("tokenizer: to_json writes the documented format and from_json reads it back") {
  Tokenizer tok({"a", "\xC3\xA9", "\n"});
  std::string text = tok.to_json();
  auto j = nlohmann::json::parse(text);
  CHECK(j["format"] == "glassllm-char-tokenizer");
  CHECK(j["version"] == 1);
  CHECK(j["tokens"] == nlohmann::json::array({"a", "\xC3\xA9", "\n", kReplacement}));
  CHECK(j["unk_token"] == kReplacement);
  CHECK(!j.contains("eos_token"));  // this vocabulary has none
  CHECK(!tok.eos_id());

  Tokenizer back = Tokenizer::from_json(text);
  CHECK(back.vocab_size() == 4);
  for (std::int64_t id = 0; id < 4; ++id)
    CHECK(back.token_text(id) == tok.token_text(id));
  Tokenizer dflt = Tokenizer::from_json(Tokenizer().to_json());
  CHECK(dflt.vocab_size() == 99);
  CHECK(dflt.encode("Hi!") == Ids{40, 73, 1});
  CHECK(dflt.eos_id() == std::optional<std::int64_t>(97));
  CHECK(nlohmann::json::parse(Tokenizer().to_json())["eos_token"] == "\x03");
}

TEST_CASE("tokenizer: an end-of-text token of one's own vocabulary") {
  Tokenizer tok({"a", "b", "$"}, "$");
  CHECK(tok.eos_id() == std::optional<std::int64_t>(2));
  Tokenizer back = Tokenizer::from_json(tok.to_json());
  CHECK(back.eos_id() == std::optional<std::int64_t>(2));
  CHECK_THROWS_WITH_AS(
      Tokenizer({"a", "b"}, "$"),
      doctest::Contains("tokenizer: eos_token \"$\" is not one of the tokens"),
      std::invalid_argument);
  nlohmann::json j = nlohmann::json::parse(tok.to_json());
  j["eos_token"] = 3;
  CHECK_THROWS_WITH_AS(
      Tokenizer::from_json(j.dump()),
      doctest::Contains("tokenizer: eos_token is 3, expected one of the tokens"),
      std::invalid_argument);
}

TEST_CASE("tokenizer: from_json reads the hand-made valid file") {
  // ["a", "b", "\n", "é", unk]
  Tokenizer tok = Tokenizer::from_json(corpus("tokenizer_valid.json"));
  CHECK(tok.vocab_size() == 5);
  CHECK(tok.encode("b\xC3\xA9z") == Ids{1, 3, 4});
}

TEST_CASE("tokenizer: each broken tokenizer file gives its own error") {
  struct Case {
    const char* file;
    const char* message;
  };
  const Case cases[] = {
      {"tokenizer_duplicate.json", "tokenizer: token 2 (\"a\") repeats token 0"},
      {"tokenizer_bad_utf8.json",
       "tokenizer: invalid JSON at line 1, column 70 (in tokens[1]): unexpected byte "
       "0xFF"},
      {"tokenizer_two_chars.json",
       "tokenizer: token 0 (\"ab\") is 2 code points, not one"},
      {"tokenizer_unk_not_last.json",
       "tokenizer: the last token is \"a\"; it must be the unknown"},
      {"tokenizer_not_string.json", "tokenizer: token 1 is number, not a string"},
      {"tokenizer_wrong_version.json", "tokenizer: version 2 is not supported"},
      {"tokenizer_wrong_format.json",
       "tokenizer: format is \"bpe\", expected \"glassllm-char-tokenizer\""},
  };
  for (const Case& c : cases) {
    CAPTURE(c.file);
    CHECK_THROWS_WITH_AS(Tokenizer::from_json(corpus(c.file)),
                         doctest::Contains(c.message), std::invalid_argument);
  }
  // The message says where the JSON broke (line, column, path) and what was there.
  CHECK_THROWS_WITH_AS(Tokenizer::from_json("{\"format\": }"),
                       "tokenizer: invalid JSON at line 1, column 12 (in format): "
                       "unexpected '}'",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(Tokenizer::from_json("[]"),
                       doctest::Contains("tokenizer: the JSON is not an object"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      Tokenizer::from_json("{\"format\": \"glassllm-char-tokenizer\", \"version\": 1}"),
      doctest::Contains("tokenizer: missing key 'tokens'"), std::invalid_argument);
}
