// run_folder.cpp: a training run's folder (run_folder.h): atomic saves
// through OUT.saving and OUT.previous, recovery from an interrupted save, the
// lock, the mark, and the options saved in trainer_state.json.
#include "glassllm/train/run_folder.h"

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
#include "glassllm/io/json_reader.h"
#include "glassllm/train/optim.h"

namespace glassllm {
namespace run_files {

// ---- the run folder ------------------------------------------------------------------

void fsync_dir(const fs::path& dir) {
  int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

// A folder train made: it carries the mark, or (a run saved before marks
// existed) a trainer_state.json.
bool marked(const fs::path& dir) {
  std::error_code ec;
  return !fs::is_symlink(dir, ec) && fs::is_directory(dir, ec) &&
         (fs::is_regular_file(dir / kMarkFile, ec) ||
          fs::is_regular_file(dir / kStateFile, ec));
}

// Removes a folder train made; anything else there is refused, not removed.
void remove_marked(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(dir, ec))) return;
  if (!marked(dir))
    throw std::invalid_argument(dir.string() +
                                " exists but was not made by glassllm train; move it "
                                "away (train never deletes what it did not make)");
  fs::remove_all(dir);
}

void rename_or_throw(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::rename(from, to, ec);
  if (ec)
    throw std::runtime_error("save: cannot rename " + from.string() + " to " +
                             to.string() + ": " + ec.message());
}

// The files of OUT that a save does not write (a user's notes.txt, a plot)
// go into OUT.saving too, as hard links (a folder's files each linked): the
// same data under a second name, so whatever happens to the save, one of
// OUT, OUT.previous or the new OUT holds them.
void keep_foreign_files(const fs::path& dir, const fs::path& saving) {
  static const char* const ours[] = {
      kMarkFile,      "config.json", "model.safetensors", "glassllm_tokenizer.json",
      kOptimizerFile, kMetricsFile,  kStateFile};
  std::error_code ec;
  if (!marked(dir)) return;  // the first save: OUT is empty or refused below
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::directory_entry& entry = *it;
    const std::string name = entry.path().filename().string();
    if (std::find(std::begin(ours), std::end(ours), name) != std::end(ours)) continue;
    fs::copy(entry.path(), saving / name,
             fs::copy_options::recursive | fs::copy_options::create_hard_links |
                 fs::copy_options::copy_symlinks,
             ec);
    if (ec)
      throw WriteError("save: cannot keep " + entry.path().string() +
                       " in the new save (" + ec.message() +
                       "); move it out of the run folder");
  }
}

// Writes the whole run into OUT.saving/ (each file flushed to disk), then
// swaps it in with two renames. At every moment either OUT or OUT.previous
// is a complete checkpoint; recover_run_folder finds it.
void save_run(const std::string& out, const GlassLM& model, const Tokenizer& tokenizer,
              const Optimizer& optimizer, const Json& state, const std::string& metrics) {
  const fs::path dir(out), saving(out + ".saving"), previous(out + ".previous");
  remove_marked(saving);
  std::error_code ec;
  fs::create_directories(saving, ec);
  if (ec)  // a read-only or missing parent: an output that cannot be written
    throw WriteError("save: cannot create " + saving.string() + ": " + ec.message());
  write_file_safely((saving / kMarkFile).string(),
                    "A training run's folder, made by glassllm train.\n");
  save_checkpoint(saving.string(), model, &tokenizer);
  write_safetensors((saving / kOptimizerFile).string(), optimizer.state(),
                    {{"optimizer", optimizer.name()}});
  write_file_safely((saving / kMetricsFile).string(), metrics);
  keep_foreign_files(dir, saving);
  // The state file last: a folder with it is a complete save.
  write_file_safely((saving / kStateFile).string(), state.dump(2) + "\n");
  remove_marked(previous);  // a leftover of an earlier save's cleanup
  // The first save may find OUT as an empty folder the user made: it goes
  // (rmdir removes only an empty folder); a folder with anything in it that
  // train did not make stops the save.
  if (fs::exists(dir) && !marked(dir) && !fs::remove(dir, ec))
    throw std::invalid_argument(out + ": is not a training run and not empty; " +
                                "choose another --out");
  if (fs::exists(dir)) rename_or_throw(dir, previous);
  rename_or_throw(saving, dir);
  fsync_dir(dir.parent_path());  // make both renames durable before deleting anything
  remove_marked(previous);
}

// OUT.lock beside the folder OUT names once every symlink in its path is
// resolved: two names for one run (a symlinked parent, "a/../run") share
// one lock.
std::string resolved_lock_path(const std::string& out) {
  std::error_code ec;
  fs::path resolved = fs::weakly_canonical(fs::absolute(out), ec);
  if (ec)
    throw std::invalid_argument("--out " + out + ": cannot resolve the path (" +
                                ec.message() + ")");
  return resolved.string() + ".lock";
}

