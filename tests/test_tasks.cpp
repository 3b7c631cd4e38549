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

// The answer a task's question demands, computed from the text alone.
std::string expected_answer(const std::string& text) {
  const std::size_t eq = text.find('=');
  const std::string q = text.substr(2, eq - 2);
  switch (text[0]) {
    case 'C':
      return q;
    case 'R':
      return {q.rbegin(), q.rend()};
    case 'S': {
      std::string s = q;
      std::sort(s.begin(), s.end());
      return s;
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

TEST_CASE("each synthetic task's examples have the format 'L question=answer\\n'") {
  Tokenizer tok;
  for (const char* name : {"copy", "reverse", "sort", "add", "mix"}) {
    CAPTURE(name);
    auto task = make_task(name, tok);
    std::mt19937_64 rng(7);
    for (int i = 0; i < 200; ++i) {
      Example e = task->sample(rng);
      CAPTURE(e.text);
      REQUIRE(e.text.size() <= task->max_example_chars());
      CHECK(e.text[1] == ' ');
      CHECK(e.text.back() == '\n');
      CHECK(std::count(e.text.begin(), e.text.end(), '=') == 1);
      CHECK(std::count(e.text.begin(), e.text.end(), '\n') == 1);
      // The predictable part starts right after '=' and runs to the end.
      CHECK(e.answer_begin == e.text.find('=') + 1);
      CHECK(e.answer_end == e.text.size());
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
  // An add example built by hand: "A 123+4567=4690\n" has its answer at 11 .. 16.
  Example e;
  e.text = "A 123+4567=4690\n";
  e.answer_begin = 11;
  e.answer_end = 16;
  CHECK(e.answer() == "4690");
  CHECK(expected_answer(e.text) == "4690");  // 123 + 4567, by the test's own arithmetic
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
  Tokenizer tok;
  for (const char* name : {"copy", "reverse", "sort", "add", "mix"}) {
    CAPTURE(name);
    auto task = make_task(name, tok);
    const std::size_t T = 48;
    Batch b = make_batch(*task, tok, 11, 0, 8, T, Split::train);
    REQUIRE(b.tokens.size() == 8);
    REQUIRE(b.examples.size() >= 8);  // at least one whole example per row
    for (std::size_t row = 0; row < 8; ++row) {
      REQUIRE(b.tokens[row].size() == T);
      REQUIRE(b.targets[row].size() == T);
      // Rebuild the row's text; mark the positions its examples predict.
      const std::string text = tok.decode(b.tokens[row]);
      std::vector<bool> predictable(T, false);
      for (const ExampleSpan& e : b.examples) {
        if (e.row != row) continue;
        // targets[first] is predicted at the '=': the example is the line
        // containing position `first`.
        REQUIRE(text[e.first] == '=');
        const std::size_t start = text.rfind('\n', e.first) == std::string::npos
                                      ? 0
                                      : text.rfind('\n', e.first) + 1;
        const std::string line =
            text.substr(start, e.last - start);  // up to the last answer char
        std::string answer;
        for (std::size_t p = e.first; p < e.last; ++p) {
          predictable[p] = true;
          answer += tok.token_text(b.targets[row][p]);
        }
        // The targets spell the answer and the '\n'.
        CAPTURE(line);
        CHECK(answer == expected_answer(line) + "\n");
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
  // The longest copy example: "C " + 16 + "=" + 16 + "\n" = 36 characters.
  CHECK_THROWS_WITH_AS(make_batch(*task, tok, 0, 0, 1, 20, Split::train),
                       doctest::Contains("use --max-len 35 or more"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(make_task("cpy", tok), doctest::Contains("unknown task 'cpy'"),
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
