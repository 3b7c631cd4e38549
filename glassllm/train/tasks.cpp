// tasks.cpp: the synthetic task generators, the text task, and make_batch
// (see tasks.h for the formats). Randomness comes from std::mt19937_64 and
// the standard distributions, so a seed gives the same data on every machine
// with the same standard library (libstdc++ here).
#include "glassllm/train/tasks.h"

#include <algorithm>
#include <stdexcept>

#include "glassllm/io/budget.h"
#include "glassllm/io/files.h"

namespace glassllm {

namespace {

// One character of a question: a code point in UTF-8 (1 or 2 bytes here).
using Chars = std::vector<std::string>;

Chars split_chars(std::string_view text) {
  Chars chars;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t len = utf8_length(text, i);
    chars.emplace_back(text.substr(i, len));
    i += len;
  }
  return chars;
}

std::string join(const Chars& chars) {
  std::string s;
  for (const std::string& c : chars) s += c;
  return s;
}

// The ASCII alphabet, and the same with the Latin-1 letters of the default
// vocabulary (tokenizer.h) added: 62 and 108 characters.
const Chars kAscii =
    split_chars("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz");
const Chars kWithLatin1 = [] {
  Chars all = kAscii;
  for (std::string& c : split_chars(Tokenizer::kLatin1Letters)) all.push_back(c);
  return all;
}();
constexpr std::size_t kMinChars = 4, kMaxChars = 16, kMaxDigits = 6;

std::size_t uniform(std::mt19937_64& rng, std::size_t lo, std::size_t hi) {  // [lo, hi]
  return std::uniform_int_distribution<std::size_t>(lo, hi)(rng);
}

// With accents (a task named "...+accents"), half the strings from the
// ASCII alphabet, half from the alphabet with the Latin-1 letters (so a
// model keeps the ASCII strings it always saw, and sees accented letters in
// every position and next to every other letter). Without, ASCII strings
// only, drawn exactly as before the letters were added.
Chars random_string(std::mt19937_64& rng, bool latin1) {
  const Chars& alphabet = latin1 && uniform(rng, 0, 1) == 1 ? kWithLatin1 : kAscii;
  Chars s(uniform(rng, kMinChars, kMaxChars));
  for (std::string& c : s) c = alphabet[uniform(rng, 0, alphabet.size() - 1)];
  return s;
}

// "L question=answer<eos>\n" with the answer and the end-of-text predictable
// (the '\n' after it only keeps one example per line when the text is shown).
Example make_example(const std::string& task, char letter, const std::string& question,
                     const std::string& answer) {
  Example e;
  e.task = task;
  e.text = std::string(1, letter) + " " + question + "=" + answer +
           Tokenizer::kEndOfText + "\n";
  e.answer_begin = e.text.size() - answer.size() - 2;
  e.answer_end = e.text.size() - 1;
  return e;
}

// A string task: a random string, and a function giving its answer.
class StringTask : public Task {
 public:
  StringTask(std::string name, char letter, Chars (*answer)(const Chars&), bool latin1)
      : name_(std::move(name)), letter_(letter), answer_(answer), latin1_(latin1) {}
  std::string name() const override { return name_; }
  Example sample(std::mt19937_64& rng) const override {
    Chars s = random_string(rng, latin1_);
    return make_example(name_, letter_, join(s), join(answer_(s)));
  }
  // "L " + 16 + "=" + 16 + eos + "\n"
  std::size_t max_example_chars() const override {
    return 2 + kMaxChars + 1 + kMaxChars + 1 + 1;
  }

 private:
  std::string name_;
  char letter_;
  Chars (*answer_)(const Chars&);
  bool latin1_;  // draw accented strings too
};

Chars copy_answer(const Chars& s) {
  return s;
}
// Per character (code point), so "ação" reverses to "oãça".
Chars reverse_answer(const Chars& s) {
  return {s.rbegin(), s.rend()};
}
// By code point: digits < upper case < lower case < the Latin-1 characters
// (whose upper case, from U+00C0, comes before their lower case, from
// U+00E0). Comparing the UTF-8 bytes gives exactly that order: UTF-8 was
// designed so that byte order is code point order.
Chars sort_answer(const Chars& s) {
  Chars t = s;
  std::sort(t.begin(), t.end());
  return t;
}

class AddTask : public Task {
 public:
  std::string name() const override { return "add"; }
  Example sample(std::mt19937_64& rng) const override {
    std::uint64_t a = number(rng), b = number(rng);
    return make_example("add", 'A', std::to_string(a) + "+" + std::to_string(b),
                        std::to_string(a + b));
  }
  // "A " + 6 + "+" + 6 + "=" + 7 + eos + "\n"
  std::size_t max_example_chars() const override { return 2 + 6 + 1 + 6 + 1 + 7 + 1 + 1; }

