// test_tasks.cpp: the synthetic tasks and make_batch. Examples are checked
// against answers computed here, independently of the generators, and the
// batch's targets against the predictable positions, one by one.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "glassllm/train/tasks.h"
#include "tests/check.h"

using namespace glassllm;

namespace {

// UTF-8 to code points and back, for the 1- and 2-byte characters of the
// tasks' alphabet (110xxxxx 10xxxxxx is 5 + 6 bits).
std::u32string code_points(const std::string& s) {
  std::u32string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      out += char32_t(b);
    } else {
      REQUIRE((b & 0xE0) == 0xC0);
      out += char32_t(((b & 0x1F) << 6) | (static_cast<unsigned char>(s[++i]) & 0x3F));
    }
  }
  return out;
}
std::string utf8(const std::u32string& cps) {
  std::string out;
  for (char32_t c : cps) {
    if (c < 0x80) {
      out += char(c);
    } else {
      out += char(0xC0 | (c >> 6));
      out += char(0x80 | (c & 0x3F));
    }
  }
  return out;
}

// The answer a task's question demands, computed from the text alone:
// reverse and sort work on code points (the tokens), not bytes.
std::string expected_answer(const std::string& text) {
  const std::size_t eq = text.find('=');
  const std::string q = text.substr(2, eq - 2);
  switch (text[0]) {
    case 'C':
      return q;
    case 'R': {
      const std::u32string c = code_points(q);
      return utf8({c.rbegin(), c.rend()});
    }
    case 'S': {
      std::u32string c = code_points(q);
      std::sort(c.begin(), c.end());
      return utf8(c);
    }
    case 'A': {
      const std::size_t plus = q.find('+');
      return std::to_string(std::stoull(q.substr(0, plus)) +
                            std::stoull(q.substr(plus + 1)));
    }
  }
  return "?";
}

}  // namespace

TEST_CASE("each synthetic task's examples have the format 'L question=answer<eos>\\n'") {
  const Tokenizer tok = Tokenizer::with_latin1_letters();
  for (const char* name : {"copy", "reverse", "sort", "add", "mix", "copy+accents",
                           "reverse+accents", "sort+accents", "mix+accents"}) {
    CAPTURE(name);
    auto task = make_task(name, tok);
    std::mt19937_64 rng(7);
    for (int i = 0; i < 200; ++i) {
      Example e = task->sample(rng);
      CAPTURE(e.text);
      REQUIRE(code_points(e.text).size() <= task->max_example_chars());
      CHECK(e.text[1] == ' ');
      CHECK(e.text.back() == '\n');
      CHECK(e.text[e.text.size() - 2] == '\x03');  // the end-of-text, U+0003
      CHECK(std::count(e.text.begin(), e.text.end(), '=') == 1);
      CHECK(std::count(e.text.begin(), e.text.end(), '\n') == 1);
      CHECK(std::count(e.text.begin(), e.text.end(), '\x03') == 1);
      // The predictable part starts right after '=' and ends with the
      // end-of-text; the '\n' after it is not predicted.
      CHECK(e.answer_begin == e.text.find('=') + 1);
      CHECK(e.answer_end == e.text.size() - 1);
      CHECK(e.answer() == expected_answer(e.text));
    }
  }
}

TEST_CASE("a fixed seed gives a fixed example: copy and add written out") {
  Tokenizer tok;
  std::mt19937_64 a(1), b(1);
  Example x = make_task("copy", tok)->sample(a);
  Example y = make_task("copy", tok)->sample(b);
  CHECK(x.text == y.text);  // deterministic
  // An add example built by hand: "A 123+4567=4690<eos>\n" has its answer and
  // end-of-text at 11 .. 16.
  Example e;
  e.text = "A 123+4567=4690\x03\n";
  e.answer_begin = 11;
  e.answer_end = 16;
  CHECK(e.answer() == "4690");
  CHECK(expected_answer(e.text) == "4690");  // 123 + 4567, by the test's own arithmetic
  // Reverse and sort act on characters: "ação" (a, ç, ã, o).
  CHECK(expected_answer("R a\xC3\xA7\xC3\xA3o=") ==
        "o\xC3\xA3\xC3\xA7"
        "a");  // "oãça"
  CHECK(expected_answer("S a\xC3\xA7\xC3\xA3oZ=") ==
        "Zao\xC3\xA3\xC3\xA7");  // Z < a < o < ã (E3) < ç (E7)
}

