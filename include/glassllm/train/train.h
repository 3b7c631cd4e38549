// train.h: the training loop, held-out evaluation, and the training
// checkpoint that lets a run stop and continue exactly where it was.
//
// One step of the loop (train() below):
//   batch = make_batch(task, tokenizer, seed, step, batch_size, max_len, train)
//   optimizer.lr = lr_at(step, ...)
//   train_step(model, optimizer, batch, clip):
//     loss = model.loss(batch.tokens, batch.targets)   the full forward, no cache
//     loss.backward()
//     grad_norm = clip_grad_norm(params, clip)
//     optimizer.step(); optimizer.zero_grad()
//
// Training always runs the full forward without a K/V cache: it needs the
// logits at every position of a window at once (all of them are predictions
// with targets), and the full forward computes them in one batched pass with
// large matrix products. The cache exists to avoid recomputing the past one
// new token at a time, which training never does; and it stores detached
// copies, so no gradient could flow through it anyway.
//
// A run lives in a folder OUT:
//   model.safetensors, config.json, glassllm_tokenizer.json   a normal checkpoint
//                                    (glassllm generate OUT and eval OUT work)
//   optimizer.safetensors            the optimizer's state (optim.h)
//   trainer_state.json               step, options, best held-out loss
//   metrics.jsonl                    one JSON object per logged step and per evaluation
// Saving writes a complete OUT.saving/, renames OUT to OUT.previous, renames
// OUT.saving to OUT and removes OUT.previous, so a crash at any moment leaves
// the last good checkpoint in OUT or OUT.previous; resuming recovers it.
// Every folder train makes holds a mark, .glassllm-run, and train renames or
// deletes only folders with the mark (or a trainer_state.json): a user's own
// folder called OUT.saving or OUT.previous is refused, never removed. While
// a run trains it holds an exclusive lock (flock) on the file OUT.lock,
// beside OUT, so a second training on the same folder stops at once.
// The data state is only the step number (make_batch is a pure function of
// it), so a resumed run computes the same losses, bit for bit, as one that
// never stopped (with the same BLAS thread count).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "glassllm/io/tokenizer.h"
#include "glassllm/model/model.h"
#include "glassllm/train/optim.h"
#include "glassllm/train/tasks.h"