 private:
  // 1 to 6 digits (the count uniform first, so short numbers are as common as
  // long ones), no leading zero.
  static std::uint64_t number(std::mt19937_64& rng) {
    std::size_t digits = uniform(rng, 1, kMaxDigits);
    std::uint64_t lo = digits == 1 ? 0 : 1, hi = 9;
    for (std::size_t i = 1; i < digits; ++i) lo *= 10, hi = hi * 10 + 9;
    return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng);
  }
};

std::vector<std::unique_ptr<Task>> four_tasks(bool latin1) {
  std::vector<std::unique_ptr<Task>> t;
  t.push_back(std::make_unique<StringTask>("copy", 'C', copy_answer, latin1));
  t.push_back(std::make_unique<StringTask>("reverse", 'R', reverse_answer, latin1));
  t.push_back(std::make_unique<StringTask>("sort", 'S', sort_answer, latin1));
  t.push_back(std::make_unique<AddTask>());
  return t;
}

class MixTask : public Task {
 public:
  explicit MixTask(bool latin1) : tasks_(four_tasks(latin1)), latin1_(latin1) {}
  std::string name() const override { return latin1_ ? "mix+accents" : "mix"; }
  std::vector<std::string> parts() const override {
    std::vector<std::string> p;
    for (const auto& t : tasks_) p.push_back(t->name());
    return p;
  }
  Example sample(std::mt19937_64& rng) const override {
    return tasks_[uniform(rng, 0, tasks_.size() - 1)]->sample(rng);
  }
  std::size_t max_example_chars() const override {
    std::size_t m = 0;
    for (const auto& t : tasks_) m = std::max(m, t->max_example_chars());
    return m;
  }

 private:
  std::vector<std::unique_ptr<Task>> tasks_;
  bool latin1_;
};

// A text file's content, refused when it is not text: a NUL byte or bytes
// that are not UTF-8 mean a binary file (an image, a checkpoint), and a
// file whose characters are mostly outside the vocabulary would train on
// the unknown token alone.
std::string read_text_file(const std::string& path, const Tokenizer& tokenizer) {
  // Each character becomes an 8-byte id, and batches copy windows of them.
  const std::uint64_t limit = machine_memory_bytes() / 16;
  std::string text = read_regular_file(path, limit, "a text file on this machine");
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t len = utf8_length(text, i);
    if (len == 0 || text[i] == '\0')
      throw std::runtime_error(
          "task text:" + path + ": not a text file (" +
          (len == 0 ? "a byte that is not UTF-8" : std::string("a NUL byte")) +
          " at offset " + std::to_string(i) + "); expected UTF-8 text");
    i += len;
  }
  const std::size_t unknown = tokenizer.count_unknown(text);
  std::size_t characters = 0;
  for (std::size_t i = 0; i < text.size(); i += utf8_length(text, i)) ++characters;
  if (unknown * 2 > characters)
    throw std::runtime_error("task text:" + path + ": " + std::to_string(unknown) +
                             " of its " + std::to_string(characters) +
                             " characters are not in the tokenizer's vocabulary; "
                             "expected text mostly in its alphabet");
  return text;
}

// A text file: train on its first 90%, hold out the last 10%.
class TextTask : public Task {
 public:
  TextTask(std::string path, const Tokenizer& tokenizer) : path_(std::move(path)) {
    tokens_ = tokenizer.encode(read_text_file(path_, tokenizer));
    split_ = tokens_.size() - tokens_.size() / 10;
  }
  std::string name() const override { return "text:" + path_; }
  bool synthetic() const override { return false; }
  Example sample(std::mt19937_64&) const override {
    throw std::logic_error("task " + name() +
                           ": a text task has no examples, only windows");
  }
  std::size_t max_example_chars() const override { return 0; }
  void fill_row(std::mt19937_64& rng, const Tokenizer&, std::size_t max_len, Split split,
                std::size_t row, Batch& batch) const override {
    const std::size_t lo = split == Split::train ? 0 : split_;
    const std::size_t hi = split == Split::train ? split_ : tokens_.size();
    if (hi - lo < max_len + 1)
      throw std::invalid_argument(
          "task " + name() + ": the " +
          (split == Split::train ? "training" : "held-out") + " part has " +
          std::to_string(hi - lo) + " tokens, fewer than max_len + 1 = " +
          std::to_string(max_len + 1) + "; use a longer file or a smaller --max-len");
    const std::size_t start = uniform(rng, lo, hi - (max_len + 1));
    auto first = tokens_.begin() + std::ptrdiff_t(start);
    batch.tokens[row].assign(first, first + std::ptrdiff_t(max_len));
    batch.targets[row].assign(first + 1,
                              first + 1 + std::ptrdiff_t(max_len));  // every position
  }

 private:
  std::string path_;
  std::vector<std::int64_t> tokens_;
  std::size_t split_;  // first held-out token
};

// SplitMix64's finaliser: spreads (seed, split, step, row) over 64 bits so
// that neighbouring steps and rows get unrelated generator seeds.
std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

std::size_t Batch::counted() const {
  std::size_t n = 0;
  for (const auto& row : targets)
    for (std::int64_t t : row) n += t != -100;
  return n;
}

