// grader.h: the graders of the exercises, one per exercise. Each takes the
// functions to grade as arguments (grade.cpp passes the student's; a test can
// pass a wrong one), runs the real gradient checker and, for exercises 9 and
// 10, the real model on them, prints what it checked to `out` (a gradient
// check table, or an equivalence with its maximum difference) and returns
// true iff every check passed.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "glassllm/glassllm.h"

namespace glassllm::exercises {

using UnaryFn = std::function<Tensor(const Tensor&)>;
using BinaryFn = std::function<Tensor(const Tensor&, const Tensor&)>;

bool grade_elementwise(const BinaryFn& mul, const UnaryFn& exp, const UnaryFn& silu,
                       std::ostream& out);
bool grade_broadcasting(
    const std::function<Tensor(const Tensor&, const Shape&)>& sum_to_shape,
    const BinaryFn& mul_broadcast, std::ostream& out);
bool grade_reductions(const std::function<Tensor(const Tensor&, int, bool)>& mean,
                      const std::function<Tensor(const Tensor&, int, bool)>& max,
                      std::ostream& out);
bool grade_softmax(const std::function<Tensor(const Tensor&, int)>& softmax,
                   std::ostream& out);
bool grade_matmul(const BinaryFn& matmul, std::ostream& out);
bool grade_repeat_kv(const std::function<Tensor(const Tensor&, std::size_t)>& repeat_kv,
                     std::ostream& out);
bool grade_rmsnorm(const std::function<Tensor(const Tensor&, double)>& rmsnorm,
                   std::ostream& out);
bool grade_rope(const std::function<Tensor(const Tensor&, std::size_t, double)>& rope,
                std::ostream& out);
bool grade_kv_cache(const CacheAppendFn& append, std::ostream& out);
bool grade_grouped_attention(const AttentionFn& attention, std::ostream& out);

/// One exercise: its number, file stem and title, and its grader bound to
/// the functions to grade.
struct Exercise {
  int number = 0;
  std::string name;   ///< e.g. "ex06_repeat_kv"
  std::string title;  ///< e.g. "repeat_kv backward: the summed copies"
  std::function<bool(std::ostream&)> grade;
};

/// The usual mistakes in exercise N (1-10), one line each (hints.cpp).
std::vector<std::string> common_mistakes(int exercise);

/// The hints for exercise N that the checks failed in `report` (a grader's
/// output) point to: a failing exercise prints them as "hint:" lines, or all
/// of common_mistakes when no failed check points to one.
std::vector<std::string> hints_for(int exercise, const std::string& report);

/// Prints "Exercise N: title", runs the grader and prints the verdict (with
/// the hints of hints_for when it fails). An
/// unfinished exercise (NotImplemented) prints its message, "Exercise N: not
/// implemented", and fails; any other exception fails with its message.
bool run_exercise(const Exercise& exercise, std::ostream& out);

}  // namespace glassllm::exercises
