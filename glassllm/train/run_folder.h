// run_folder.h (private): a training run's folder -- saving it atomically,
// recovering an interrupted save, the lock, the mark train puts on the
// folders it creates -- and the run's options as trainer_state.json.
// Used by train.cpp's loop; defined in run_folder.cpp.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "glassllm/io/tokenizer.h"
#include "glassllm/train/optim.h"
#include "glassllm/train/train.h"

namespace glassllm::run_files {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

inline constexpr const char* kStateFile = "trainer_state.json";
inline constexpr const char* kOptimizerFile = "optimizer.safetensors";
inline constexpr const char* kMetricsFile = "metrics.jsonl";
// Every folder train creates carries this file; it touches (renames,
// deletes) only folders that do, so a user's own "run.saving" or
// "run.previous" is never lost.
inline constexpr const char* kMarkFile = ".glassllm-run";
inline constexpr const char* kStateFormat = "glassllm-trainer-state";
inline constexpr int kStateVersion = 1;

// A folder train made: it carries the mark, or (a run saved before marks
// existed) a trainer_state.json.
bool marked(const fs::path& dir);

// Writes the whole run into OUT.saving/ (each file flushed to disk), then
// swaps it in with two renames. At every moment either OUT or OUT.previous
// is a complete checkpoint; recover_run_folder finds it.
void save_run(const std::string& out, const GlassLM& model, const Tokenizer& tokenizer,
              const Optimizer& optimizer, const Json& state, const std::string& metrics);

bool holds_run(const fs::path& dir);

// --init-from: a new run whose weights start as the checkpoint's in `dir`
// instead of random ones (fine-tuning). The sizes must match, except the
// vocabulary: the rows of embed_tokens and lm_head are copied by token text,
// so a vocabulary that gained a token (the end-of-text) keeps every row it
// had, and the new token's rows keep their random initialisation, as with
// transformers' resize_token_embeddings.
void start_from_checkpoint(GlassLM& model, const Tokenizer& tokenizer,
                           const std::string& dir, std::ostream& out);

Json options_json(const TrainOptions& o);

TrainOptions options_from_json(const Json& j, const std::string& out);

Json read_state(const std::string& out);

// On resume, these must be what the run was started with.
void check_same_run(const TrainOptions& now, const TrainOptions& saved);

// The lines of metrics.jsonl whose "step" is at most `step`: on resume, the
// lines written after the checkpoint belong to steps that will be redone.
std::string metrics_up_to(const std::string& file, std::size_t step);

// An exclusive lock on OUT.lock (a file beside OUT: OUT itself is replaced
// by every save) for as long as the run trains, so that two trainings on
// one folder cannot take turns renaming it. The kernel drops the lock when
// the process ends, however it ends; the empty file stays.
class RunLock {
 public:
  explicit RunLock(const std::string& out);

  ~RunLock() { ::close(fd_); }
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace glassllm::run_files