// resolved_lock_path, once the folders above OUT exist (weakly_canonical
// resolves the part of a path that exists).
std::string lock_path_making_parents(const std::string& out) {
  const fs::path parent = fs::path(out).parent_path();
  std::error_code ec;
  if (!parent.empty() && !fs::is_directory(parent, ec) &&
      !fs::create_directories(parent, ec))
    throw WriteError(  // where the output goes, not a bad input: exit 5
        out + ": cannot make the folder " + parent.string() + " for the run (" +
        (ec ? ec.message() : "a file of that name is in the way") + ")");
  return resolved_lock_path(out);
}

// An exclusive lock on OUT.lock (a file beside OUT: OUT itself is replaced
// by every save) for as long as the run trains, so that two trainings on
// one folder cannot take turns renaming it. The kernel drops the lock when
// the process ends, however it ends; the empty file stays. The folders above
// OUT are made first (--out runs/copy in a fresh checkout has no runs/).
RunLock::RunLock(const std::string& out) : path_(lock_path_making_parents(out)) {
  fd_ =
      ::open(path_.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
  struct stat st {};
  if (fd_ < 0 || ::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    const int err = errno;
    if (fd_ >= 0) ::close(fd_);
    throw WriteError(  // a folder it may not write in: an output error
        path_ + ": cannot lock the run (" +
        (S_ISREG(st.st_mode) || fd_ < 0 ? std::strerror(err) : "not a regular file") +
        "); train needs a lock file there");
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd_);
    throw std::invalid_argument(out +
                                ": another glassllm train is using this run (its lock " +
                                path_ + " is held); wait for it or choose another --out");
  }
}

bool holds_run(const fs::path& dir) {
  return fs::exists(dir / kStateFile);
}

// --init-from: a new run whose weights start as the checkpoint's in `dir`
// instead of random ones (fine-tuning). The sizes must match, except the
// vocabulary: the rows of embed_tokens and lm_head are copied by token text,
// so a vocabulary that gained a token (the end-of-text) keeps every row it
// had, and the new token's rows keep their random initialisation, as with
// transformers' resize_token_embeddings.
void start_from_checkpoint(GlassLM& model, const Tokenizer& tokenizer,
                           const std::string& dir, std::ostream& out) {
  Checkpoint source = load_checkpoint(dir, model.dtype());
  const Config &from = source.model.config(), &to = model.config();
  auto same = [&](const char* flag, std::size_t there, std::size_t here) {
    if (there != here)
      throw std::invalid_argument("--init-from " + dir + ": " + flag + " is " +
                                  std::to_string(there) + " there but " +
                                  std::to_string(here) + " here; pass " + flag + " " +
                                  std::to_string(there));
  };
  for (const SizeFlag& size : kSizeFlags)
    same(size.flag, from.*size.field, to.*size.field);
  if (!source.tokenizer)
    throw std::invalid_argument("--init-from " + dir +
                                ": has no glassllm_tokenizer.json to match tokens by");
  const Tokenizer& old_tok = *source.tokenizer;
  std::size_t kept = 0;
  for (const auto& [name, weight] : source.model.named_parameters()) {
    Tensor& target = model.parameter(name);
    if (name != "model.embed_tokens.weight" && name != "lm_head.weight") {
      target = weight.detach();
      continue;
    }
    // [vocab, d_model]: row i belongs to token i.
    const std::size_t D = to.d_model;
    std::vector<double> rows = target.to_vector(), old_rows = weight.to_vector();
    kept = 0;
    for (std::size_t id = 0; id < to.vocab_size; ++id) {
      const std::string& text = tokenizer.token_text(std::int64_t(id));
      for (std::size_t old_id = 0; old_id < from.vocab_size; ++old_id)
        if (old_tok.token_text(std::int64_t(old_id)) == text) {
          std::copy_n(old_rows.begin() + std::ptrdiff_t(old_id * D), D,
                      rows.begin() + std::ptrdiff_t(id * D));
          ++kept;
          break;
        }
    }
    target = from_vector(rows, target.shape(), target.dtype());
  }
  out << "starting from " << dir << ": every weight, and " << kept << " of "
      << to.vocab_size << " token rows (the others are new tokens, initialised at random)"
      << std::endl;
}

// ---- options as JSON ------------------------------------------------------------------

Json config_json(const Config& c) {
  return {{"d_model", c.d_model},       {"n_layers", c.n_layers}, {"n_heads", c.n_heads},
          {"n_kv_heads", c.n_kv_heads}, {"d_ff", c.d_ff},         {"max_len", c.max_len},
          {"vocab_size", c.vocab_size}};
}