TEST_CASE("with +accents the string tasks draw half their strings with Latin-1 letters") {
  const Tokenizer tok = Tokenizer::with_latin1_letters();
  auto task = make_task("reverse+accents", tok);
  std::mt19937_64 rng(3);
  std::size_t accented = 0, n = 2000, latin1_chars = 0, chars = 0;
  for (std::size_t i = 0; i < n; ++i) {
    Example e = task->sample(rng);
    const std::u32string q = code_points(e.text.substr(2, e.text.find('=') - 2));
    bool any = false;
    for (char32_t c : q) {
      CHECK(tok.count_unknown(utf8({c})) == 0);  // every character is in the vocabulary
      any |= c >= 0x80;
    }
    accented += any;
    if (any) {
      chars += q.size();
      for (char32_t c : q) latin1_chars += c >= 0x80;
    }
  }
  // Half the strings come from the 108-character alphabet, of which 46 are
  // Latin-1; all but (62/108)^len of those show one (the mean of
  // (62/108)^len over lengths 4-16 is 0.020), so 0.5 * 0.980 = 0.49 of all.
  CHECK(double(accented) / double(n) == doctest::Approx(0.49).epsilon(0.1));
  // Among those, about 46/108 = 0.43 of the characters.
  CHECK(double(latin1_chars) / double(chars) == doctest::Approx(0.43).epsilon(0.05));
}

