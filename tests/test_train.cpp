// test_train.cpp: the training loop end to end: it learns copy, resume
// repeats an uninterrupted run bit for bit, an interrupted save loses
// nothing, and a run is never overwritten silently. Runs single-threaded
// (BlasThreadsForScope, set_blas_threads(1)): with the system backend results repeat bit
// for bit only for one thread count.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "glassllm/fast/blas.h"
#include "glassllm/io/checkpoint.h"
#include "glassllm/train/train.h"
#include "tests/check.h"

using namespace glassllm;
namespace fs = std::filesystem;

namespace {

// A fresh, empty place for a run; removed again by the destructor. The
// process id keeps two test runs at once (two build folders) apart.
struct TempRun {
  explicit TempRun(const std::string& name)
      : path((fs::temp_directory_path() /
              ("glassllm_test_" + name + "_" + std::to_string(::getpid())))
                 .string()) {
    clean();
  }
  ~TempRun() { clean(); }
  void clean() {
    for (const char* suffix : {"", ".saving", ".previous", ".lock"})
      fs::remove_all(path + suffix);
  }
  std::string path;
};

// A model small enough to take a step in about a millisecond.
TrainOptions tiny(const std::string& out, std::size_t steps) {
  TrainOptions o;
  o.task = "copy";
  o.out = out;
  o.steps = steps;
  o.batch_size = 4;
  o.lr = 3e-3;
  o.warmup = 3;
  o.log_every = 1;  // one metrics line per step: the loss sequence
  o.eval_every = 5;
  o.eval_batches = 1;
  o.save_every = 4;
  o.model.d_model = 16;
  o.model.n_layers = 1;
  o.model.n_heads = 2;
  o.model.n_kv_heads = 1;
  o.model.d_ff = 32;
  o.model.max_len = 40;
  return o;
}

// Every metrics line with a training loss, as (step, loss, grad_norm, lr).
std::vector<std::vector<double>> losses(const std::string& dir) {
  std::ifstream in(fs::path(dir) / "metrics.jsonl");
  std::vector<std::vector<double>> rows;
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    if (j.contains("loss"))
      rows.push_back({j["step"].get<double>(), j["loss"].get<double>(),
                      j["grad_norm"].get<double>(), j["lr"].get<double>()});
  }
  return rows;
}

}  // namespace

TEST_CASE("train_step: one SGD update w - lr * clipped grad, with the loss and norm") {
  test::BlasThreadsForScope one_thread(1);
  Tokenizer tok;
  auto task = make_task("copy", tok);
  Batch batch = make_batch(*task, tok, 0, 0, 2, 40, Split::train);
  Config cfg;
  cfg.vocab_size = tok.vocab_size();
  cfg.d_model = 8;
  cfg.n_layers = 1;
  cfg.n_heads = 2;
  cfg.n_kv_heads = 1;
  cfg.d_ff = 16;
  cfg.max_len = 40;
  GlassLM model(cfg, 3, DType::float64);

  // The expected step, worked out here from a copy of the model: the loss,
  // every gradient, their global norm, and the factor clipping scales by.
  GlassLM copy = model.to(DType::float64);
  Tensor loss = copy.loss(batch.tokens, batch.targets);
  loss.backward();
  double sum_sq = 0;
  for (const auto& [name, w] : copy.named_parameters())
    for (double g : w.grad().to_vector()) sum_sq += g * g;
  const double norm = std::sqrt(sum_sq), clip = 0.5 * norm;  // clipping will act
  const double scale = clip / (norm + 1e-6), lr = 0.1;

  SGD opt(model.named_parameters(), lr);  // no momentum, no weight decay
  StepResult r = train_step(model, opt, batch, clip);
  CHECK(r.updated);
  CHECK(r.loss == doctest::Approx(loss.item()).epsilon(1e-12));
  CHECK(r.grad_norm == doctest::Approx(norm).epsilon(1e-12));
  for (const auto& [name, w] : model.named_parameters()) {
    CAPTURE(name);
    const Tensor& before = copy.parameter(name);
    std::vector<double> now = w.to_vector(), old = before.to_vector(),
                        g = before.grad().to_vector();
    for (std::size_t i = 0; i < now.size(); ++i)
      REQUIRE(now[i] == doctest::Approx(old[i] - lr * scale * g[i]).epsilon(1e-12));
    CHECK_FALSE(w.grad().defined());  // forgotten after the step
  }
}

