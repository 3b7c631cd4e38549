// train.cpp: `glassllm train` and `glassllm eval`. The loop itself is
// train.h's; this file turns flags into TrainOptions and results into exit
// statuses.
//
// Exit statuses of train: 0 when every step is done; 130 after Ctrl-C
// (SIGINT) and 143 after SIGTERM, the shell's 128 + signal, even though the
// run was saved cleanly: a script running `glassllm train ... && next` must
// not go on as if training had finished; 1 for a non-finite loss; 2 to 5
// for errors, as for every command (main.cpp).
#include "glassllm/train/train.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/cli.h"
#include "cli/options.h"
#include "glassllm/fast/blas.h"
#include "glassllm/io/budget.h"
#include "glassllm/io/checkpoint.h"
#include "glassllm/io/files.h"

namespace glassllm::cli {

namespace {

// `train`: every option optional, so that --resume can tell the flags given
// (which override the run's saved options) from the ones left out.
struct TrainArgs {
  std::string out;
  std::optional<std::string> task, optimizer, dtype, init_from;
  std::optional<std::size_t> steps, batch_size, warmup, log_every, eval_every,
      eval_batches, save_every;
  std::optional<double> lr, min_lr_ratio, weight_decay, momentum, clip;
  std::optional<std::uint64_t> seed;
  std::optional<std::size_t> sizes[std::size(kSizeFlags)];  // one per size flag
  std::optional<int> threads;
  bool resume = false;
};

struct EvalArgs {
  std::string dir;
  std::optional<std::string> task;  // default: the run's (trainer_state.json)
  std::optional<std::uint64_t> seed;
  std::size_t batches = 8, batch_size = 16;
  std::optional<int> threads;
  bool allow_nonfinite = false;
};

// Text for an override message: 0.001, 16, "adamw".
template <class T>
std::string text_of(const T& v) {
  if constexpr (std::is_same_v<T, std::string>) {
    return v;
  } else if constexpr (std::is_floating_point_v<T>) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
  } else {
    return std::to_string(v);
  }
}

// The options a run starts from: with --resume the run's own (read from OUT
// or, after a save cut short, OUT.previous; train() itself recovers the
// folder, under its lock), otherwise the defaults, with the sizes of the
// checkpoint given by --init-from.
TrainOptions starting_options(const TrainArgs& a, const std::string& out) {
  namespace fs = std::filesystem;
  const std::string state = "trainer_state.json";
  const bool in_out = fs::exists(fs::path(out) / state);
  const bool in_previous = fs::exists(fs::path(out + ".previous") / state);
  if (a.resume && a.init_from)
    throw std::invalid_argument(
        "--resume continues the run's own weights; --init-from starts a new run from "
        "a checkpoint; give one of them");
  TrainOptions o;
  if (a.resume) {
    if (!in_out && !in_previous)
      throw std::invalid_argument("--resume: " + out +
                                  " holds no training run; start one without --resume");
    o = saved_options(in_out ? out : out + ".previous");
  } else if (!a.task) {
    throw std::invalid_argument(
        "train: --task is required (copy, reverse, sort, add, mix or text:FILE)");
  }
  o.out = out;
  if (a.init_from && !a.resume) {
    // The sizes of the checkpoint fine-tuned are the defaults; flags override
    // (and must then agree with it).
    const Config c = load_checkpoint(*a.init_from).model.config();
    for (const SizeFlag& size : kSizeFlags) o.model.*size.field = c.*size.field;
  }
  return o;
}

// The flags given on the command line, over the starting options. Options a
// run may change on resume are reported when changed; the others (task,
// seed, dtype, optimizer, sizes) must equal the run's, and train() refuses
// them with their own message.
void apply_flags(const TrainArgs& a, TrainOptions& o) {
  auto set = [&](const char* flag, auto& field, const auto& given,
                 bool may_change = true) {
    if (!given) return;
    if (a.resume && may_change && *given != field)
      std::cerr << "glassllm train: " << flag << " " << printable(text_of(*given))
                << " overrides the run's " << printable(text_of(field)) << "\n";
    field = *given;
  };
  set("--init-from", o.init_from, a.init_from, false);
  set("--task", o.task, a.task, false);
  set("--optimizer", o.optimizer, a.optimizer, false);
  if (a.dtype) o.dtype = parse_dtype(*a.dtype);
  set("--steps", o.steps, a.steps);
  set("--batch-size", o.batch_size, a.batch_size);
  set("--warmup", o.warmup, a.warmup);
  set("--log-every", o.log_every, a.log_every);
  set("--eval-every", o.eval_every, a.eval_every);
  set("--eval-batches", o.eval_batches, a.eval_batches);
  set("--save-every", o.save_every, a.save_every);
  set("--lr", o.lr, a.lr);
  set("--min-lr-ratio", o.min_lr_ratio, a.min_lr_ratio);
  set("--weight-decay", o.weight_decay, a.weight_decay);
  set("--momentum", o.momentum, a.momentum);
  set("--clip", o.clip, a.clip);
  set("--seed", o.seed, a.seed, false);
  for (std::size_t i = 0; i < std::size(kSizeFlags); ++i)
    set(kSizeFlags[i].flag, o.model.*kSizeFlags[i].field, a.sizes[i], false);
}

// The BLAS thread count the run records. With the system backend the thread
// count can change the last digits of products (openblas and builtin: never,
// test_threads.cpp): a new run records the one it uses (GLASSLLM_THREADS,
// else 1, unless --threads), a resumed run uses the one it was trained with.
void choose_threads(const TrainArgs& a, TrainOptions& o) {
  if (a.threads && a.resume && o.threads > 0 && *a.threads != o.threads)
    std::cerr << "glassllm train: --threads " << *a.threads << " overrides the run's "
              << o.threads << "; losses may differ in the last digits from a run that "
              << "never stopped\n";
  if (a.threads) {
    o.threads = *a.threads;
  } else if (!a.resume || o.threads == 0) {
    // One BLAS thread unless GLASSLLM_THREADS says otherwise: the default
    // (lesson-length) model's matrix products are small, and on a shared
    // machine a second thread that waits for a core costs more than it saves
    // (docs/bench-notes.md). Larger runs pass --threads.
    try {
      o.threads = std::getenv("GLASSLLM_THREADS") ? blas_info().threads : 1;
    } catch (const std::runtime_error&) {
      o.threads = 0;  // no OpenBLAS: nothing to record
    }
  }
}

int train(const TrainArgs& a) {
  TrainOptions o = starting_options(a, run_folder(a.out));
  apply_flags(a, o);
  choose_threads(a, o);

  const bool terminal = ::isatty(STDOUT_FILENO) == 1;
  TrainResult r = glassllm::train(o, a.resume, std::cout, terminal);
  switch (r.status) {
    case TrainStatus::finished:
      return 0;
    case TrainStatus::interrupted:
      return r.signal ? 128 + r.signal : 0;
    case TrainStatus::diverged:
      return 1;
  }
  return 1;
}

int eval(const EvalArgs& a) {
  if (a.threads) set_blas_threads(*a.threads);
  Checkpoint ckpt = load_model("eval", a.dir, std::nullopt, a.allow_nonfinite);
  check_fits_in_memory(
      "evaluating batches of " + std::to_string(a.batch_size) + " x " +
          std::to_string(ckpt.model.config().max_len) + " tokens",
      training_step_bytes(ckpt.model.config(), ckpt.model.dtype(), a.batch_size),
      "use a smaller --batch-size");
  if (!ckpt.tokenizer)
    throw std::invalid_argument("eval: " + a.dir +
                                " has no glassllm_tokenizer.json; tasks are text");
  // The run's task and seed by default, so eval sees the held-out data that
  // training evaluated on.
  std::optional<TrainOptions> run;
  if (std::filesystem::exists(std::filesystem::path(a.dir) / "trainer_state.json"))
    run = saved_options(a.dir);
  std::string task_name = a.task ? *a.task : run ? run->task : "";
  if (task_name.empty())
    throw std::invalid_argument("eval: " + a.dir + " is not a training run; pass --task");
  std::uint64_t seed = a.seed ? *a.seed : run ? run->seed : 0;
  std::unique_ptr<Task> task = make_task(task_name, *ckpt.tokenizer);
  EvalResult r =
      evaluate(ckpt.model, *task, *ckpt.tokenizer, seed, a.batches, a.batch_size);
  std::cout << task->name() << ", held-out, " << r.targets << " targets";
  if (r.accuracy) std::cout << ", " << r.examples << " examples";
  std::cout << ": " << r.summary() << "\n";
  // The tasks' strings are half ASCII, half with accented letters: how each
  // kind fares (a folder trained before the letters has ASCII only).
  if (!r.accented_right.empty()) std::cout << r.split_summary();
  return 0;
}

}  // namespace

