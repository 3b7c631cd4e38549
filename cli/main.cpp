// main.cpp: the `glassllm` command-line tool. Each subcommand's file registers
// its options (cli.h lists them); main only asks each to register, parses the
// arguments, and runs the one chosen. Any error is printed as one line on
// stderr with a non-zero exit status.
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <vector>

#include "cli/cli.h"

int main(int argc, char** argv) {
  namespace cli = glassllm::cli;
  CLI::App app{
      "GlassLM: a small transformer and the autograd engine under it, made to be "
      "looked through."};
  app.require_subcommand(1);
  // In the order `glassllm --help` lists them.
  const std::vector<cli::Command> commands = {
      cli::register_gradcheck(app), cli::register_init(app),  cli::register_forward(app),
      cli::register_grads(app),     cli::register_check(app), cli::register_generate(app),
      cli::register_tokenize(app),  cli::register_trace(app), cli::register_memory(app),
      cli::register_bench(app),     cli::register_train(app), cli::register_eval(app),
  };

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  try {
    for (const cli::Command& command : commands)
      if (*command.app) return command.run();
  } catch (const std::exception& e) {
    std::cerr << "glassllm: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