TEST_CASE("train_step leaves the weights alone when the loss is not finite") {
  Tokenizer tok;
  auto task = make_task("copy", tok);
  Batch batch = make_batch(*task, tok, 0, 0, 1, 40, Split::train);
  Config cfg;
  cfg.vocab_size = tok.vocab_size();
  cfg.d_model = 8;
  cfg.n_layers = 1;
  cfg.n_heads = 2;
  cfg.n_kv_heads = 1;
  cfg.d_ff = 16;
  cfg.max_len = 40;
  GlassLM model(cfg, 3);
  std::vector<double> poisoned = model.norm.to_vector();
  poisoned[0] = std::nan("");  // every logit becomes nan
  model.norm.mutable_data<float>()[0] = float(poisoned[0]);
  std::vector<double> lm_head = model.lm_head.to_vector();
  SGD opt(model.named_parameters(), 0.1);
  StepResult r = train_step(model, opt, batch, 1.0);
  CHECK_FALSE(r.updated);
  CHECK(std::isnan(r.loss));
  CHECK(model.lm_head.to_vector() == lm_head);
}

TEST_CASE("a short training run lowers the copy loss below half its start") {
  test::BlasThreadsForScope one_thread(1);
  TempRun run("learns_copy");
  TrainOptions o = tiny(run.path, 800);
  // Big enough to learn the induction pattern (two layers: one to note each
  // character's predecessor, one to look it up), at a constant learning rate
  // after warm-up; about 7 s on one core.
  o.batch_size = 16;
  o.model.d_model = 64;
  o.model.n_layers = 2;
  o.model.n_heads = 4;
  o.model.n_kv_heads = 2;
  o.model.d_ff = 128;
  o.model.max_len = 36;
  o.warmup = 20;
  o.min_lr_ratio = 1.0;
  o.log_every = 100;
  o.eval_every = 800;
  o.eval_batches = 2;
  o.save_every = 0;
  std::ostringstream out;
  TrainResult r = train(o, false, out);
  REQUIRE(r.status == TrainStatus::finished);
  std::vector<double> eval_losses;
  std::ifstream in(fs::path(run.path) / "metrics.jsonl");
  for (std::string line; std::getline(in, line);)
    if (auto j = nlohmann::json::parse(line); j.contains("eval_loss"))
      eval_losses.push_back(j["eval_loss"].get<double>());
  REQUIRE(eval_losses.size() == 2);  // step 0 and step 800
  CAPTURE(out.str());
  // At step 0 about ln(99) = 4.60 (every token equally likely).
  CHECK(eval_losses[0] > 4.0);
  CHECK(eval_losses[1] < 0.5 * eval_losses[0]);
}

