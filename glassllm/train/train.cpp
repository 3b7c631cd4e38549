// train.cpp: the training loop of train.h, train_step, progress output,
// metrics.jsonl, and the training checkpoint (atomic save, recovery, resume).
// Held-out evaluation is evaluate.cpp's.
//
// Sections: signals, progress helpers, one step, and the loop itself at the
// bottom. The run folder (saves, recovery, the lock, the saved options) is
// run_folder.cpp's.
#include "glassllm/train/train.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "glassllm/engine/ops.h"
#include "glassllm/fast/blas.h"
#include "glassllm/io/budget.h"
#include "glassllm/io/checkpoint.h"
#include "glassllm/io/files.h"
#include "glassllm/train/fixed.h"
#include "glassllm/train/optim.h"
#include "glassllm/train/run_folder.h"

namespace glassllm {

using namespace run_files;

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

namespace {

std::unique_ptr<Optimizer> make_optimizer(const TrainOptions& o, const GlassLM& model) {
  if (o.optimizer == "adamw")
    return std::make_unique<AdamW>(model.named_parameters(), o.lr, 0.9, 0.95, 1e-8,
                                   o.weight_decay);
  if (o.optimizer == "sgd")
    return std::make_unique<SGD>(model.named_parameters(), o.lr, o.momentum,
                                 o.weight_decay);
  throw std::invalid_argument("train: unknown optimizer '" + o.optimizer +
                              "'; expected adamw or sgd");
}

// ---- signals
// ---------------------------------------------------------------------------

volatile std::sig_atomic_t g_signal = 0;

extern "C" void on_stop_signal(int sig) {
  g_signal = sig;
}  // async-signal-safe: one store

// Catches SIGINT and SIGTERM while alive; restores the previous handlers.
class StopSignals {
 public:
  StopSignals() {
    g_signal = 0;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_int_ {
  }, old_term_{};
};

// ---- progress
// --------------------------------------------------------------------------

// 9800 -> "9,800"
std::string thousands(double v) {
  std::string s = std::to_string(static_cast<long long>(std::llround(v)));
  for (int i = int(s.size()) - 3; i > 0; i -= 3) s.insert(std::size_t(i), ",");
  return s;
}

// 192 -> "3m12s"
std::string duration(double seconds) {
  long long s = std::llround(std::max(0.0, seconds));
  char buf[48];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", s / 3600, s / 60 % 60);
  else if (s >= 60)
    std::snprintf(buf, sizeof buf, "%lldm%02llds", s / 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%llds", s);
  return buf;
}

}  // namespace

// ---- one step ------------------------------------------------------------------------

StepResult train_step(GlassLM& model, Optimizer& optimizer, const Batch& batch,
                      double clip) {
  StepResult r;
  {
    Tensor loss = model.loss(batch.tokens, batch.targets);  // [B, T] -> ()
    r.loss = loss.item();
    if (std::isfinite(r.loss)) {
      loss.backward();
      r.grad_norm = clip_grad_norm(optimizer.params(), clip);
    }
  }  // the graph is freed here, before the update
  if (std::isfinite(r.loss) && std::isfinite(r.grad_norm)) {
    optimizer.step();
    r.updated = true;
  }
  optimizer.zero_grad();
  return r;
}

// ---- the loop ------------------------------------------------------------------------

namespace {

using Clock = std::chrono::steady_clock;

// `o` checked, with vocab_size filled in from the tokenizer.
TrainOptions checked_options(TrainOptions o, const Tokenizer& tokenizer) {
  if (o.model.vocab_size == 0) o.model.vocab_size = tokenizer.vocab_size();
  if (o.model.vocab_size != tokenizer.vocab_size())
    throw std::invalid_argument("train: vocab_size " +
                                std::to_string(o.model.vocab_size) +
                                " differs from the character tokenizer's " +
                                std::to_string(tokenizer.vocab_size()));
  o.model.validate();
  if (o.out.empty()) throw std::invalid_argument("train: no output folder (--out)");
  if (o.steps == 0 || o.batch_size == 0)
    throw std::invalid_argument("train: --steps and --batch-size must be positive");
  if (o.log_every == 0) o.log_every = 1;
  o.out = run_folder(o.out);
  if (o.threads > 0) set_blas_threads(o.threads);
  check_fits_in_memory("training this model on batches of " +
                           std::to_string(o.batch_size) + " x " +
                           std::to_string(o.model.max_len) + " tokens",
                       training_step_bytes(o.model, o.dtype, o.batch_size),
                       "use a smaller --batch-size, --max-len or model");
  return o;
}

// A run in progress: its model, optimizer and step, and what is saved with
// them. start() or resume() makes the model.
struct Run {
  Tokenizer tokenizer;
  TrainOptions o;
  std::unique_ptr<Task> task;
  std::ostream& out;
  bool terminal;
  std::optional<GlassLM> model;
  std::unique_ptr<Optimizer> optimizer;
  std::size_t step = 0;        // steps done
  std::size_t saved_step = 0;  // the step OUT holds
  std::string metrics;         // metrics.jsonl so far, saved with each checkpoint
  Json best_eval = nullptr;
  std::unique_ptr<RunLock> lock;  // held from before OUT is touched to the end

