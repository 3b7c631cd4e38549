// hints.cpp: the hints a failing exercise prints, chosen by the checks that
// failed. Each hint names one usual mistake (found by writing each exercise
// wrong on purpose and reading what its grader said) and the checks that
// mistake fails: it is printed when a FAIL line of the report contains one
// of its `when` texts and none of its `unless` texts (a check that a
// different mistake would fail too). tests/planted_mistakes.sh plants one
// mistake per exercise in a copy of its solution and checks that the hint
// printed names it.
#include <sstream>

#include "exercises/grader.h"
#include "exercises/messages.h"

namespace glassllm::exercises {

namespace {

struct Hint {
  std::vector<std::string> when;    // texts of FAIL lines that point to it
  std::vector<std::string> unless;  // texts of FAIL lines that rule it out
  std::string text;
};

// The hints in one language. A `when` or `unless` text that is a check's
// label or a part of its detail comes from the same message as the check's
// line (messages.cpp), so the hints chosen are the same in every language.
// long-function: one table, every exercise's hints.
std::vector<std::vector<Hint>> hints_in(Language l) {
  auto t = [l](std::string_view id, MessageArgs args = {}) { return tr(l, id, args); };
  const std::string axis = t("word.axis");
  return {
      {// 1: mul, exp, silu
       {{"my_mul"}, {}, t("hint.1.mul")},
       {{"my_exp"}, {}, t("hint.1.exp")},
       {{"my_silu"}, {}, t("hint.1.silu")}},
      {// 2: sum_to_shape, mul_broadcast
       {{"-> (2,1)", "-> (1,2,3)"}, {}, t("hint.2.keepdims")},
       {{"-> ()", t("ex2.scalar")}, {}, t("hint.2.scalar")},
       {{" * "}, {"my_sum_to_shape"}, t("hint.2.shape")}},
      {// 3: mean, max
       {{"my_mean " + axis + " 1 keep", "my_mean " + axis + " -1 keep"},
        {},
        t("hint.3.mean")},
       {{axis + " 0 ", axis + " -1 "}, {" keep "}, t("hint.3.axis")},
       {{"my_max", t("ex3.tie")}, {}, t("hint.3.max")}},
      {// 4: softmax
       {{"(3,5) " + axis + " -1"}, {}, t("hint.4.formula")},
       {{axis + " 1", axis + " 0"}, {"(3,5) " + axis + " -1"}, t("hint.4.axis")},
       {{}, {}, t("hint.4.output")}},
      {// 5: matmul
       {{"(2,3,4) @ (2,4,5)"}, {"(3,4) @ (4,5)"}, t("hint.5.transpose")},
       {{": batch"}, {"(2,3,4) @ (2,4,5)", "(3,4) @ (4,5)"}, t("hint.5.batch")},
       {{"(3,4) @ (4,5)"}, {}, t("hint.5.order")}},
      {// 6: repeat_kv
       {{t("ex6.got_dx", {{"seen", "[[1,1],[100,100]]"}})}, {}, t("hint.6.sum")},
       {{t("ex6.got_dx", {{"seen", "[[101,101],[1010,1010]]"}})}, {}, t("hint.6.order")},
       {{"n_rep"},
        {t("ex6.got_dx", {{"seen", "[[1,1],[100,100]]"}}),
         t("ex6.got_dx", {{"seen", "[[101,101],[1010,1010]]"}})},
        t("hint.6.axis")}},
      {// 7: rmsnorm
       {{"D=1"}, {}, t("hint.7.term")},
       {{"eps 1e-5"}, {"D=1"}, t("hint.7.mean")},
       {{"eps 0.5"}, {"eps 1e-5"}, t("hint.7.eps")}},
      {// 8: rope
       {{"start 0"}, {t("ex8.position0")}, t("hint.8.transpose")},
       {{"start 7"}, {"start 0"}, t("hint.8.start")},
       {{t("ex8.position0")}, {}, t("hint.8.cos")}},
      {// 9: the cache's append
       {{t("check.expected_shape", {{"shape", "(2,2,5,4)"}}),
         t("check.threw", {{"message", ""}})},
        {},
        t("hint.9.axis")},
       {{t("ex9.concat"), t("ex9.model", {{"prompt", "1"}}),
         t("ex9.model", {{"prompt", "4"}})},
        {t("check.expected_shape", {{"shape", "(2,2,5,4)"}}),
         t("check.threw", {{"message", ""}})},
        t("hint.9.blocks")},
       {{t("ex9.detached")}, {}, t("hint.9.detach")},
       {{t("ex9.empty")}, {t("ex9.concat")}, t("hint.9.empty")}},
      {// 10: grouped attention
       {{t("ex10.after")}, {}, t("hint.10.fold")},
       {{t("ex10.no_cache"), t("ex10.cache2"), t("ex10.grad")},
        {t("ex10.after")},
        t("hint.10.mask")},
       {{t("ex10.after")}, {}, t("hint.10.scale")},
       {{t("ex10.not_copied")}, {}, t("hint.10.copies")}},
  };
}

const std::vector<std::vector<Hint>>& all_hints() {
  static const std::vector<std::vector<Hint>> english = hints_in(Language::en);
  static const std::vector<std::vector<Hint>> portuguese = hints_in(Language::pt);
  return current_language() == Language::pt ? portuguese : english;
}

bool any_contains(const std::vector<std::string>& lines,
                  const std::vector<std::string>& texts) {
  for (const std::string& line : lines)
    for (const std::string& t : texts)
      if (line.find(t) != std::string::npos) return true;
  return false;
}

}  // namespace

std::vector<std::string> common_mistakes(int exercise) {
  std::vector<std::string> texts;
  if (exercise >= 1 && exercise <= int(all_hints().size()))
    for (const Hint& h : all_hints()[std::size_t(exercise - 1)]) texts.push_back(h.text);
  return texts;
}

std::vector<std::string> hints_for(int exercise, const std::string& report) {
  std::vector<std::string> failed;  // the report's FAIL lines
  const std::string fail = tr("check.fail");
  std::istringstream in(report);
  for (std::string line; std::getline(in, line);)
    if (line.size() >= fail.size() &&
        line.compare(line.size() - fail.size(), fail.size(), fail) == 0)
      failed.push_back(line);
  std::vector<std::string> chosen;
  if (exercise < 1 || exercise > int(all_hints().size())) return chosen;
  for (const Hint& h : all_hints()[std::size_t(exercise - 1)])
    if (any_contains(failed, h.when) && !any_contains(failed, h.unless))
      chosen.push_back(h.text);
  return chosen;
}

}  // namespace glassllm::exercises
