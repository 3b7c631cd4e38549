// check.cpp: `glassllm check`, the model's equivalence checks as a table.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>

#include "cli/cli.h"
#include "glassllm/model/checkpoint.h"
#include "glassllm/model/checks.h"

namespace glassllm::cli {

namespace {

struct CheckArgs {
  std::string dir;
  std::size_t prompt_len = 8, steps = 8;
};

int check(const CheckArgs& a) {
  Checkpoint ckpt = load_checkpoint(a.dir);
  ModelCheckOptions opt;
  opt.prompt_len = a.prompt_len;
  opt.steps = a.steps;
  std::vector<CheckLine> lines = check_model(ckpt.model, opt);
  int failed = 0;
  std::printf("%-36s %-58s %10s %9s  %s\n", "check (float64)", "compared", "max diff",
              "tolerance", "result");
  for (const CheckLine& l : lines) {
    std::printf("%-36s %-58s %10.2e %9.0e  %s\n", l.name.c_str(), l.detail.c_str(),
                l.max_diff, l.tolerance, l.passed ? "PASS" : "FAIL");
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
  sub->add_option("--prompt-len", args->prompt_len, "Tokens prefilled")
      ->capture_default_str();
  sub->add_option("--steps", args->steps, "Decode steps compared")->capture_default_str();
  return {sub, [args] { return check(*args); }};
}

}  // namespace glassllm::cli
