// grade.cpp: the exercises' grader. Built three times from this one file,
// each linked with one copy of the exercises:
//   build/exercises/glassllm_exercises            your copy (exercises/student/)
//   build/exercises/glassllm_exercises_stubs      the untouched stubs (must fail)
//   build/exercises/glassllm_exercises_solutions  the reference solutions (must pass)
// Usage: glassllm_exercises N | all | list. Exit status 0 iff every exercise
// graded passed; 2 for bad usage, or when run from a copied tree whose build
// folder still belongs to the original (it then prints the commands that
// configure the copy). What each grader checks: exercises/grader.cpp and
// exercises/grader_model.cpp.
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

#include "exercises/exercises.h"
#include "exercises/grader.h"
#include "exercises/messages.h"

using namespace glassllm::exercises;
namespace fs = std::filesystem;

namespace {

// A build folder records absolute paths. In a copy of a tree that was built
// before it was copied, build/ still compiles the ORIGINAL tree's
// exercises/student/ into the original's build/, and this program (copied
// along) grades someone else's files. Say so, and how to fix it, instead.
bool built_for_this_tree(std::ostream& err) {
  std::error_code ec;
  const fs::path exe = fs::canonical("/proc/self/exe", ec);
  if (ec) return true;                                    // cannot tell: grade anyway
  const fs::path here = exe.parent_path().parent_path();  // BUILD/exercises/grader
  const fs::path built = fs::weakly_canonical(GLASSLLM_GRADER_BUILD_DIR, ec);
  if (here == built) return true;
  const fs::path tree = here.parent_path();
  err << tr("copied_tree", {{"built", built.string()},
                            {"source", GLASSLLM_GRADER_SOURCE_DIR},
                            {"here", here.string()}})
      << "\n  rm -rf " << here.string() << "\n  cmake -S " << tree.string() << " -B "
      << here.string() << " -DCMAKE_BUILD_TYPE=Release\n  cmake --build " << here.string()
      << " --target glassllm_exercises\n";
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (!built_for_this_tree(std::cerr)) return 2;
  const std::vector<Exercise> all{
      {1, "ex01_elementwise", tr("title.1"),
       [](std::ostream& o) { return grade_elementwise(my_mul, my_exp, my_silu, o); }},
      {2, "ex02_broadcasting", tr("title.2"),
       [](std::ostream& o) {
         return grade_broadcasting(my_sum_to_shape, my_mul_broadcast, o);
       }},
      {3, "ex03_reductions", tr("title.3"),
       [](std::ostream& o) { return grade_reductions(my_mean, my_max, o); }},
      {4, "ex04_softmax", tr("title.4"),
       [](std::ostream& o) { return grade_softmax(my_softmax, o); }},
      {5, "ex05_matmul", tr("title.5"),
       [](std::ostream& o) { return grade_matmul(my_matmul, o); }},
      {6, "ex06_repeat_kv", tr("title.6"),
       [](std::ostream& o) { return grade_repeat_kv(my_repeat_kv, o); }},
      {7, "ex07_rmsnorm", tr("title.7"),
       [](std::ostream& o) { return grade_rmsnorm(my_rmsnorm, o); }},
      {8, "ex08_rope", tr("title.8"),
       [](std::ostream& o) { return grade_rope(my_rope, o); }},
      {9, "ex09_kv_cache", tr("title.9"),
       [](std::ostream& o) { return grade_kv_cache(my_cache_append, o); }},
      {10, "ex10_grouped_attention", tr("title.10"),
       [](std::ostream& o) { return grade_grouped_attention(my_grouped_attention, o); }},
  };
  std::string arg = argc == 2 ? argv[1] : "";
  if (arg == "list") {
    for (const Exercise& e : all)
      std::cout << e.number << "  " << e.name << "  " << e.title << "\n";
    return 0;
  }
  char* end = nullptr;
  long n = std::strtol(arg.c_str(), &end, 10);
  bool number = !arg.empty() && *end == '\0' && n >= 1 && n <= long(all.size());
  if (arg != "all" && !number) {
    std::cerr << tr("usage",
                    {{"program", argv[0]}, {"count", std::to_string(all.size())}})
              << "\n";
    return 2;
  }
  int passed = 0, run = 0;
  for (const Exercise& e : all) {
    if (number && e.number != n) continue;
    if (run) std::cout << "\n";
    passed += run_exercise(e, std::cout) ? 1 : 0;
    ++run;
  }
  if (run > 1)
    std::cout << "\n"
              << tr("summary",
                    {{"passed", std::to_string(passed)}, {"run", std::to_string(run)}})
              << "\n";
  return passed == run ? 0 : 1;
}
