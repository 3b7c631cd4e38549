// trainer_state.cpp: reading a run's trainer_state.json back (run_folder.h).
// The file is an input like any other: anyone can edit it, so every field is
// checked for its type and range before it is used (a "steps" of -5 read as
// an unsigned number would train 2^64 - 5 steps), and a bad one is a bad
// input file (std::runtime_error, exit status 3) whose message names the file
// and the field.
#include <limits>

#include "glassllm/io/files.h"
#include "glassllm/io/json_reader.h"
#include "glassllm/train/run_folder.h"

namespace glassllm {
namespace run_files {

namespace {

// Counts (steps, sizes, intervals) stop at 2^31, as the command line's do.
constexpr std::uint64_t kMaxCount = std::uint64_t(1) << 31;
constexpr std::uint64_t kMaxThreads = 1024;  // as --threads (cli/options.h)

// The fields of one trainer_state.json, each read with its checks.
class StateFields {
 public:
  explicit StateFields(std::string file) : file_(std::move(file)) {}

  std::runtime_error bad(const std::string& path, const std::string& what) const {
    return std::runtime_error(file_ + ": " + path + " " + what);
  }

  const Json& field(const Json& parent, const std::string& path,
                    const std::string& key) const {
    if (!parent.is_object() || !parent.contains(key))
      throw bad(json_path(path, key), "is missing");
    return parent[key];
  }

  std::uint64_t count(const Json& parent, const std::string& path, const std::string& key,
                      std::uint64_t least, std::uint64_t most) const {
    const Json& v = field(parent, path, key);
    const bool whole =
        v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0);
    if (!whole || v.get<std::uint64_t>() < least || v.get<std::uint64_t>() > most)
      throw bad(json_path(path, key),
                "is " + json_preview(v) + ", expected an integer from " +
                    std::to_string(least) + " to " + std::to_string(most));
    return v.get<std::uint64_t>();
  }

  double number(const Json& parent, const std::string& path, const std::string& key,
                double least, double most) const {
    const Json& v = field(parent, path, key);
    if (!v.is_number() || !(v.get<double>() >= least && v.get<double>() <= most))
      throw bad(json_path(path, key),
                "is " + json_preview(v) + ", expected a number from " +
                    json_preview(Json(least)) + " to " + json_preview(Json(most)));
    return v.get<double>();
  }

  std::string text(const Json& parent, const std::string& path,
                   const std::string& key) const {
    const Json& v = field(parent, path, key);
    if (!v.is_string())
      throw bad(json_path(path, key), "is " + json_preview(v) + ", expected a string");
    return v.get<std::string>();
  }

 private:
  std::string file_;
};

// The options saved in "options", read into `o` (o.out is set by the caller).
void read_options(const StateFields& f, const Json& j, TrainOptions& o) {
  const std::string p = "options";
  o.task = f.text(j, p, "task");
  o.steps = f.count(j, p, "steps", 1, kMaxCount);
  o.batch_size = f.count(j, p, "batch_size", 1, kMaxCount);
  o.lr = f.number(j, p, "lr", 0, 1e6);
  o.warmup = f.count(j, p, "warmup", 0, kMaxCount);
  o.min_lr_ratio = f.number(j, p, "min_lr_ratio", 0, 1);
  o.weight_decay = f.number(j, p, "weight_decay", 0, 1e6);
  o.momentum = f.number(j, p, "momentum", 0, 1);
  o.clip = f.number(j, p, "clip", 0, 1e300);
  o.optimizer = f.text(j, p, "optimizer");
  o.seed = f.count(j, p, "seed", 0, std::numeric_limits<std::uint64_t>::max());
  const std::string dtype = f.text(j, p, "dtype");
  if (dtype != "float32" && dtype != "float64")
    throw f.bad(p + ".dtype", "is " + json_preview(Json(dtype)) +
                                  ", expected \"float32\" or \"float64\"");
  o.dtype = parse_dtype(dtype);
  o.log_every = f.count(j, p, "log_every", 0, kMaxCount);
  o.eval_every = f.count(j, p, "eval_every", 0, kMaxCount);
  o.eval_batches = f.count(j, p, "eval_batches", 0, kMaxCount);
  o.save_every = f.count(j, p, "save_every", 0, kMaxCount);
  // Runs saved before these were recorded have none: 0 threads (the
  // default) and no --init-from.
  // At most what --threads takes (1024): a run may have been trained with
  // more threads than this machine has cores, but not with 100,000.
  if (j.contains("threads")) o.threads = int(f.count(j, p, "threads", 0, kMaxThreads));
  if (j.contains("init_from")) o.init_from = f.text(j, p, "init_from");
  const Json& m = f.field(j, p, "model");
  const std::string mp = p + ".model";
  o.model.d_model = f.count(m, mp, "d_model", 1, kMaxCount);
  o.model.n_layers = f.count(m, mp, "n_layers", 1, kMaxCount);
  o.model.n_heads = f.count(m, mp, "n_heads", 1, kMaxCount);
  o.model.n_kv_heads = f.count(m, mp, "n_kv_heads", 1, kMaxCount);
  o.model.d_ff = f.count(m, mp, "d_ff", 1, kMaxCount);
  o.model.max_len = f.count(m, mp, "max_len", 1, kMaxCount);
  o.model.vocab_size = f.count(m, mp, "vocab_size", 1, kMaxCount);
}

}  // namespace

TrainOptions options_from_json(const Json& j, const std::string& out) {
  TrainOptions o;
  o.out = out;
  read_options(StateFields((fs::path(out) / kStateFile).string()), j, o);
  return o;
}

Json read_state(const std::string& out) {
  const std::string file = (fs::path(out) / kStateFile).string();
  Json j;
  try {
    j = parse_json_bounded<Json>(
        read_regular_file(file, 64ull << 20, "a trainer state file"));
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(file + ": " + e.what());
  }
  const StateFields f(file);
  if (!j.is_object() || !j.contains("format") || j["format"] != kStateFormat ||
      !j.contains("version") || j["version"] != kStateVersion)
    throw std::runtime_error(file + ": not a " + std::string(kStateFormat) + " version " +
                             std::to_string(kStateVersion) + " file");
  // The options first: "step" is checked against their "steps".
  TrainOptions o;
  read_options(f, f.field(j, "", "options"), o);
  f.count(j, "", "step", 0, o.steps);
  if (j.contains("best_eval_loss") && !j["best_eval_loss"].is_null())
    f.number(j, "", "best_eval_loss", 0, std::numeric_limits<double>::max());
  return j;
}

}  // namespace run_files
}  // namespace glassllm
