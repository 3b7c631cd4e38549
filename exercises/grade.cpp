// grade.cpp: the exercises' grader. Built three times from this one file,
// each linked with one copy of the exercises:
//   build/exercises/glassllm_exercises            your copy (exercises/student/)
//   build/exercises/glassllm_exercises_stubs      the untouched stubs (must fail)
//   build/exercises/glassllm_exercises_solutions  the reference solutions (must pass)
// Usage: glassllm_exercises N | all | list. Exit status 0 iff every exercise
// graded passed. What each grader checks: exercises/grader.cpp.
#include <cstdlib>
#include <iostream>
#include <string>

#include "exercises/exercises.h"
#include "exercises/grader.h"

using namespace glassllm::exercises;

int main(int argc, char** argv) {
  const std::vector<Exercise> all{
      {1, "ex01_elementwise", "elementwise backward (mul, exp, silu)",
       [](std::ostream& o) { return grade_elementwise(my_mul, my_exp, my_silu, o); }},
      {2, "ex02_broadcasting", "broadcasting backward (summing back to an input's shape)",
       [](std::ostream& o) {
         return grade_broadcasting(my_sum_to_shape, my_mul_broadcast, o);
       }},
      {3, "ex03_reductions", "reductions (mean, max)",
       [](std::ostream& o) { return grade_reductions(my_mean, my_max, o); }},
      {4, "ex04_softmax", "softmax backward",
       [](std::ostream& o) { return grade_softmax(my_softmax, o); }},
      {5, "ex05_matmul", "batched matmul backward",
       [](std::ostream& o) { return grade_matmul(my_matmul, o); }},
      {6, "ex06_repeat_kv", "repeat_kv backward (the summed copies)",
       [](std::ostream& o) { return grade_repeat_kv(my_repeat_kv, o); }},
      {7, "ex07_rmsnorm", "RMSNorm backward",
       [](std::ostream& o) { return grade_rmsnorm(my_rmsnorm, o); }},
      {8, "ex08_rope", "RoPE backward",
       [](std::ostream& o) { return grade_rope(my_rope, o); }},
      {9, "ex09_kv_cache", "the K/V cache append (incremental == full)",
       [](std::ostream& o) { return grade_kv_cache(my_cache_append, o); }},
      {10, "ex10_grouped_attention",
       "grouped attention (== repeat_kv, values and gradients)",
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
    std::cerr << "usage: " << argv[0] << " N | all | list   (N from 1 to " << all.size()
              << ")\n";
    return 2;
  }
  int passed = 0, run = 0;
  for (const Exercise& e : all) {
    if (number && e.number != n) continue;
    if (run) std::cout << "\n";
    passed += run_exercise(e, std::cout) ? 1 : 0;
    ++run;
  }
  if (run > 1) std::cout << "\n" << passed << " of " << run << " exercises pass\n";
  return passed == run ? 0 : 1;
}