TEST_CASE("resume continues bit for bit: the same losses as a run that never stopped") {
  test::BlasThreadsForScope one_thread(1);
  TempRun whole("resume_whole"), split("resume_split");
  std::ostringstream out;
  REQUIRE(train(tiny(whole.path, 12), false, out).status == TrainStatus::finished);

  TrainOptions first = tiny(split.path, 12);
  first.stop_after = 6;  // as if Ctrl-C came during step 6
  TrainResult r = train(first, false, out);
  CHECK(r.status == TrainStatus::interrupted);
  CHECK(r.saved_step == 6);
  CHECK(out.str().find("interrupted at step 6: saved " + split.path +
                       "; continue with --resume") != std::string::npos);
  // A crash after the save but before the end leaves extra metrics lines; resume drops
  // them.
  {
    std::ofstream(fs::path(split.path) / "metrics.jsonl", std::ios::app)
        << "{\"step\":7,\"loss\":1}\n";
  }
  REQUIRE(train(tiny(split.path, 12), true, out).status == TrainStatus::finished);

  auto a = losses(whole.path), b = losses(split.path);
  REQUIRE(a.size() == 12);
  REQUIRE(b.size() == 12);
  for (std::size_t i = 0; i < a.size(); ++i) {
    CAPTURE(i);
    CHECK(a[i] == b[i]);  // step, loss, grad_norm and lr, exactly
  }
  // And the final weights are equal, bit for bit.
  Checkpoint x = load_checkpoint(whole.path), y = load_checkpoint(split.path);
  CHECK(x.model.lm_head.to_vector() == y.model.lm_head.to_vector());
}

TEST_CASE("an interrupted save never loses the last good checkpoint") {
  test::BlasThreadsForScope one_thread(1);
  TempRun run("interrupted_save");
  std::ostringstream out;
  TrainOptions o = tiny(run.path, 8);
  o.stop_after = 4;
  REQUIRE(train(o, false, out).status == TrainStatus::interrupted);

  SUBCASE("a half-written OUT.saving is deleted") {
    // A save writes its mark first, so an unfinished one carries it.
    fs::create_directories(run.path + ".saving");
    std::ofstream(run.path + ".saving/.glassllm-run") << "mark";
    std::ofstream(run.path + ".saving/model.safetensors") << "half a file";
    recover_run_folder(run.path);
    CHECK(!fs::exists(run.path + ".saving"));
    CHECK(saved_options(run.path).steps == 8);
  }
  SUBCASE("a save cut between its two renames: OUT.previous only") {
    fs::rename(run.path, run.path + ".previous");
    fs::create_directories(run.path + ".saving");  // the new one, possibly incomplete
    std::ofstream(run.path + ".saving/.glassllm-run") << "mark";
    recover_run_folder(run.path);
    CHECK(fs::exists(fs::path(run.path) / "trainer_state.json"));
    CHECK(!fs::exists(run.path + ".previous"));
    CHECK(!fs::exists(run.path + ".saving"));
  }
  // Either way the run resumes from step 4 and finishes.
  TrainResult r = train(tiny(run.path, 8), true, out);
  CHECK(r.status == TrainStatus::finished);
  CHECK(r.step == 8);
  CHECK(out.str().find("resuming " + run.path + " at step 4 of 8") != std::string::npos);
}

TEST_CASE("a run is never overwritten, and resume refuses other model sizes") {
  test::BlasThreadsForScope one_thread(1);
  TempRun run("refusals");
  std::ostringstream out;
  REQUIRE(train(tiny(run.path, 2), false, out).status == TrainStatus::finished);
  CHECK_THROWS_WITH_AS(
      train(tiny(run.path, 2), false, out),
      doctest::Contains("a training run exists; pass --resume to continue it or "
                        "choose another --out"),
      std::invalid_argument);
  TrainOptions wider = tiny(run.path, 4);
  wider.model.d_model = 32;
  CHECK_THROWS_WITH_AS(train(wider, true, out),
                       doctest::Contains("was trained with --d-model 16, not 32"),
                       std::invalid_argument);
}

