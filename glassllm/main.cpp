// main.cpp: the `glassllm` command-line tool. It only parses arguments (this
// is the one file that includes CLI11, the slowest header to compile) and
// calls the subcommand functions declared in cli.h. Any error is printed as
// one line on stderr with a non-zero exit status.
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>

#include "glassllm/cli.h"

int main(int argc, char** argv) {
  namespace cli = glassllm::cli;
  CLI::App app{"GlassLM: a small transformer and the autograd engine under it, made to be "
               "looked through."};
  app.require_subcommand(1);

  cli::GradcheckArgs gradcheck;
  auto* gc = app.add_subcommand(
      "gradcheck", "Compare every op's backward with central finite differences in float64; "
                   "exits non-zero if any check fails.");
  gc->add_option("--op", gradcheck.op, "Check only this op (e.g. softmax)");
  gc->add_option("--eps", gradcheck.eps, "Finite-difference step")->capture_default_str();
  gc->add_option("--atol", gradcheck.atol, "Absolute tolerance")->capture_default_str();
  gc->add_option("--rtol", gradcheck.rtol, "Relative tolerance")->capture_default_str();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  try {
    if (*gc) return cli::gradcheck(gradcheck);
  } catch (const std::exception& e) {
    std::cerr << "glassllm: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
