// train.cpp: `glassllm train` and `glassllm eval`. The loop itself is
// train.h's; this file turns flags into TrainOptions and results into exit
// statuses.
//
// Exit statuses of train: 0 when every step is done; 130 after Ctrl-C
// (SIGINT) and 143 after SIGTERM, the shell's 128 + signal, even though the
// run was saved cleanly: a script running `glassllm train ... && next` must
// not go on as if training had finished; 1 for an error or a non-finite loss.
#include "glassllm/train/train.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/cli.h"
#include "glassllm/fast/blas.h"
#include "glassllm/model/checkpoint.h"

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
  std::optional<std::size_t> d_model, n_layers, n_heads, n_kv_heads, d_ff, max_len;
  std::optional<int> threads;
  bool resume = false;
};

struct EvalArgs {
  std::string dir;
  std::optional<std::string> task;  // default: the run's (trainer_state.json)
  std::optional<std::uint64_t> seed;
  std::size_t batches = 8, batch_size = 16;
  std::optional<int> threads;
};

template <class T>
void set_if(T& field, const std::optional<T>& flag) {
  if (flag) field = *flag;
}

int train(const TrainArgs& a) {
  // One BLAS thread unless told otherwise: the default (lesson-length)
  // model's matrix products are small, and on a shared machine a second
  // thread that waits for a core costs more than it saves (the lesson run
  // took 55 s with one thread and 89 s with two on the 2-core machine under
  // load). Larger runs pass --threads or GLASSLLM_THREADS.
  if (a.threads)
    set_blas_threads(*a.threads);
  else if (!std::getenv("GLASSLLM_THREADS"))
    set_blas_threads(1);
  TrainOptions o;
  // With --resume the run's own options are the defaults; flags override.
  const bool has_run =
      std::filesystem::exists(std::filesystem::path(a.out) / "trainer_state.json") ||
      std::filesystem::exists(a.out + ".previous");
  if (a.resume) {
    if (!has_run)
      throw std::invalid_argument("--resume: " + a.out +
                                  " holds no training run; start one without --resume");
    recover_run_folder(a.out);
    o = saved_options(a.out);
  } else if (!a.task) {
    throw std::invalid_argument(
        "train: --task is required (copy, reverse, sort, add, mix or text:FILE)");
  }
  o.out = a.out;
  if (a.init_from && !a.resume) {
    // The sizes of the checkpoint fine-tuned are the defaults; flags override
    // (and must then agree with it).
    const Config c = load_checkpoint(*a.init_from).model.config();
    o.model.d_model = c.d_model;
    o.model.n_layers = c.n_layers;
    o.model.n_heads = c.n_heads;
    o.model.n_kv_heads = c.n_kv_heads;
    o.model.d_ff = c.d_ff;
    o.model.max_len = c.max_len;
  }
  set_if(o.init_from, a.init_from);
  set_if(o.task, a.task);
  set_if(o.optimizer, a.optimizer);
  if (a.dtype) o.dtype = parse_dtype(*a.dtype);
  set_if(o.steps, a.steps);
  set_if(o.batch_size, a.batch_size);
  set_if(o.warmup, a.warmup);
  set_if(o.log_every, a.log_every);
  set_if(o.eval_every, a.eval_every);
  set_if(o.eval_batches, a.eval_batches);
  set_if(o.save_every, a.save_every);
  set_if(o.lr, a.lr);
  set_if(o.min_lr_ratio, a.min_lr_ratio);
  set_if(o.weight_decay, a.weight_decay);
  set_if(o.momentum, a.momentum);
  set_if(o.clip, a.clip);
  set_if(o.seed, a.seed);
  set_if(o.model.d_model, a.d_model);
  set_if(o.model.n_layers, a.n_layers);
  set_if(o.model.n_heads, a.n_heads);
  set_if(o.model.n_kv_heads, a.n_kv_heads);
  set_if(o.model.d_ff, a.d_ff);
  set_if(o.model.max_len, a.max_len);

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
  Checkpoint ckpt = load_checkpoint(a.dir);
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
  sub->add_option("--task", a->task, "copy, reverse, sort, add, mix or text:FILE");
  sub->add_option("--out", a->out,
                  "The run's folder (a checkpoint plus optimizer state and metrics)")
      ->required();
  sub->add_flag("--resume", a->resume,
                "Continue the run in --out; flags given override its saved options");
  sub->add_option(
      "--init-from", a->init_from,
      "Start from this checkpoint's weights instead of random ones "
      "(fine-tuning; its sizes are the defaults, token rows matched by text)");
  sub->add_option("--steps", a->steps, "Total optimizer steps (default 300)");
  sub->add_option("--batch-size", a->batch_size, "Rows per step (default 32)");
  sub->add_option("--lr", a->lr, "Peak learning rate (default 3e-3)");
  sub->add_option("--warmup", a->warmup, "Linear warm-up steps (default 30)");
  sub->add_option("--min-lr-ratio", a->min_lr_ratio,
                  "Cosine decays to lr * this (default 0.1)");
  sub->add_option("--optimizer", a->optimizer, "adamw or sgd (default adamw)");
  sub->add_option("--weight-decay", a->weight_decay,
                  "AdamW decoupled decay; SGD L2 (default 0.1)");
  sub->add_option("--momentum", a->momentum, "SGD momentum (default 0.9)");
  sub->add_option("--clip", a->clip, "Max global gradient norm, <= 0: off (default 1)");
  sub->add_option("--seed", a->seed, "Initialisation and data seed (default 0)");
  sub->add_option("--dtype", a->dtype, "float32 or float64 (default float32)");
  sub->add_option("--log-every", a->log_every, "Metrics line every N steps (default 10)");
  sub->add_option("--eval-every", a->eval_every,
                  "Held-out evaluation every N steps (default 100)");
  sub->add_option("--eval-batches", a->eval_batches,
                  "Held-out batches per evaluation (default 4)");
  sub->add_option("--save-every", a->save_every,
                  "Checkpoint every N steps (default 500)");
  sub->add_option("--d-model", a->d_model, "Residual width (default 128)");
  sub->add_option("--n-layers", a->n_layers, "Transformer blocks (default 2)");
  sub->add_option("--n-heads", a->n_heads, "Query heads (default 4)");
  sub->add_option("--n-kv-heads", a->n_kv_heads, "Key/value heads (default 2)");
  sub->add_option("--d-ff", a->d_ff, "Hidden width of the MLP (default 256)");
  sub->add_option("--max-len", a->max_len, "Tokens per row (default 40)");
  sub->add_option("--threads", a->threads,
                  "BLAS threads (default: GLASSLLM_THREADS, else 1, which is fastest for "
                  "the default model on a shared machine)");
  return {sub, [a] { return train(*a); }};
}

Command register_eval(CLI::App& app) {
  auto a = std::make_shared<EvalArgs>();
  CLI::App* sub = app.add_subcommand(
      "eval", "Print a checkpoint's held-out loss and exact-match accuracy.");
  sub->add_option("dir", a->dir, "Checkpoint folder")->required();
  sub->add_option("--task", a->task, "Task (default: the run's)");
  sub->add_option("--seed", a->seed, "Data seed (default: the run's, else 0)");
  sub->add_option("--batches", a->batches, "Held-out batches")->capture_default_str();
  sub->add_option("--batch-size", a->batch_size, "Rows per batch")->capture_default_str();
  sub->add_option("--threads", a->threads, "BLAS threads");
  return {sub, [a] { return eval(*a); }};
}

}  // namespace glassllm::cli
