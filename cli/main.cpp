// main.cpp: the `glassllm` command-line tool. Each subcommand's file registers
// its options (cli.h lists them); main only asks each to register, parses the
// arguments, and runs the one chosen. Any error is printed as one line on
// stderr, "glassllm <command>: <what is wrong>; <what is allowed>", with an
// exit status that says what kind of error it was (docs/errors-and-safety.md):
//   0  done                       1  a check failed, training diverged
//   2  the command line is wrong  3  an input file is wrong or unreadable
//   4  too large for the memory   5  an output could not be written
//   130, 143  stopped by Ctrl-C (SIGINT) or SIGTERM, after saving
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <new>
#include <vector>

#include "cli/cli.h"
#include "glassllm/fast/blas.h"
#include "glassllm/io/budget.h"
#include "glassllm/io/files.h"

namespace {

// "glassllm generate: " for the subcommand named on the command line (the
// first argument that is one), else "glassllm: ".
std::string prefix(const CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    for (const CLI::App* sub : app.get_subcommands({}))
      if (sub->get_name() == argv[i]) return "glassllm " + sub->get_name() + ": ";
  return "glassllm: ";
}

// Prints the message on one line, with any control character from a file
// escaped, and without repeating the command's name when it starts with it.
int report(const std::string& prefix, std::string what, int status) {
  const std::string command =
      prefix.substr(9);  // "generate: " from "glassllm generate: "
  if (!command.empty() && what.rfind(command, 0) == 0) what.erase(0, command.size());
  std::cerr << prefix << glassllm::printable(what) << "\n";
  return status;
}

// Runs the command chosen on the command line and turns what it throws into
// one line and its exit status (docs/errors-and-safety.md).
int run_chosen(const std::vector<glassllm::cli::Command>& commands,
               const std::string& where) {
  try {
    // A bad GLASSLLM_GEMM stops every command before it starts its work
    // (train would otherwise have made its run's folder by its first
    // product, where the choice is read).
    glassllm::check_gemm_variable();
    for (const glassllm::cli::Command& command : commands)
      if (*command.app) return command.run();
  } catch (const glassllm::TooLarge& e) {
    return report(where, e.what(), 4);
  } catch (const std::bad_alloc&) {
    return report(where, "out of memory; choose smaller sizes", 4);
  } catch (const glassllm::WriteError& e) {
    return report(where, e.what(), 5);
  } catch (const std::invalid_argument& e) {
    return report(where, e.what(), 2);
  } catch (const std::runtime_error& e) {
    return report(where, e.what(), 3);
  } catch (const std::exception& e) {
    return report(where, e.what(), 1);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  namespace cli = glassllm::cli;
  cli::tune_allocator();
  CLI::App app{
      "GlassLM: a small transformer and the autograd engine under it, made to be "
      "looked through. Exit status: 0 done, 1 a check failed, 2 bad command line, "
      "3 bad input file, 4 too large for memory, 5 cannot write an output."};
  app.require_subcommand(1);
  // In the order `glassllm --help` lists them.
  const std::vector<cli::Command> commands = {
      cli::register_gradcheck(app), cli::register_init(app),
      cli::register_forward(app),   cli::register_grads(app),
      cli::register_check(app),     cli::register_generate(app),
      cli::register_tokenize(app),  cli::register_trace(app),
      cli::register_inspector(app), cli::register_memory(app),
      cli::register_bench(app),     cli::register_train(app),
      cli::register_eval(app),
  };
  app.set_version_flag("--version", std::string("glassllm ") + GLASSLLM_VERSION);
  const std::string where = prefix(app, argc, argv);
  // A first argument that is neither an option nor a subcommand: CLI11 would
  // say only "A subcommand is required".
  if (argc > 1 && argv[1][0] != '-' && where == "glassllm: ") {
    std::string names;
    for (const CLI::App* sub : app.get_subcommands({}))
      names += (names.empty() ? "" : ", ") + sub->get_name();
    return report(where,
                  "unknown subcommand '" + std::string(argv[1]) +
                      "' (the subcommands: " + names + "); see glassllm --help",
                  2);
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    const std::string help = where == "glassllm: "
                                 ? "glassllm --help"
                                 : where.substr(0, where.size() - 2) + " --help";
    return report(where, std::string(e.what()) + "; see " + help, 2);
  }

  return run_chosen(commands, where);
}