  Run(const TrainOptions& options, std::ostream& out, bool terminal)
      : tokenizer(options.task.ends_with("+accents") ? Tokenizer::with_latin1_letters()
                                                     : Tokenizer()),
        o(checked_options(options, tokenizer)),
        task(make_task(o.task, tokenizer)),
        out(out),
        terminal(terminal) {
    // Fail now, not after the first save, if the rows cannot hold an example.
    make_batch(*task, tokenizer, o.seed, 0, 1, o.model.max_len, Split::train);
    // From here on the folders are ours: no other training may touch them,
    // and folders named like ours that we did not make stop the run.
    lock = std::make_unique<RunLock>(o.out);
    for (const char* suffix : {".saving", ".previous"}) {
      const fs::path p(o.out + suffix);
      std::error_code ec;
      if (fs::exists(fs::symlink_status(p, ec)) && !marked(p))
        throw std::invalid_argument(p.string() +
                                    " exists but was not made by glassllm train; move it "
                                    "away (train never deletes what it did not make)");
    }
  }

  // A new run: OUT must be free. The model is initialised from the seed,
  // saved as step 0 and evaluated.
  void start() {
    const fs::path dir(o.out);
    if (holds_run(dir) || marked(o.out + ".previous"))
      throw std::invalid_argument(o.out +
                                  ": a training run exists; pass --resume to continue "
                                  "it or choose another --out");
    if (fs::exists(dir) && !(fs::is_directory(dir) && fs::is_empty(dir)))
      throw std::invalid_argument(
          o.out + ": exists and is not an empty folder; choose another --out");
    model.emplace(o.model, o.seed, o.dtype);
    if (!o.init_from.empty()) {
      start_from_checkpoint(*model, tokenizer, o.init_from, out);
      // The copied weights are new tensors: make them trainable again.
      for (auto& [name, w] : model->named_parameters()) w.requires_grad_();
    }
    optimizer = make_optimizer(o, *model);
    out << "training " << model->parameter_count() << " parameters ("
        << dtype_name(o.dtype) << ") on " << o.task << ": " << o.steps << " steps of "
        << o.batch_size << " x " << o.model.max_len << " tokens, " << o.optimizer
        << ", lr " << o.lr << "\n";
    save();  // OUT exists from the start, and holds step 0
    evaluate_now();
  }

  // The run saved in OUT, continued where it stopped.
  void resume() {
    const fs::path dir(o.out);
    recover_run_folder(o.out);
    check_same_run(o, saved_options(o.out));
    Json state = read_state(o.out);
    step = saved_step = state.at("step").get<std::size_t>();
    best_eval = state.value("best_eval_loss", Json(nullptr));
    model.emplace(load_checkpoint(o.out).model);
    for (auto& [name, w] : model->named_parameters()) w.requires_grad_();
    optimizer = make_optimizer(o, *model);
    optimizer->load_state(read_safetensors((dir / kOptimizerFile).string()));
    metrics = metrics_up_to((dir / kMetricsFile).string(), step);
    out << "resuming " << o.out << " at step " << step << " of " << o.steps << std::endl;
  }

