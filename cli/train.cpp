// cli_train.cpp: `glassllm train` and `glassllm eval`. The loop itself is
// train.h's; this file turns flags into TrainOptions and results into exit
// statuses.
//
// Exit statuses of train: 0 when every step is done; 130 after Ctrl-C
// (SIGINT) and 143 after SIGTERM, the shell's 128 + signal, even though the
// run was saved cleanly: a script running `glassllm train ... && next` must
// not go on as if training had finished; 1 for an error or a non-finite loss.
#include "glassllm/train/train.h"

#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "cli/cli.h"
#include "glassllm/fast/blas.h"
#include "glassllm/model/checkpoint.h"

namespace glassllm::cli {

namespace {

template <class T>
void set_if(T& field, const std::optional<T>& flag) {
  if (flag) field = *flag;
}

}  // namespace

int train(const TrainArgs& a) {
  if (a.threads) set_blas_threads(*a.threads);
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

}  // namespace glassllm::cli