Json options_json(const TrainOptions& o) {
  return {{"task", o.task},
          {"steps", o.steps},
          {"batch_size", o.batch_size},
          {"lr", o.lr},
          {"warmup", o.warmup},
          {"min_lr_ratio", o.min_lr_ratio},
          {"weight_decay", o.weight_decay},
          {"momentum", o.momentum},
          {"clip", o.clip},
          {"optimizer", o.optimizer},
          {"seed", o.seed},
          {"dtype", dtype_name(o.dtype)},
          {"log_every", o.log_every},
          {"eval_every", o.eval_every},
          {"eval_batches", o.eval_batches},
          {"save_every", o.save_every},
          {"threads", o.threads},
          {"init_from", o.init_from},
          {"model", config_json(o.model)}};
}

// On resume, these must be what the run was started with.
void check_same_run(const TrainOptions& now, const TrainOptions& saved) {
  auto differ = [&](const std::string& what, const std::string& was,
                    const std::string& is) {
    throw std::invalid_argument(
        "--resume: " + now.out + " was trained with " + what + " " + was + ", not " + is +
        "; drop the flag to keep the run's value, or choose another --out");
  };
  auto num = [](std::size_t v) { return std::to_string(v); };
  if (now.task != saved.task) differ("--task", saved.task, now.task);
  if (now.seed != saved.seed) differ("--seed", num(saved.seed), num(now.seed));
  if (now.dtype != saved.dtype)
    differ("--dtype", dtype_name(saved.dtype), dtype_name(now.dtype));
  if (now.optimizer != saved.optimizer)
    differ("--optimizer", saved.optimizer, now.optimizer);
  for (const SizeFlag& size : kSizeFlags) {
    const std::size_t was = saved.model.*size.field, is = now.model.*size.field;
    if (was != is) differ(size.flag, num(was), num(is));
  }
}

// The lines of metrics.jsonl whose "step" is at most `step`: on resume, the
// lines written after the checkpoint belong to steps that will be redone.
std::string metrics_up_to(const std::string& file, std::size_t step) {
  std::error_code ec;
  if (!fs::exists(file, ec)) return "";
  std::istringstream in(read_regular_file(file, 1ull << 30, "a metrics file"));
  // Checked like any input: each line an object whose "step" is a count
  // and whose "elapsed_s" (which the next lines continue from) a number.
  std::string kept, line;
  for (std::size_t n = 1; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    const std::string where = file + ": line " + std::to_string(n);
    Json j;
    try {
      j = parse_json_bounded<Json>(line);
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(where + ": " + e.what());
    }
    if (!j.is_object() || !j.contains("step") || !j["step"].is_number_unsigned())
      throw std::runtime_error(where + ": \"step\" is " +
                               (j.is_object() && j.contains("step")
                                    ? json_preview(j["step"])
                                    : std::string("missing")) +
                               ", expected an integer >= 0");
    if (j.contains("elapsed_s") && !j["elapsed_s"].is_number())
      throw std::runtime_error(where + ": \"elapsed_s\" is " +
                               json_preview(j["elapsed_s"]) + ", expected a number");
    if (j["step"].get<std::size_t>() <= step) kept += line + "\n";
  }
  return kept;
}

}  // namespace run_files

using namespace run_files;

// ---- public helpers
// ----------------------------------------------------------------------

void recover_run_folder(const std::string& out) {
  const fs::path dir(out), saving(out + ".saving"), previous(out + ".previous");
  // Only folders train made are renamed or removed: a user's own folder
  // named like them is left as it is.
  if (!fs::exists(dir) && marked(previous)) rename_or_throw(previous, dir);
  if (marked(saving)) fs::remove_all(saving);
  if (marked(dir) && marked(previous)) fs::remove_all(previous);
}

std::string run_folder(const std::string& out) {
  if (out.empty()) throw std::invalid_argument("--out is empty; name the run's folder");
  // "run/" and "run//" are "run": OUT.saving must be a sibling of OUT, not
  // a hidden ".saving" inside it.
  std::string s = fs::path(out).lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  fs::path p(s);
  // ".", ".." and "/" have no name to add ".saving" to: use the full path.
  if (p.filename() == "." || p.filename() == ".." || p == p.root_path())
    p = fs::weakly_canonical(fs::absolute(p));
  if (p == p.root_path())
    throw std::invalid_argument("--out " + out + ": a run cannot be the root folder");
  // A symlink to a folder is followed: the saves rename OUT, and renaming the
  // link would replace it with a new folder and leave its target as it was.
  std::error_code ec;
  if (fs::is_symlink(fs::symlink_status(p, ec))) {
    fs::path target = fs::canonical(p, ec);
    if (ec)
      throw std::invalid_argument("--out " + out + ": the symlink cannot be followed (" +
                                  ec.message() + ")");
    p = target;
  }
  return p.string();
}

TrainOptions saved_options(const std::string& out) {
  if (!holds_run(out))
    throw std::runtime_error(out + ": no training run here (no " + kStateFile +
                             "); start one without --resume");
  return options_from_json(read_state(out).at("options"), out);
}

}  // namespace glassllm