  void save() {
    Json state{{"format", kStateFormat},
               {"version", kStateVersion},
               {"step", step},
               {"task", o.task},
               {"seed", o.seed},
               {"optimizer", o.optimizer},
               {"best_eval_loss", best_eval},
               {"options", options_json(o)}};
    save_run(o.out, *model, tokenizer, *optimizer, state, metrics);
    saved_step = step;
  }

  void log_metrics(const Json& j) {
    std::string line = j.dump() + "\n";
    metrics += line;
    // Live, for plotting during the run; written whole each time, like
    // every file, so a full disk never leaves half a line.
    write_file_safely((fs::path(o.out) / kMetricsFile).string(), metrics);
  }

  void clear_line() {
    if (terminal) out << "\r\033[K";
  }

  void evaluate_now() {
    EvalResult e =
        evaluate(*model, *task, tokenizer, o.seed, o.eval_batches, o.batch_size);
    clear_line();
    out << "eval at step " << step << ": " << e.summary() << std::endl;
    // A few held-out questions answered by greedy generation, so a class
    // can watch the answers change as the model learns.
    for (const SamplePrediction& p :
         sample_predictions(*model, *task, tokenizer, o.seed, o.samples_per_task))
      out << "  " << p.line() << "\n";
    Json j{{"step", step}, {"eval_loss", e.loss}};
    if (e.accuracy) {
      j["eval_accuracy"] = *e.accuracy;
      if (e.task_accuracy.size() > 1)
        for (const auto& [name, acc] : e.task_accuracy) j["eval_accuracy_" + name] = acc;
    }
    log_metrics(j);
    if (best_eval.is_null() || e.loss < best_eval.get<double>()) best_eval = e.loss;
  }

  // Says why the step after `step` was not taken; the weights in memory and
  // on disk are good.
  void report_divergence(const StepResult& s) {
    clear_line();
    const std::string what =
        std::isfinite(s.loss)
            ? "gradient norm is " + std::to_string(s.grad_norm)
            : std::string("loss is ") + (std::isnan(s.loss) ? "nan" : "inf");
    out << what << " at step " << step + 1 << "; stopping; " << o.out
        << " still holds step " << saved_step << std::endl;
  }
};

// The training loss's metrics lines and the progress shown: a plain line
// every log_every steps, or on a terminal one line rewritten every step.
class Progress {
 public:
  explicit Progress(const Run& run)
      : session_start_(Clock::now()),
        window_start_(session_start_),
        session_first_(run.step) {
    // elapsed_s continues across resumes.
    std::istringstream lines(run.metrics);
    for (std::string line; std::getline(lines, line);)
      if (Json j = Json::parse(line, nullptr, false); j.contains("elapsed_s"))
        elapsed_before_ = j["elapsed_s"].get<double>();
  }

  // After run.step steps, the last with this loss and gradient norm.
  void after_step(Run& run, const StepResult& s, std::size_t stop_at) {
    window_loss_ += s.loss;
    last_norm_ = s.grad_norm;
    ++window_steps_;
    const auto now = Clock::now();
    const double session_s = std::chrono::duration<double>(now - session_start_).count();
    if (run.step % run.o.log_every == 0 || run.step == stop_at) log_window(run, now);
    if (run.terminal) show_bar(run, s.loss, session_s);
  }

