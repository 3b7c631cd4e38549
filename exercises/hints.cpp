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

namespace glassllm::exercises {

namespace {

struct Hint {
  std::vector<std::string> when;    // texts of FAIL lines that point to it
  std::vector<std::string> unless;  // texts of FAIL lines that rule it out
  std::string text;
};

const std::vector<std::vector<Hint>>& all_hints() {
  static const std::vector<std::vector<Hint>> hints{
      {// 1: mul, exp, silu
       {{"my_mul"},
        {},
        "mul: da is dout * b and db is dout * a (each input's gradient "
        "uses the OTHER input)"},
       {{"my_exp"},
        {},
        "exp: the derivative is the forward's output y = e^x: reuse "
        "`out`, do not take exp(dout)"},
       {{"my_silu"},
        {},
        "silu: d/dx = s * (1 + x * (1 - s)); s alone forgets that x "
        "also multiplies s"}},
      {// 2: sum_to_shape, mul_broadcast
       {{"-> (2,1)", "-> (1,2,3)"},
        {},
        "sum the leading axes the target lacks first, "
        "then the length-1 axes WITH keepdims, so "
        "(4,2,3) -> (2,1) keeps its 1"},
       {{"-> ()", "scalar"},
        {},
        "an input of shape () (a scalar) needs every axis summed"},
       {{" * "},
        {"my_sum_to_shape"},
        "each input's gradient must have that input's "
        "shape: sum dout * b back to a.shape(), not to b's"}},
      {// 3: mean, max
       {{"my_mean axis 1 keep", "my_mean axis -1 keep"},
        {},
        "mean: dx = dout / n, where n is the length of the reduced axis only"},
       {{"axis 0 ", "axis -1 "},
        {" keep "},
        "without keepdims, put the reduced axis back (length 1) before broadcasting dout "
        "over it"},
       {{"my_max", "tie"},
        {},
        "max: only the entries equal to the max get gradient, "
        "split equally between ties"}},
      {// 4: softmax
       {{"(3,5) axis -1"},
        {},
        "dx = y * (dout - sum(dout * y)), not dout * y * (1 - y): "
        "every output depends on every input"},
       {{"axis 1", "axis 0"},
        {"(3,5) axis -1"},
        "the sum runs along the softmax axis, "
        "with keepdims, so it broadcasts back"},
       {{}, {}, "use the forward's output y (softmax(x)), not x"}},
      {// 5: matmul
       {{"(2,3,4) @ (2,4,5)"},
        {"(3,4) @ (4,5)"},
        "da = dout @ b^T and db = a^T @ dout, where ^T swaps only the LAST two axes"},
       {{": batch"},
        {"(2,3,4) @ (2,4,5)", "(3,4) @ (4,5)"},
        "broadcast batch axes: sum each gradient back to its input's shape (exercise 2)"},
       {{"(3,4) @ (4,5)"}, {}, "the order matters: a^T @ dout, not dout @ a^T"}},
      {// 6: repeat_kv
       {{"got dx [[1,1],[100,100]]"},
        {},
        "each input head has n_rep copies: add all their gradients, do not keep one"},
       {{"got dx [[101,101],[1010,1010]]"},
        {},
        "copies of one head are neighbours ([0,0,1,1]): reshape dout to [B, Hkv, n_rep, "
        "T, D], not [B, n_rep, Hkv, T, D] (the tiled order)"},
       {{"n_rep"},
        {"got dx [[1,1],[100,100]]", "got dx [[101,101],[1010,1010]]"},
        "sum over the n_rep axis (2 after that reshape), not over positions"}},
      {// 7: rmsnorm
       {{"D=1"},
        {},
        "dx = r * (dout - y * mean(dout * y)): the second term is the "
        "one usually lost"},
       {{"eps 1e-5"}, {"D=1"}, "mean (divide by D), not sum, over the last axis"},
       {{"eps 0.5"},
        {"eps 1e-5"},
        "r = 1 / sqrt(mean(x^2) + eps): eps inside the square "
        "root, as in the forward"}},
      {// 8: rope
       {{"start 0"},
        {"position 0 only"},
        "the backward uses the TRANSPOSE of rotate_half: concat(g2, -g1), "
        "not concat(-g2, g1)"},
       {{"start 7"},
        {"start 0"},
        "cos and sin belong to positions start .. start+T-1: "
        "pass `start` on"},
       {{"position 0 only"},
        {},
        "dx = dout * cos + rotate_half^T(dout * sin): cos with dout, sin "
        "inside"}},
      {// 9: the cache's append
       {{"expected (2,2,5,4)", "threw"},
        {},
        "positions are axis 2 of [B, Hkv, m, hd]: concatenate there, not on the heads "
        "(axis 1)"},
       {{"== concat(axis 2)", "model: incremental"},
        {"expected (2,2,5,4)", "threw"},
        "the shape is right but values sit in the wrong place: in [B, Hkv, m, hd] each "
        "(b, head) block of the result holds m + T rows of hd, held's m first, then "
        "fresh's T; check where each block starts (r * (m + T) * hd) and what goes "
        "there"},
       {{"result is detached"},
        {},
        "the result must be detached (the cache is for "
        "inference): detach() what you store"},
       {{"empty cache"},
        {"== concat(axis 2)"},
        "an undefined held means an empty cache: return fresh"}},
      {// 10: grouped attention
       {{"after every key"},
        {},
        "fold q so that row g*T + t of K/V head i is query head i*G + g (heads of a "
        "group "
        "are neighbours), not g*Hkv + i"},
       {{"no cache", "cache of 2"},
        {"after every key"},
        "in the folded rows the query position is query_start + (row mod T), not the row "
        "number: mask with that"},
       {{"after every key"},
        {},
        "scale the scores by 1/sqrt(hd) (head_dim, not d_model), "
        "and unfold back to [B, H, T, hd]"},
       {{"not copied"},
        {},
        "fold the queries instead of repeating K and V: no repeat_kv"}},
  };
  return hints;
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
  std::istringstream in(report);
  for (std::string line; std::getline(in, line);)
    if (line.size() >= 4 && line.compare(line.size() - 4, 4, "FAIL") == 0)
      failed.push_back(line);
  std::vector<std::string> chosen;
  if (exercise < 1 || exercise > int(all_hints().size())) return chosen;
  for (const Hint& h : all_hints()[std::size_t(exercise - 1)])
    if (any_contains(failed, h.when) && !any_contains(failed, h.unless))
      chosen.push_back(h.text);
  return chosen;
}

}  // namespace glassllm::exercises
