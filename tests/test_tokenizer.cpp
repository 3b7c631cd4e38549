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

TEST_CASE("tokenizer: with_latin1_letters adds 46 characters after end-of-text") {
  Tokenizer tok = Tokenizer::with_latin1_letters();
  CHECK(tok.vocab_size() == 145);  // 95 printable + '\n' + '\t' + eos + 46 + unk
  CHECK(tok.unk_id() == 144);
  CHECK(tok.eos_id() == std::optional<std::int64_t>(97));
  Tokenizer ascii;
  for (std::int64_t id = 0; id < 98; ++id)
    CHECK(tok.token_text(id) == ascii.token_text(id));
  CHECK(tok.token_text(98) == "\xC2\xA1");   // U+00A1 INVERTED EXCLAMATION MARK
  CHECK(tok.token_text(104) == "\xC3\x80");  // U+00C0 A WITH GRAVE, after 6 marks
  CHECK(tok.token_text(124) == "\xC3\xA0");  // U+00E0 a with grave, after 20 capitals
  CHECK(tok.token_text(143) == "\xC3\xBC");  // U+00FC u with diaeresis, the last
  CHECK(tok.token_text(144) == kReplacement);
  // "ação": a, ç (the 5th lower-case letter: 124 + 4), ã (124 + 3), o.
  CHECK(tok.encode("a\xC3\xA7\xC3\xA3o") == Ids{65, 128, 127, 79});
  CHECK(tok.count_unknown("\xC2\xBF\xC3\x91, \xC3\x87, \xC3\x89, \xC5\x93?") ==
        1);  // ¿Ñ, Ç, É, œ?
}

TEST_CASE("tokenizer: every Latin-1 letter of with_latin1_letters round-trips") {
  Tokenizer tok = Tokenizer::with_latin1_letters();
  // The letters as code points, typed independently of kLatin1Letters.
  const std::vector<char32_t> letters = {
      0xA1, 0xAA, 0xAB, 0xBA, 0xBB, 0xBF, 0xC0, 0xC1, 0xC2, 0xC3, 0xC7, 0xC8,
      0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF, 0xD1, 0xD3, 0xD4, 0xD5, 0xD9, 0xDA,
      0xDB, 0xDC, 0xE0, 0xE1, 0xE2, 0xE3, 0xE7, 0xE8, 0xE9, 0xEA, 0xEB, 0xED,
      0xEE, 0xEF, 0xF1, 0xF3, 0xF4, 0xF5, 0xF9, 0xFA, 0xFB, 0xFC};
  REQUIRE(letters.size() == 46);
  for (std::size_t k = 0; k < letters.size(); ++k) {
    // Two-byte UTF-8 of a code point in U+0080..U+07FF: 110xxxxx 10xxxxxx.
    const std::string text = {char(0xC0 | (letters[k] >> 6)),
                              char(0x80 | (letters[k] & 0x3F))};
    CAPTURE(k);
    CHECK(tok.encode(text) == Ids{std::int64_t(98 + k)});
    CHECK(tok.decode({std::int64_t(98 + k)}) == text);
  }
}

TEST_CASE("tokenizer: a vocabulary saved before the Latin-1 letters loads as it was") {
  // glassllm_tokenizer.json as the tool wrote it before: ASCII, '\n', '\t',
  // the end-of-text token, unk; 99 ids.
  nlohmann::json tokens = nlohmann::json::array();
  for (char c = ' '; c <= '~'; ++c) tokens.push_back(std::string(1, c));
  for (const char* t : {"\n", "\t", "\x03"}) tokens.push_back(t);
  tokens.push_back(kReplacement);
  nlohmann::json j = {{"format", "glassllm-char-tokenizer"},
                      {"version", 1},
                      {"tokens", tokens},
                      {"unk_token", kReplacement},
                      {"eos_token", "\x03"}};
  Tokenizer old = Tokenizer::from_json(j.dump());
  CHECK(old.vocab_size() == 99);
  CHECK(old.unk_id() == 98);
  CHECK(old.eos_id() == std::optional<std::int64_t>(97));
  CHECK(old.encode("a\xC3\xA7") == Ids{65, 98});  // "aç": ç is unknown there
  // ... which is the default vocabulary, written the same way.
  CHECK(old.to_json() == Tokenizer().to_json());
  Tokenizer wide = Tokenizer::from_json(Tokenizer::with_latin1_letters().to_json());
  CHECK(wide.vocab_size() == 145);
  CHECK(wide.encode("a\xC3\xA7") == Ids{65, 128});
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
  CHECK(Tokenizer::with_latin1_letters().encode("a\xC3\xB8\xC3\xA9") ==
        Ids{65, 144, 130});  // ø is not among the letters, é is (124 + 6)
  CHECK(tok.decode(tok.encode("x\xC3\xB8y")) == "x" + kReplacement + "y");
  CHECK(tok.count_unknown("a\xC3\xB8\xE2\x82\xAC\xF0\x9F\x98\x80") == 3);
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
  Tokenizer tok = Tokenizer::with_latin1_letters();  // the default's tokens and more
  for (std::int64_t id = 0; id < std::int64_t(tok.vocab_size()); ++id) {
    CAPTURE(id);
    const std::string& text = tok.token_text(id);
    REQUIRE(!text.empty());
    if (id == tok.unk_id()) {
      CHECK(text == kReplacement);
    } else {
      CHECK(tok.encode(text) == Ids{id});
      unsigned char c = static_cast<unsigned char>(text[0]);
      // One byte: printable ASCII or one of the three controls; two bytes:
      // a Latin-1 character from U+00A1 up (C2 A1 .. C3 BF), none a control.
      if (text.size() == 1)
        CHECK((std::isprint(c) || c == '\n' || c == '\t' || c == Tokenizer::kEndOfText));
      else
        CHECK((text.size() == 2 && (c == 0xC2 || c == 0xC3) &&
               (c == 0xC3 || static_cast<unsigned char>(text[1]) >= 0xA1)));
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