void Task::fill_row(std::mt19937_64& rng, const Tokenizer& tokenizer, std::size_t max_len,
                    Split, std::size_t row, Batch& batch) const {
  // Whole examples while they fit in max_len + 1 tokens, then '\n's. A token
  // is a character (code point), which for accented letters is two bytes, so
  // the row is counted in tokens, not in bytes of text.
  std::vector<std::int64_t> ids;
  std::vector<Example> placed;
  std::vector<std::size_t> offsets, answer_begins, answer_ends;  // in tokens
  for (;;) {
    Example e = sample(rng);
    const std::vector<std::int64_t> e_ids = tokenizer.encode(e.text);
    if (ids.size() + e_ids.size() > max_len + 1) break;
    offsets.push_back(ids.size());
    answer_begins.push_back(tokenizer.encode(e.text.substr(0, e.answer_begin)).size());
    answer_ends.push_back(tokenizer.encode(e.text.substr(0, e.answer_end)).size());
    ids.insert(ids.end(), e_ids.begin(), e_ids.end());
    placed.push_back(std::move(e));
  }
  ids.resize(max_len + 1, tokenizer.encode("\n").front());
  std::vector<std::int64_t>& inputs = batch.tokens[row];
  std::vector<std::int64_t>& targets = batch.targets[row];
  inputs.assign(ids.begin(), ids.end() - 1);
  targets.assign(max_len, -100);
  for (std::size_t k = 0; k < placed.size(); ++k) {
    // Token c is predicted at position c - 1.
    const std::size_t first = offsets[k] + answer_begins[k] - 1;
    const std::size_t last = offsets[k] + answer_ends[k] - 1;
    for (std::size_t i = first; i < last; ++i) targets[i] = ids[i + 1];
    const std::string& t = placed[k].text;
    const bool accented = std::any_of(t.begin(), t.end(), [](char c) {
      return static_cast<unsigned char>(c) >= 0x80;  // a byte of a multi-byte character
    });
    batch.examples.push_back({row, first, last, placed[k].task, accented});
  }
}

std::unique_ptr<Task> make_task(const std::string& spec, const Tokenizer& tokenizer) {
  if (spec.rfind("text:", 0) == 0) {
    if (spec.size() == 5)
      throw std::invalid_argument("task: text: needs a file, e.g. text:book.txt");
    return std::make_unique<TextTask>(spec.substr(5), tokenizer);
  }
  // The synthetic answers end with the end-of-text character, which must be
  // a token of its own (the default vocabulary's).
  const std::optional<std::int64_t> eos = tokenizer.eos_id();
  if (!eos || tokenizer.token_text(*eos) != std::string(1, Tokenizer::kEndOfText))
    throw std::invalid_argument("task " + spec +
                                ": the tokenizer has no end-of-text token U+0003, which "
                                "ends every answer; use the default tokenizer");
  // "+accents": strings with the Latin-1 letters too, which the vocabulary
  // must have (a vocabulary saved before they were added lacks them).
  const std::string kAccents = "+accents";
  const bool latin1 =
      spec.size() > kAccents.size() && spec.ends_with(kAccents) && spec != "add+accents";
  const std::string name = latin1 ? spec.substr(0, spec.size() - kAccents.size()) : spec;
  if (latin1 && tokenizer.count_unknown(Tokenizer::kLatin1Letters) != 0)
    throw std::invalid_argument("task " + spec +
                                ": the tokenizer lacks the Latin-1 letters; use "
                                "Tokenizer::with_latin1_letters() (glassllm train does)");
  if (name == "mix") return std::make_unique<MixTask>(latin1);
  for (auto& t : four_tasks(latin1))
    if (t->name() == name) return std::move(t);
  throw std::invalid_argument("task: unknown task '" + spec +
                              "'; expected copy, reverse, sort, add, mix or text:FILE "
                              "(copy, reverse, sort and mix "
                              "take +accents)");
}

Batch make_batch(const Task& task, const Tokenizer& tokenizer, std::uint64_t seed,
                 std::size_t step, std::size_t batch_size, std::size_t max_len,
                 Split split) {
  if (task.synthetic() && task.max_example_chars() > max_len + 1)
    throw std::invalid_argument(
        "task " + task.name() + ": examples have up to " +
        std::to_string(task.max_example_chars()) +
        " characters but a row holds max_len + 1 = " + std::to_string(max_len + 1) +
        "; use --max-len " + std::to_string(task.max_example_chars() - 1) + " or more");
  Batch batch;
  batch.tokens.resize(batch_size);
  batch.targets.resize(batch_size);
  for (std::size_t row = 0; row < batch_size; ++row) {
    // Each row has its own generator, so a row does not depend on how many
    // random numbers the rows before it used.
    std::uint64_t s =
        mix64(mix64(mix64(mix64(seed) ^ std::uint64_t(split)) ^ step) ^ row);
    std::mt19937_64 rng(s);
    task.fill_row(rng, tokenizer, max_len, split, row, batch);
  }
  return batch;
}

}  // namespace glassllm
