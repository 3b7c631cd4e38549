// tasks.h: what a GlassLM is trained on. Four synthetic tasks, generated
// from a seed, whose solutions need readable attention patterns, a mixture
// of them, and any UTF-8 text file.
//
// A synthetic example is one line of text: a task letter, a space, a
// question, '=', the answer, the end-of-text token (written <eos> below; the
// character U+0003, see tokenizer.h) and '\n'. The letter lets one model learn
// the mixture; the answer is a function of the question, so only the answer's
// characters and the <eos> that ends it can be predicted. The loss counts
// exactly those positions; a model that learned them stops its answers itself.
//
//   copy     "C abc=abc<eos>\n"   the answer repeats the question: each answer
//                                 character is found by looking back to the
//                                 character after the previous one's earlier
//                                 occurrence (the induction pattern)
//   reverse  "R abc=cba<eos>\n"   look back to the mirror position; per
//                                 character: "R ação=oãça<eos>\n"
//   sort     "S cab=abc<eos>\n"   look for the smallest character not yet
//                                 written, by code point: 0-9 < A-Z < a-z <
//                                 the Latin-1 characters (¡ ... ¿ < À ... Ü <
//                                 à ... ü)
//   add      "A 123+4567=4690<eos>\n"  multi-digit addition written as text
//   mix      one of the four, uniformly
//   copy+accents, reverse+accents, sort+accents, mix+accents
//            the same with accented letters in half the strings (below)
//   text:FILE  windows of a text file; every position counts
//
// Strings for copy/reverse/sort have 4-16 characters from 0-9, A-Z, a-z (62
// characters: no space, which would be invisible at the ends, and never '='
// or '\n', which delimit). With +accents, half of them are drawn from those
// and the 46 Latin-1 characters of Tokenizer::with_latin1_letters() instead
// (Tokenizer::kLatin1Letters: á, ç, ñ, ¿, ...), 108 characters, so that 49% of
// the strings hold at least one accented letter; the tokenizer must have the
// 46 (`glassllm train` uses that vocabulary for these tasks). Characters are code points:
// an accented letter is two bytes of text but one token. Numbers for add have 1-6 digits,
// no leading zero. The sources are glassllm/train/tasks.cpp; train.h trains on these
// batches.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "glassllm/io/tokenizer.h"
#include "glassllm/model/model.h"

namespace glassllm {

/// One synthetic example: its text and the characters that can be predicted.
struct Example {
  std::string task;  ///< "copy", "reverse", "sort" or "add"
  std::string text;  ///< e.g. "C abc=abc\x03\n"
  /// The predictable characters are text[answer_begin, answer_end): the
  /// answer and the end-of-text ("abc\x03" above: 6 .. 10). These are byte
  /// offsets into text (an accented letter is two bytes, one token).
  std::size_t answer_begin = 0, answer_end = 0;
  /// The answer without the end-of-text ("abc").
  std::string answer() const {
    return text.substr(answer_begin, answer_end - answer_begin - 1);
  }
};

/// Which data a batch comes from. Synthetic tasks draw the two splits from
/// different random streams (so they share no example in practice); a text
/// file's held-out split is its last 10%.
enum class Split { train, heldout };

/// Where one whole example sits in a batch: row `row`, target positions
/// [first, last) are its predictable ones (targets[row][first] predicts
/// text[answer_begin], at the position of the '=').
struct ExampleSpan {
  std::size_t row = 0, first = 0, last = 0;
  std::string task;
  /// The example has a character beyond ASCII (an accented letter).
  bool accented = false;
};

/// Inputs and targets, each [batch_size][max_len]: targets[b][i] is
/// tokens[b][i + 1] of the packed row when that token is predictable, else
/// -100 (ignored by the loss).
struct Batch {
  TokenBatch tokens, targets;
  std::vector<ExampleSpan> examples;  ///< empty for text
  /// Number of targets that are not -100 (what the loss averages over).
  std::size_t counted() const;
};

/// A task: a name, and rows of tokens to train on.
class Task {
 public:
  virtual ~Task() = default;
  /// "copy", "reverse", "sort", "add", "mix" or "text:FILE".
  virtual std::string name() const = 0;
  /// True for synthetic tasks (examples with predictable answers, exact-match
  /// accuracy); false for text.
  virtual bool synthetic() const { return true; }
  /// The names of the tasks its examples come from ({"copy"}; four for mix).
  virtual std::vector<std::string> parts() const { return {name()}; }
  /// One random example. Throws std::logic_error for text.
  virtual Example sample(std::mt19937_64& rng) const = 0;
  /// The longest example this task can produce, in characters (tokens).
  virtual std::size_t max_example_chars() const = 0;
  /// Fills one row: max_len + 1 tokens (the inputs and, shifted by one, the
  /// targets). The synthetic tasks' version packs whole examples and pads
  /// with '\n'; text takes a random window of its split.
  virtual void fill_row(std::mt19937_64& rng, const Tokenizer& tokenizer,
                        std::size_t max_len, Split split, std::size_t row,
                        Batch& batch) const;
};

/// The task named by `spec`: "copy", "reverse", "sort", "add", "mix" (each
/// but add also with "+accents": "mix+accents"), or "text:FILE" (the file is read and
/// encoded with `tokenizer` now; its characters outside the vocabulary become the unknown
/// token). The synthetic tasks need the tokenizer's end-of-text token U+0003. Throws
/// std::invalid_argument for another name: "task: unknown task 'cpy'; expected
/// copy, reverse, sort, add, mix or text:FILE", and std::runtime_error for a
/// file that is unreadable, not a regular file (files.h), not text (a NUL
/// byte or bytes that are not UTF-8), or mostly outside the vocabulary.
std::unique_ptr<Task> make_task(const std::string& spec, const Tokenizer& tokenizer);

/// A batch of batch_size rows of max_len tokens: a pure function of (seed,
/// step, split), so the data state of a training run is its step number.
/// Each synthetic row packs whole examples (each ends with <eos> '\n') and pads
/// the rest with '\n', which is not predictable. Throws std::invalid_argument
/// if max_len + 1 cannot hold the task's longest example, or if a text
/// split is shorter than max_len + 1 tokens.
///   Batch b = make_batch(*make_task("copy", tok), tok, 0, step, 16, 128, Split::train);
Batch make_batch(const Task& task, const Tokenizer& tokenizer, std::uint64_t seed,
                 std::size_t step, std::size_t batch_size, std::size_t max_len,
                 Split split);

}  // namespace glassllm