Command register_train(CLI::App& app) {
  auto a = std::make_shared<TrainArgs>();
  CLI::App* sub = app.add_subcommand(
      "train",
      "Train a model on a synthetic task or a text file, with checkpoints, held-out "
      "evaluation (printing sample answers) and --resume. The defaults are a "
      "lesson-length run: --task copy reaches 95% in about a minute. Ctrl-C saves and "
      "exits (status 130).");
  sub->add_option("--task", a->task,
                  "copy, reverse, sort, add, mix or text:FILE; copy+accents, "
                  "reverse+accents, sort+accents, mix+accents: half the strings "
                  "with accented letters");
  sub->add_option("--out", a->out,
                  "The run's folder (a checkpoint plus optimizer state and metrics)")
      ->required();
  sub->add_flag("--resume", a->resume,
                "Continue the run in --out; flags given override its saved options");
  sub->add_option(
      "--init-from", a->init_from,
      "Start from this checkpoint's weights instead of random ones "
      "(fine-tuning; its sizes are the defaults, token rows matched by text)");
  add_whole(sub, "--steps", a->steps, "Total optimizer steps (default 300)", 1,
            kMaxSteps);
  add_whole(sub, "--batch-size", a->batch_size, "Rows per step (default 32)", 1,
            kMaxSize);
  add_real(sub, "--lr", a->lr, "Peak learning rate (default 3e-3)", {0, 1000, true});
  add_whole(sub, "--warmup", a->warmup, "Linear warm-up steps (default 30)", 0,
            kMaxSteps);
  add_real(sub, "--min-lr-ratio", a->min_lr_ratio,
           "Cosine decays to lr * this (default 0.1)", {0, 1});
  sub->add_option("--optimizer", a->optimizer, "adamw or sgd (default adamw)");
  add_real(sub, "--weight-decay", a->weight_decay,
           "AdamW decoupled decay; SGD L2 (default 0.1)", {0, 1000});
  add_real(sub, "--momentum", a->momentum, "SGD momentum (default 0.9)", {0, 1});
  add_real(sub, "--clip", a->clip, "Max global gradient norm, 0: off (default 1)",
           {0, 1e30});
  add_whole(sub, "--seed", a->seed, "Initialisation and data seed (default 0)", 0,
            UINT64_MAX);
  sub->add_option("--dtype", a->dtype, "float32 or float64 (default float32)");
  add_whole(sub, "--log-every", a->log_every, "Metrics line every N steps (default 10)",
            1, kMaxSteps);
  add_whole(sub, "--eval-every", a->eval_every,
            "Held-out evaluation every N steps, 0: only at the end (default 100)", 0,
            kMaxSteps);
  add_whole(sub, "--eval-batches", a->eval_batches,
            "Held-out batches per evaluation (default 4)", 1, kMaxSize);
  add_whole(sub, "--save-every", a->save_every,
            "Checkpoint every N steps, 0: only at the end (default 500)", 0, kMaxSteps);
  const Config defaults = TrainOptions{}.model;  // what a new run gets without the flag
  for (std::size_t i = 0; i < std::size(kSizeFlags); ++i)
    add_whole(sub, kSizeFlags[i].flag, a->sizes[i],
              std::string(kSizeFlags[i].help) + " (default " +
                  std::to_string(defaults.*kSizeFlags[i].field) + ")",
              1, kMaxSize);
  add_whole(sub, "--threads", a->threads,
            "BLAS threads (default: the run's, else GLASSLLM_THREADS, else 1, which is "
            "fastest for the default model on a shared machine)",
            1, kMaxThreads);
  return {sub, [a] { return train(*a); }};
}

Command register_eval(CLI::App& app) {
  auto a = std::make_shared<EvalArgs>();
  CLI::App* sub = app.add_subcommand(
      "eval", "Print a checkpoint's held-out loss and exact-match accuracy.");
  sub->add_option("dir", a->dir, "Checkpoint folder")->required();
  sub->add_option("--task", a->task, "Task (default: the run's)");
  add_whole(sub, "--seed", a->seed, "Data seed (default: the run's, else 0)", 0,
            UINT64_MAX);
  add_whole(sub, "--batches", a->batches, "Held-out batches", 1, kMaxSize);
  add_whole(sub, "--batch-size", a->batch_size, "Rows per batch", 1, kMaxSize);
  add_whole(sub, "--threads", a->threads, "BLAS threads", 1, kMaxThreads);
  add_allow_nonfinite(sub, a->allow_nonfinite);
  return {sub, [a] { return eval(*a); }};
}

}  // namespace glassllm::cli