 private:
  // The metrics line of the steps since the last one (and, not on a
  // terminal, a plain progress line).
  void log_window(Run& run, Clock::time_point now) {
    const TrainOptions& o = run.o;
    const double session_s = std::chrono::duration<double>(now - session_start_).count();
    const double window_s = std::chrono::duration<double>(now - window_start_).count();
    const double tps =
        double(window_steps_ * o.batch_size * o.model.max_len) / std::max(window_s, 1e-9);
    const double mean_loss = window_loss_ / double(window_steps_);
    run.log_metrics(Json{{"step", run.step},
                         {"loss", mean_loss},
                         {"lr", run.optimizer->lr},
                         {"grad_norm", last_norm_},
                         {"tokens_per_s", tps},
                         {"elapsed_s", elapsed_before_ + session_s}});
    if (!run.terminal)
      run.out << "step " << run.step << "/" << o.steps << " loss " << fixed(mean_loss, 4)
              << " lr " << run.optimizer->lr << " grad_norm " << fixed(last_norm_, 3)
              << " | " << thousands(tps) << " tok/s | ETA "
              << duration(eta(run, session_s)) << std::endl;
    window_loss_ = 0;
    window_steps_ = 0;
    window_start_ = now;
  }

  // One line, rewritten every step.
  void show_bar(Run& run, double loss, double session_s) {
    const TrainOptions& o = run.o;
    const double tps =
        double((run.step - session_first_) * o.batch_size * o.model.max_len) /
        std::max(session_s, 1e-9);
    const int width = 20,
              filled = int(double(width) * double(run.step) / double(o.steps));
    std::string bar(std::size_t(filled), '=');
    if (filled < width) bar += ">" + std::string(std::size_t(width - filled - 1), ' ');
    run.out << "\r\033[Kstep " << run.step << "/" << o.steps << " [" << bar << "] loss "
            << fixed(loss, 3) << " | " << thousands(tps) << " tok/s | ETA "
            << duration(eta(run, session_s)) << std::flush;
  }

  // Seconds left at this session's pace.
  double eta(const Run& run, double session_s) const {
    return session_s / double(run.step - session_first_) * double(run.o.steps - run.step);
  }

  Clock::time_point session_start_, window_start_;
  std::size_t session_first_;
  double elapsed_before_ = 0, window_loss_ = 0, last_norm_ = 0;
  std::size_t window_steps_ = 0;
};

}  // namespace

TrainResult train(const TrainOptions& options, bool resume, std::ostream& out,
                  bool terminal) {
  Run run(options, out, terminal);
  if (resume)
    run.resume();
  else
    run.start();
  const TrainOptions& o = run.o;
  StopSignals signals;
  Progress progress(run);
  TrainResult result;
  const std::size_t stop_at = o.stop_after ? std::min(o.stop_after, o.steps) : o.steps;

  while (run.step < stop_at) {
    Batch batch = make_batch(*run.task, run.tokenizer, o.seed, run.step, o.batch_size,
                             o.model.max_len, Split::train);
    run.optimizer->lr = lr_at(run.step, o.lr, o.warmup, o.steps, o.min_lr_ratio);
    StepResult s = train_step(*run.model, *run.optimizer, batch, o.clip);
    if (!s.updated) {  // a non-finite loss or norm: stop before the update
      run.report_divergence(s);
      result.status = TrainStatus::diverged;
      result.step = run.step;
      result.saved_step = run.saved_step;
      return result;
    }
    ++run.step;
    result.last_loss = s.loss;
    progress.after_step(run, s, stop_at);

    if ((o.eval_every && run.step % o.eval_every == 0) || run.step == o.steps)
      run.evaluate_now();
    const bool stopping = g_signal != 0 || run.step == stop_at;
    if ((o.save_every && run.step % o.save_every == 0) || stopping) run.save();
    if (g_signal != 0 || (run.step == stop_at && stop_at < o.steps)) {
      run.clear_line();
      out << "interrupted at step " << run.step << ": saved " << o.out
          << "; continue with --resume" << std::endl;
      result.status = TrainStatus::interrupted;
      result.signal = g_signal;
      break;
    }
  }
  run.clear_line();
  if (result.status == TrainStatus::finished)
    out << "finished " << run.step << " steps: saved " << o.out << std::endl;
  result.step = run.step;
  result.saved_step = run.saved_step;
  return result;
}

}  // namespace glassllm