TEST_CASE("train touches only folders it made, and one training at a time") {
  test::BlasThreadsForScope one_thread(1);
  TempRun run("folders");
  std::ostringstream out;
  // A user's own folder named like train's temporary one: refused, kept.
  fs::create_directories(run.path + ".saving");
  std::ofstream(run.path + ".saving/notes.txt") << "mine";
  CHECK_THROWS_WITH_AS(train(tiny(run.path, 2), false, out),
                       doctest::Contains(".saving exists but was not made by glassllm "
                                         "train; move it away"),
                       std::invalid_argument);
  CHECK(fs::exists(run.path + ".saving/notes.txt"));
  CHECK(!fs::exists(run.path));
  fs::remove_all(run.path + ".saving");

  // A finished run records its thread count; "OUT/" is OUT.
  TrainOptions o = tiny(run.path + "/", 2);
  o.threads = 1;
  REQUIRE(train(o, false, out).status == TrainStatus::finished);
  CHECK(saved_options(run.path).threads == 1);
  CHECK(fs::exists(fs::path(run.path) / ".glassllm-run"));
  CHECK(!fs::exists(run.path + "/.saving"));

  // recover_run_folder leaves an unmarked OUT.previous alone.
  fs::create_directories(run.path + ".previous");
  std::ofstream(run.path + ".previous/notes.txt") << "mine";
  recover_run_folder(run.path);
  CHECK(fs::exists(run.path + ".previous/notes.txt"));
  CHECK_THROWS_WITH_AS(train(tiny(run.path, 4), true, out),
                       doctest::Contains(".previous exists but was not made by glassllm "
                                         "train"),
                       std::invalid_argument);
  fs::remove_all(run.path + ".previous");

  // While another process holds the lock, a second training stops at once.
  int fd = ::open((run.path + ".lock").c_str(), O_RDWR | O_CREAT, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(::flock(fd, LOCK_EX) == 0);
  CHECK_THROWS_WITH_AS(train(tiny(run.path, 4), true, out),
                       doctest::Contains("another glassllm train is using this run"),
                       std::invalid_argument);
  ::close(fd);
  CHECK(train(tiny(run.path, 4), true, out).status == TrainStatus::finished);
}

TEST_CASE("run_folder: trailing slashes go, '.' and '..' become absolute") {
  CHECK(run_folder("runs/a/") == "runs/a");
  CHECK(run_folder("runs//a//") == "runs/a");
  CHECK(run_folder("./a") == "a");
  CHECK(run_folder(".") == fs::current_path().string());
  CHECK(run_folder("x/..") == fs::current_path().string());
  CHECK_THROWS_AS(run_folder(""), std::invalid_argument);
  CHECK_THROWS_AS(run_folder("/"), std::invalid_argument);
}

TEST_CASE("a non-finite loss stops before the update and keeps the last checkpoint") {
  test::BlasThreadsForScope one_thread(1);
  TempRun run("diverges");
  TrainOptions o = tiny(run.path, 10);
  o.optimizer = "sgd";
  o.lr = 1e30;  // the first update sends the weights to inf
  o.warmup = 0;
  o.clip = 0;
  std::ostringstream out;
  TrainResult r = train(o, false, out);
  CHECK(r.status == TrainStatus::diverged);
  CHECK(r.saved_step == 0);
  CAPTURE(out.str());
  CHECK(out.str().find("; stopping; " + run.path + " still holds step 0") !=
        std::string::npos);
  // What is on disk is still the step-0 model.
  CHECK(load_checkpoint(run.path).model.norm.to_vector() == std::vector<double>(16, 1.0));
}

TEST_CASE("evaluate reports exact-match accuracy per task of the mix") {
  Tokenizer tok;
  Config cfg;
  cfg.vocab_size = tok.vocab_size();
  cfg.d_model = 16;
  cfg.n_layers = 1;
  cfg.n_heads = 2;
  cfg.n_kv_heads = 1;
  cfg.d_ff = 32;
  cfg.max_len = 40;
  GlassLM model(cfg, 0);
  auto task = make_task("mix", tok);
  EvalResult r = evaluate(model, *task, tok, 0, 2, 8);
  REQUIRE(r.accuracy.has_value());
  CHECK(*r.accuracy == 0.0);  // an untrained model gets no whole answer right
  CHECK(r.task_accuracy.size() == 4);
  CHECK(r.examples >= 16);
  CHECK(r.loss > 4.0);
  CHECK(r.summary().find("(add 0.0%, copy 0.0%, reverse 0.0%, sort 0.0%)") !=
        std::string::npos);
}