TEST_CASE("without +accents the strings are ASCII; +accents needs the letters") {
  const Tokenizer tok = Tokenizer::with_latin1_letters();
  auto task = make_task("mix", tok);
  std::mt19937_64 rng(5);
  for (int i = 0; i < 500; ++i) {
    const std::string text = task->sample(rng).text;
    CAPTURE(text);
    CHECK(std::none_of(text.begin(), text.end(),
                       [](char c) { return static_cast<unsigned char>(c) >= 0x80; }));
  }
  CHECK(make_task("mix+accents", tok)->name() == "mix+accents");
  // The default vocabulary (ASCII, '\n', '\t', the end-of-text token) has
  // no accented letters.
  Tokenizer old;
  CHECK(make_task("copy", old)->name() == "copy");
  CHECK_THROWS_WITH_AS(
      make_task("copy+accents", old),
      doctest::Contains("task copy+accents: the tokenizer lacks the Latin-1"),
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(make_task("add+accents", tok),
                       doctest::Contains("unknown task 'add+accents'"),
                       std::invalid_argument);
}

TEST_CASE("make_batch is a pure function of (seed, step, split)") {
  Tokenizer tok;
  auto task = make_task("mix", tok);
  Batch a = make_batch(*task, tok, 5, 3, 4, 64, Split::train);
  Batch b = make_batch(*task, tok, 5, 3, 4, 64, Split::train);
  CHECK(a.tokens == b.tokens);
  CHECK(a.targets == b.targets);
  CHECK(make_batch(*task, tok, 5, 4, 4, 64, Split::train).tokens !=
        a.tokens);  // next step
  CHECK(make_batch(*task, tok, 6, 3, 4, 64, Split::train).tokens !=
        a.tokens);  // other seed
  CHECK(make_batch(*task, tok, 5, 3, 4, 64, Split::heldout).tokens !=
        a.tokens);  // held out
}

TEST_CASE("a batch's targets are -100 exactly off the predictable positions") {
  const Tokenizer tok = Tokenizer::with_latin1_letters();
  for (const char* name : {"copy", "reverse", "sort", "add", "mix", "mix+accents"}) {
    CAPTURE(name);
    auto task = make_task(name, tok);
    const std::size_t T = 48;
    Batch b = make_batch(*task, tok, 11, 0, 8, T, Split::train);
    REQUIRE(b.tokens.size() == 8);
    REQUIRE(b.examples.size() >= 8);  // at least one whole example per row
    for (std::size_t row = 0; row < 8; ++row) {
      REQUIRE(b.tokens[row].size() == T);
      REQUIRE(b.targets[row].size() == T);
      // Rebuild the row's text, one token's text per position (accented
      // letters are two bytes); mark the positions its examples predict.
      std::vector<std::string> text;
      for (std::int64_t id : b.tokens[row]) text.push_back(tok.token_text(id));
      std::vector<bool> predictable(T, false);
      for (const ExampleSpan& e : b.examples) {
        if (e.row != row) continue;
        // targets[first] is predicted at the '=': the example is the line
        // containing position `first`.
        REQUIRE(text[e.first] == "=");
        std::size_t start = e.first;
        while (start > 0 && text[start - 1] != "\n") --start;
        std::string line;  // up to the last answer char
        for (std::size_t p = start; p < e.last; ++p) line += text[p];
        std::string answer;
        for (std::size_t p = e.first; p < e.last; ++p) {
          predictable[p] = true;
          answer += tok.token_text(b.targets[row][p]);
        }
        // The targets spell the answer and the end-of-text.
        CAPTURE(line);
        CHECK(answer == expected_answer(line) + "\x03");
      }
      for (std::size_t p = 0; p < T; ++p) {
        CAPTURE(p);
        if (predictable[p]) {
          // Inside: the target is the next token of the row.
          if (p + 1 < T) CHECK(b.targets[row][p] == b.tokens[row][p + 1]);
        } else {
          CHECK(b.targets[row][p] == -100);
        }
      }
    }
  }
}

TEST_CASE("make_batch says when max_len cannot hold an example") {
  Tokenizer tok;
  auto task = make_task("copy", tok);
  // The longest copy example: "C " + 16 + "=" + 16 + eos + "\n" = 37 characters.
  CHECK_THROWS_WITH_AS(make_batch(*task, tok, 0, 0, 1, 20, Split::train),
                       doctest::Contains("use --max-len 36 or more"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(make_task("cpy", tok), doctest::Contains("unknown task 'cpy'"),
                       std::invalid_argument);
  // The answers end with U+0003, so a vocabulary without it cannot hold them.
  CHECK_THROWS_WITH_AS(make_task("copy", Tokenizer({"a", "b"})),
                       doctest::Contains("task copy: the tokenizer has no end-of-text "
                                         "token U+0003"),
                       std::invalid_argument);
}

TEST_CASE("text:FILE trains on windows of the first 90% and holds out the last 10%") {
  Tokenizer tok;
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("glassllm_test_text_" + std::to_string(::getpid()) + ".txt"))
                               .string();
  {
    std::ofstream f(path);
    for (int i = 0; i < 90; ++i) f << 'a';  // tokens 0..89: training part
    for (int i = 0; i < 10; ++i) f << 'z';  // tokens 90..99: held-out part
  }
  auto task = make_task("text:" + path, tok);
  CHECK(!task->synthetic());
  Batch train = make_batch(*task, tok, 0, 0, 4, 8, Split::train);
  Batch held = make_batch(*task, tok, 0, 0, 4, 8, Split::heldout);
  for (std::size_t r = 0; r < 4; ++r) {
    CHECK(tok.decode(train.tokens[r]) == "aaaaaaaa");
    CHECK(tok.decode(held.tokens[r]) == "zzzzzzzz");
    CHECK(std::count(held.targets[r].begin(), held.targets[r].end(), -100) ==
          0);  // all count
  }
  CHECK_THROWS_WITH_AS(make_batch(*task, tok, 0, 0, 1, 16, Split::heldout),
                       doctest::Contains("held-out part has 10 tokens"),
                       std::invalid_argument);
  std::filesystem::remove(path);
}
