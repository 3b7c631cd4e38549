// cli.h (private): the command-line tool's subcommands. main.cpp parses the
// arguments (it is the one file that includes CLI11) and calls one of these;
// each returns the process's exit status.
#pragma once

#include <string>

namespace glassllm::cli {

struct GradcheckArgs {
  std::string op;  // "" = every op
  double eps = 1e-6, atol = 1e-5, rtol = 1e-3;
};
int gradcheck(const GradcheckArgs& args);

}  // namespace glassllm::cli
