// check.cpp: `glassllm check`, the model's equivalence checks as a table.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>

#include "cli/cli.h"
#include "cli/options.h"
#include "glassllm/io/budget.h"
#include "glassllm/io/checkpoint.h"
#include "glassllm/model/checks.h"

namespace glassllm::cli {

namespace {

struct CheckArgs {
  std::string dir;
  std::size_t prompt_len = 8, steps = 8;
  bool allow_nonfinite = false;
  bool wide = false;  // one line per check, 124 columns; else 2 lines within 100
};

int check(const CheckArgs& a) {
  Checkpoint ckpt = load_model("check", a.dir, std::nullopt, a.allow_nonfinite);
  // The checks run a float64 copy of the model with a preallocated cache.
  const Config& cfg = ckpt.model.config();
  check_fits_in_memory("checking this model (a float64 copy and a cache of " +
                           std::to_string(cfg.max_len) + " positions)",
                       parameter_bytes(cfg, DType::float64) +
                           preallocated_cache_bytes(cfg, DType::float64),
                       "use a checkpoint with a smaller max_position_embeddings");
  ModelCheckOptions opt;
  opt.prompt_len = a.prompt_len;
  opt.steps = a.steps;
  std::vector<CheckLine> lines = check_model(ckpt.model, opt);
  int failed = 0;
  // A projector wraps lines past about 100 columns: by default what was
  // compared goes on its own line under each check.
  if (a.wide)
    std::printf("%-36s %-58s %10s %9s  %s\n", "check (float64)", "compared", "max diff",
                "tolerance", "result");
  else
    std::printf("%-36s %10s %9s  %s\n", "check (float64)", "max diff", "tolerance",
                "result");
  for (const CheckLine& l : lines) {
    const char* result = l.passed ? "PASS" : "FAIL";
    if (a.wide)
      std::printf("%-36s %-58s %10.2e %9.0e  %s\n", l.name.c_str(), l.detail.c_str(),
                  l.max_diff, l.tolerance, result);
    else
      std::printf("%-36s %10.2e %9.0e  %s\n    compared: %s\n", l.name.c_str(),
                  l.max_diff, l.tolerance, result, l.detail.c_str());
    failed += !l.passed;
  }
  std::printf("%zu passed, %d failed\n", lines.size() - std::size_t(failed), failed);
  return failed ? 1 : 0;
}

}  // namespace

Command register_check(CLI::App& app) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* sub = app.add_subcommand(
      "check",
      "Run the model's equivalence checks in float64 (incremental == full, repeat_kv == "
      "grouped, concat == preallocated cache, gradient check); non-zero exit on "
      "failure.");
  sub->add_option("dir", args->dir, "Checkpoint folder")->required();
  add_whole(sub, "--prompt-len", args->prompt_len, "Tokens prefilled", 1, kMaxSize);
  add_whole(sub, "--steps", args->steps, "Decode steps compared", 0, kMaxSize);
  add_allow_nonfinite(sub, args->allow_nonfinite);
  sub->add_flag("--wide", args->wide,
                "One line per check, what was compared in a column (124 columns)");
  return {sub, [args] { return check(*args); }};
}

}  // namespace glassllm::cli
