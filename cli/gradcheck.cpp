// gradcheck.cpp: `glassllm gradcheck`, the built-in suite as a table.
#include "glassllm/engine/gradcheck.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <set>
#include <stdexcept>

#include "cli/cli.h"
#include "cli/options.h"

namespace glassllm::cli {

namespace {

struct GradcheckArgs {
  std::string op;  // "" = every op
  double eps = 1e-6, atol = 1e-5, rtol = 1e-3;
  bool wide = false;  // with the input shapes column: 112 columns, else 85
};

int gradcheck(const GradcheckArgs& args) {
  const auto& cases = builtin_gradchecks();
  std::set<std::string> known;
  for (const auto& c : cases) known.insert(c.op);
  if (!args.op.empty() && !known.count(args.op)) {
    std::string list;
    for (const auto& name : known) list += (list.empty() ? "" : ", ") + name;
    throw std::invalid_argument("gradcheck: unknown op '" + args.op +
                                "'; known ops: " + list);
  }
  GradCheckOptions options;
  options.eps = args.eps;
  options.atol = args.atol;
  options.rtol = args.rtol;

  // A projector wraps lines past about 100 columns: the input shapes
  // (mostly repeated in the case's name) only with --wide.
  const int shapes_width = args.wide ? 26 : 0;
  std::printf("%-14s %-38s %-*s%s%11s %11s  %s\n", "op", "case", shapes_width,
              args.wide ? "input shapes" : "", args.wide ? " " : "", "max abs err",
              "max rel err", "result");
  int failed = 0, run = 0;
  for (const auto& c : cases) {
    if (!args.op.empty() && c.op != args.op) continue;
    GradCheckResult r = c.run(options);
    double abs_err = 0, rel_err = 0;
    std::string shapes;
    for (const auto& in : r.inputs) {
      abs_err = std::max(abs_err, in.max_abs_err);
      rel_err = std::max(rel_err, in.max_rel_err);
      shapes += (shapes.empty() ? "" : " ") + shape_str(in.shape);
    }
    std::printf("%-14s %-38s %-*s%s%11.2e %11.2e  %s\n", c.op.c_str(),
                c.case_name.c_str(), shapes_width, args.wide ? shapes.c_str() : "",
                args.wide ? " " : "", abs_err, rel_err, r.passed ? "PASS" : "FAIL");
    if (!r.passed) {
      std::fputs(r.message().c_str(), stdout);
      ++failed;
    }
    ++run;
  }
  std::printf("%d passed, %d failed (eps %g, atol %g, rtol %g, float64)\n", run - failed,
              failed, options.eps, options.atol, options.rtol);
  return failed == 0 ? 0 : 1;
}

}  // namespace

Command register_gradcheck(CLI::App& app) {
  auto args = std::make_shared<GradcheckArgs>();
  CLI::App* sub = app.add_subcommand(
      "gradcheck",
      "Compare every op's backward with central finite differences in float64; "
      "exits non-zero if any check fails.");
  sub->add_option("--op", args->op, "Check only this op (e.g. softmax)");
  sub->add_flag("--wide", args->wide, "Add a column with the input shapes (112 columns)");
  // Below 1e-12 the step is lost in float64's rounding (x + eps == x for
  // |x| >= 1e4 * eps / 2^-52): every numeric derivative would be 0.
  add_real(sub, "--eps", args->eps, "Finite-difference step", {1e-12, 1});
  add_real(sub, "--atol", args->atol, "Absolute tolerance", {0, 1e6});
  add_real(sub, "--rtol", args->rtol, "Relative tolerance", {0, 1e6});
  return {sub, [args] { return gradcheck(*args); }};
}

}  // namespace glassllm::cli