namespace glassllm {

/// The model `train` builds unless told otherwise: the design's widths
/// (d_model 128, 4 query heads sharing 2 K/V heads) in 2 blocks, the fewest
/// that can learn copy (one to note each character's predecessor, one to look
/// it up: the induction pattern), a d_ff of 256 and 40-position rows, which
/// hold the longest synthetic example (37 characters). With TrainOptions'
/// defaults `glassllm train --task copy` reaches 95% held-out exact match in
/// about a minute on two shared cores (a lesson's slot; measured by
/// `scripts/bench_lesson.sh`). Larger runs pass their sizes as flags.
inline Config lesson_model() {
  Config c;
  c.n_layers = 2;
  c.d_ff = 256;
  c.max_len = 40;
  return c;
}

/// Everything a training run is told. The defaults are the command line's:
/// a lesson-length run (see lesson_model).
struct TrainOptions {
  std::string task = "copy";  ///< see make_task: copy, reverse, sort, add, mix, text:FILE
  std::string out;            ///< the run's folder
  std::size_t steps = 300;    ///< total optimizer steps (the schedule ends here)
  std::size_t batch_size = 32;
  double lr = 3e-3;                 ///< peak learning rate, reached after warm-up
  std::size_t warmup = 30;          ///< linear warm-up steps
  double min_lr_ratio = 0.1;        ///< the cosine ends at lr * min_lr_ratio
  double weight_decay = 0.1;        ///< AdamW: decoupled, matrices only; SGD: L2
  double momentum = 0.9;            ///< SGD only
  double clip = 1.0;                ///< max global gradient norm (<= 0: no clipping)
  std::string optimizer = "adamw";  ///< "adamw" or "sgd"
  std::uint64_t seed = 0;           ///< model initialisation and data
  DType dtype = DType::float32;
  std::size_t log_every =
      10;  ///< a metrics line (and a plain progress line) every N steps
  std::size_t eval_every =
      100;  ///< held-out evaluation every N steps (0: only at the end)
  std::size_t eval_batches = 4;  ///< held-out batches per evaluation
  /// Held-out questions printed with the model's answers at each evaluation,
  /// per task of the mixture (0: none). Printing only; not saved.
  std::size_t samples_per_task = 2;
  std::size_t save_every = 500;  ///< checkpoint every N steps (0: only at the end)
  /// Stop after this many steps have been done in total, saving, as an
  /// interruption would (0: run to `steps`). For tests and time-boxed runs.
  std::size_t stop_after = 0;
  /// BLAS threads per matrix product (0: leave the current setting). Saved
  /// with the run: with the system backend the thread count can change the
  /// order of additions inside products, so a resume with another count may
  /// differ in the last digits (openblas and builtin: never).
  int threads = 0;
  /// A checkpoint folder to start the weights from instead of a random
  /// initialisation (fine-tuning; "" for none). The model sizes must be its
  /// own; the embedding and lm_head rows are matched by token text, so tokens
  /// it lacks (e.g. an end-of-text token added since) start at random.
  std::string init_from;
  Config model = lesson_model();  ///< sizes; vocab_size 0: the tokenizer's
};

/// What one train_step did.
struct StepResult {
  double loss = 0;       ///< the batch's mean cross-entropy, before the update
  double grad_norm = 0;  ///< the global gradient norm before clipping (0 if not reached)
  /// False when the loss or the gradient norm was not finite: the weights
  /// were left as they were.
  bool updated = false;
};

/// One training step on `batch`, the one `glassllm train` takes each time:
///   loss = model.loss(batch.tokens, batch.targets)   mean cross-entropy, full forward
///   loss.backward()                                  gradients of every weight
///   grad_norm = clip_grad_norm(weights, clip)        (clip <= 0: only measured)
///   optimizer.step(); optimizer.zero_grad()          one update, in place
/// at the learning rate the caller set in optimizer.lr. `optimizer` must hold
/// the model's weights. When the loss or the norm is not finite it stops
/// before the update (no backward through a non-finite loss), so the weights
/// stay as they were; either way the gradients are forgotten on return.
///   StepResult r = train_step(model, optimizer, batch, /*clip=*/1.0);
StepResult train_step(GlassLM& model, Optimizer& optimizer, const Batch& batch,
                      double clip);

/// How a run ended.
enum class TrainStatus {
  finished,     ///< all steps done, saved
  interrupted,  ///< SIGINT/SIGTERM (or stop_after): the current step finished, saved
  diverged,  ///< a non-finite loss or gradient norm: stopped before the update, not saved
};

struct TrainResult {
  TrainStatus status = TrainStatus::finished;
  std::size_t step = 0;        ///< steps done when it stopped
  std::size_t saved_step = 0;  ///< the step OUT holds
  int signal = 0;        ///< the signal that interrupted it (0: none, or stop_after)
  double last_loss = 0;  ///< the last finite training loss
};

/// Trains as `options` say, printing progress to `out`: with terminal = true
/// one line rewritten in place ("step 120/2000 [====>     ] loss 1.234 |
/// 9,800 tok/s | ETA 3m12s"), otherwise a plain line every log_every steps;
/// evaluations are always plain lines. SIGINT and SIGTERM are caught while it
/// runs: the current step finishes, the run is saved, and it returns
/// `interrupted`.
///
/// OUT is normalised first (run_folder). The memory a step needs
/// (budget.h) is checked before anything is made (TooLarge).
/// Without `resume`, OUT must not exist or be an empty folder; an OUT holding
/// a run throws "OUT: a training run exists; pass --resume to continue it or
/// choose another --out". With `resume`, a missing OUT is recovered from
/// OUT.previous, a leftover OUT.saving is deleted, and the run continues from
/// the saved step; the task, seed, dtype, optimizer and model sizes must equal
/// the saved ones (std::invalid_argument naming the first that differs).
/// Other options (steps, lr, ...) may change.
TrainResult train(const TrainOptions& options, bool resume, std::ostream& out,
                  bool terminal = false);

/// The options saved in OUT/trainer_state.json, to resume with: the command
/// line starts from these and applies only the flags given. Reads only (call
/// recover_run_folder first to find a run an interrupted save left in
/// OUT.previous). Throws std::runtime_error if OUT holds no run.
TrainOptions saved_options(const std::string& out);

/// Held-out loss and accuracy.
struct EvalResult {
  double loss = 0;          ///< mean cross-entropy over the counted targets
  std::size_t targets = 0;  ///< targets counted
  /// Synthetic tasks: exact-match accuracy over `examples` whole examples,
  /// overall and per task ("copy" -> 0.93); absent for text.
  std::optional<double> accuracy;
  std::size_t examples = 0;
  std::map<std::string, double> task_accuracy;
  /// The examples of each task split by their characters: ASCII only, or
  /// with at least one accented letter (beyond ASCII): (right, total).
  /// A task whose examples have none of a kind (add) has no entry there.
  std::map<std::string, std::pair<std::size_t, std::size_t>> ascii_right, accented_right;
  /// "loss 0.1234 | accuracy 93.1% (copy 93.1%)"
  std::string summary() const;
  /// One line per kind that occurred, for comparing them:
  /// "ASCII only: copy 100.0% of 88\naccented: copy 98.8% of 80\n"; empty for text.
  std::string split_summary() const;
};

/// Evaluates on held-out batches 0 .. batches-1 of `seed` (the same examples
/// every time, so evaluations along a run compare). One teacher-forced
/// forward per batch, no cache, under no_grad. An example counts as correct
/// iff the argmax at every one of its predictable positions is the target.
/// That equals greedy generation being right: greedy picks the argmax, and
/// while every pick is right it feeds back exactly the prefix the teacher
/// forced, so the two see the same inputs all the way.
EvalResult evaluate(const GlassLM& model, const Task& task, const Tokenizer& tokenizer,
                    std::uint64_t seed, std::size_t batches, std::size_t batch_size);

/// One held-out question answered by the model, for people to read.
struct SamplePrediction {
  std::string task;      ///< "copy"
  std::string prompt;    ///< "C abc="
  std::string answer;    ///< what greedy generation wrote, without the end-of-text
  std::string expected;  ///< the right answer
  bool ended = false;    ///< the model wrote the end-of-text token
  bool right = false;    ///< answer == expected and it ended there
  /// "C abc= -> abc   right", "R abc= -> cbb   wrong, expected cba" ("..."
  /// after an answer that did not end).
  std::string line() const;
};

/// Up to `per_task` questions of each of the task's parts from held-out batch
/// 0 (among those evaluate() scores), each answered by greedy generation that
/// stops at the end-of-text token. Empty for text tasks.
std::vector<SamplePrediction> sample_predictions(const GlassLM& model, const Task& task,
                                                 const Tokenizer& tokenizer,
                                                 std::uint64_t seed,
                                                 std::size_t per_task);

/// What resuming does first: if OUT is missing and OUT.previous exists,
/// renames it back to OUT; removes a leftover OUT.saving (an unfinished save)
/// and a leftover OUT.previous (a finished save whose cleanup was cut short).
/// Only folders train made (marked) are renamed or removed.
void recover_run_folder(const std::string& out);

/// A run folder's path as train uses it: "run/" and "run//" are "run", and
/// ".", ".." or a path ending in them become the absolute folder they name,
/// so that OUT.saving, OUT.previous and OUT.lock are siblings of OUT. Throws
/// std::invalid_argument for "" and "/".
std::string run_folder(const std::string& out);

}  // namespace glassllm
