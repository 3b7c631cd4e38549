// grader.cpp: what the graders of exercises 1-8 check (9 and 10, on a tiny
// model, are grader_model.cpp's), and running one. Every check prints one line
// (or one table row per input, for a gradient check) and a failure never stops
// the others, so a student sees everything that is wrong at once. The
// gradient checks are the engine's own (gradcheck.h) in float64.
#include "exercises/grader.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <sstream>

#include "exercises/exercises.h"
#include "exercises/grader_checks.h"
#include "exercises/messages.h"

namespace glassllm::exercises {

// ---- Exercise 1 ----------------------------------------------------------------

bool grade_elementwise(const BinaryFn& my_mul, const UnaryFn& my_exp,
                       const UnaryFn& my_silu, std::ostream& out) {
  Checker c(out);
  Tensor a = randn64({2, 3}, 1), b = randn64({2, 3}, 2), x = randn64({3, 4}, 3) * 2.0;
  c.close(
      "forward: my_mul == mul", [&] { return my_mul(a, b); }, mul(a, b));
  c.close(
      "forward: my_exp == exp", [&] { return my_exp(x); }, exp(x));
  c.close(
      "forward: my_silu == silu", [&] { return my_silu(x); }, silu(x));
  c.grad("my_mul (2,3)*(2,3)", [&](const auto& in) { return my_mul(in[0], in[1]); },
         {a, b});
  c.grad(tr("check.used_twice", {{"expr", "my_mul(x, x)"}}),
         [&](const auto& in) { return my_mul(in[0], in[0]); }, {a});
  c.grad("my_exp", [&](const auto& in) { return my_exp(in[0]); }, {x});
  c.grad("my_exp(my_exp(x))", [&](const auto& in) { return my_exp(my_exp(in[0])); },
         {randn64({5}, 4)});
  c.grad("my_silu", [&](const auto& in) { return my_silu(in[0]); }, {x});
  return c.passed();
}

// ---- Exercise 2 ----------------------------------------------------------------

bool grade_broadcasting(
    const std::function<Tensor(const Tensor&, const Shape&)>& my_sum_to_shape,
    const BinaryFn& my_mul_broadcast, std::ostream& out) {
  Checker c(out);
  struct Case {
    Shape from, to;
  };
  for (const Case& k : std::vector<Case>{{{4, 2, 3}, {2, 1}},
                                         {{4, 2, 3}, {3}},
                                         {{4, 2, 3}, {1, 2, 3}},
                                         {{2, 3}, {}},
                                         {{2, 3}, {2, 3}}}) {
    Tensor g = randn64(k.from, 5);
    c.close(
        "my_sum_to_shape " + shape_str(k.from) + " -> " + shape_str(k.to),
        [&] { return my_sum_to_shape(g, k.to); }, sum_to_shape(g, k.to));
  }
  auto mb = [&](const std::vector<Tensor>& in) { return my_mul_broadcast(in[0], in[1]); };
  c.grad("(4,1,3) * (2,3)", mb, {randn64({4, 1, 3}, 6), randn64({2, 3}, 7)});
  c.grad(tr("ex2.scalar"), mb, {randn64({2, 3}, 8), randn64({}, 9)});
  c.grad("(3,1) * (1,4)", mb, {randn64({3, 1}, 10), randn64({1, 4}, 11)});
  c.grad("(2,3) * (2,3)", mb, {randn64({2, 3}, 12), randn64({2, 3}, 13)});
  c.grad(tr("check.x_used_twice", {{"expr", "x * (x * y)"}}),
         [&](const auto& in) {
           return my_mul_broadcast(in[0], my_mul_broadcast(in[0], in[1]));
         },
         {randn64({3, 1}, 14), randn64({3, 4}, 15)});
  return c.passed();
}

// ---- Exercise 3 ----------------------------------------------------------------

bool grade_reductions(const std::function<Tensor(const Tensor&, int, bool)>& my_mean,
                      const std::function<Tensor(const Tensor&, int, bool)>& my_max,
                      std::ostream& out) {
  Checker c(out);
  Tensor x = randn64({2, 3, 4}, 16);
  struct Case {
    int axis;
    bool keepdims;
  };
  const std::vector<Case> cases{{0, false}, {1, true}, {-1, false}, {-1, true}};
  for (const Case& k : cases) {
    std::string tag =
        tr("word.axis") + " " + std::to_string(k.axis) + (k.keepdims ? ", keepdims" : "");
    c.close(
        "forward: my_mean == mean, " + tag,
        [&] { return my_mean(x, k.axis, k.keepdims); }, mean(x, {k.axis}, k.keepdims));
    c.close(
        "forward: my_max == max, " + tag, [&] { return my_max(x, k.axis, k.keepdims); },
        max(x, k.axis, k.keepdims));
  }
  for (const Case& k : cases) {
    std::string tag =
        tr("word.axis") + " " + std::to_string(k.axis) + (k.keepdims ? " keep" : "");
    c.grad("my_mean " + tag,
           [&](const auto& in) { return my_mean(in[0], k.axis, k.keepdims); }, {x});
  }
  for (const Case& k : cases) {
    std::string tag =
        tr("word.axis") + " " + std::to_string(k.axis) + (k.keepdims ? " keep" : "");
    c.grad("my_max " + tag,
           [&](const auto& in) { return my_max(in[0], k.axis, k.keepdims); }, {x});
  }
  c.grad(tr("check.used_twice", {{"expr", "my_max(x) * x"}}),
         [&](const auto& in) { return my_max(in[0], 1, true) * in[0]; }, {x});
  // A tie is not differentiable, so no finite differences there: check the
  // rule itself. max of [1, 3, 3] along its axis; each 3 gets half of dout.
  const std::string tie = tr("ex3.tie");
  c.guarded(tie, [&] {
    Tensor t = tensor({1.0, 3.0, 3.0}, DType::float64).requires_grad_();
    my_max(t, 0, false).backward();
    std::vector<double> g =
        t.grad().defined() ? t.grad().to_vector() : std::vector<double>{};
    bool ok = g.size() == 3 && g[0] == 0 && g[1] == 0.5 && g[2] == 0.5;
    std::string seen = g.size() == 3 ? "[" + fmt("%g", g[0]) + "," + fmt("%g", g[1]) +
                                           "," + fmt("%g", g[2]) + "]"
                                     : tr("check.no_gradient");
    c.expect(tie, ok, tr("check.got", {{"seen", seen}}));
  });
  return c.passed();
}

// ---- Exercise 4 ----------------------------------------------------------------

bool grade_softmax(const std::function<Tensor(const Tensor&, int)>& my_softmax,
                   std::ostream& out) {
  Checker c(out);
  Tensor x = randn64({3, 5}, 17) * 2.0, y = randn64({2, 3, 4}, 18);
  c.close(
      "forward: my_softmax == softmax, " + tr("word.axis") + " -1",
      [&] { return my_softmax(x, -1); }, softmax(x, -1));
  c.close(
      "forward: my_softmax == softmax, " + tr("word.axis") + " 1",
      [&] { return my_softmax(y, 1); }, softmax(y, 1));
  const std::string axis = tr("word.axis");
  c.grad("(3,5) " + axis + " -1", [&](const auto& in) { return my_softmax(in[0], -1); },
         {x});
  c.grad("(2,3,4) " + axis + " 1", [&](const auto& in) { return my_softmax(in[0], 1); },
         {y});
  c.grad("(2,3,4) " + axis + " 0", [&](const auto& in) { return my_softmax(in[0], 0); },
         {y});
  c.grad(tr("check.used_twice", {{"expr", "softmax(x) * x"}}),
         [&](const auto& in) { return my_softmax(in[0], -1) * in[0]; }, {x});
  return c.passed();
}

// ---- Exercise 5 ----------------------------------------------------------------

bool grade_matmul(const BinaryFn& my_matmul, std::ostream& out) {
  Checker c(out);
  Tensor a = randn64({2, 3, 4}, 19), b = randn64({2, 4, 5}, 20);
  c.close(
      "forward: my_matmul == matmul", [&] { return my_matmul(a, b); }, matmul(a, b));
  auto mm = [&](const std::vector<Tensor>& in) { return my_matmul(in[0], in[1]); };
  c.grad("(3,4) @ (4,5)", mm, {randn64({3, 4}, 21), randn64({4, 5}, 22)});
  c.grad("(2,3,4) @ (2,4,5)", mm, {a, b});
  c.grad("(2,1,3,4) @ (3,4,2): batch", mm,
         {randn64({2, 1, 3, 4}, 23), randn64({3, 4, 2}, 24)});
  c.grad("(3,4) @ (2,4,5): batch", mm, {randn64({3, 4}, 25), randn64({2, 4, 5}, 26)});
  c.grad(tr("check.used_twice", {{"expr", "x @ x"}}),
         [&](const auto& in) { return my_matmul(in[0], in[0]); },
         {randn64({2, 3, 3}, 27)});
  return c.passed();
}

// ---- Exercise 6 ----------------------------------------------------------------

bool grade_repeat_kv(
    const std::function<Tensor(const Tensor&, std::size_t)>& my_repeat_kv,
    std::ostream& out) {
  Checker c(out);
  // The walkthrough: two K/V heads holding [1,2] and [3,4], each repeated
  // twice, so output heads 0 and 1 are copies of K/V head 0 and heads 2 and 3
  // of K/V head 1. Each output head gets its own dout (1, 10, 100, 1000), so
  // the right sum is [[11,11],[1100,1100]]; summing the copies in the tiled
  // order (heads 0 and 2, then 1 and 3) gives [[101,101],[1010,1010]], and
  // keeping one copy [[1,1],[100,100]]: every usual mistake shows.
  const std::string walk = tr("ex6.walk");
  c.guarded(walk, [&] {
    Tensor x = tensor({{{{1.0, 2.0}}, {{3.0, 4.0}}}}, DType::float64).requires_grad_();
    Tensor head_weight = tensor({{{{1.0}}, {{10.0}}, {{100.0}}, {{1000.0}}}},
                                DType::float64);  // [1,4,1,1]
    sum(my_repeat_kv(x, 2) * head_weight).backward();
    std::vector<double> g =
        x.grad().defined() ? x.grad().to_vector() : std::vector<double>{};
    std::string seen = tr("check.no_gradient");
    if (g.size() == 4)
      seen = "[[" + fmt("%g", g[0]) + "," + fmt("%g", g[1]) + "],[" + fmt("%g", g[2]) +
             "," + fmt("%g", g[3]) + "]]";
    bool ok = g == std::vector<double>{11, 11, 1100, 1100};
    c.expect(walk, ok,
             tr("ex6.walk_detail", {{"got", tr("ex6.got_dx", {{"seen", seen}})}}));
  });
  Tensor x = randn64({2, 2, 3, 4}, 28);
  c.close(
      "forward: my_repeat_kv == repeat_kv, n_rep 2", [&] { return my_repeat_kv(x, 2); },
      repeat_kv(x, 2));
  c.grad("n_rep 2, (2,2,3,4)", [&](const auto& in) { return my_repeat_kv(in[0], 2); },
         {x});
  c.grad("n_rep 3, (1,2,2,3)", [&](const auto& in) { return my_repeat_kv(in[0], 3); },
         {randn64({1, 2, 2, 3}, 29)});
  c.grad("n_rep 1, (1,3,2,2)", [&](const auto& in) { return my_repeat_kv(in[0], 1); },
         {randn64({1, 3, 2, 2}, 30)});
  c.grad(tr("check.used_twice", {{"expr", "r(x) * r(x)"}}),
         [&](const auto& in) { return my_repeat_kv(in[0], 2) * my_repeat_kv(in[0], 2); },
         {randn64({1, 2, 2, 3}, 31)});
  return c.passed();
}

// ---- Exercise 7 ----------------------------------------------------------------

bool grade_rmsnorm(const std::function<Tensor(const Tensor&, double)>& my_rmsnorm,
                   std::ostream& out) {
  Checker c(out);
  Tensor x = randn64({2, 3, 8}, 32), y = randn64({4, 6}, 33);
  c.close(
      "forward: my_rmsnorm == rmsnorm", [&] { return my_rmsnorm(x, 1e-5); },
      rmsnorm(x, 1e-5));
  c.grad("(2,3,8) eps 1e-5", [&](const auto& in) { return my_rmsnorm(in[0], 1e-5); },
         {x});
  c.grad("(4,6) eps 0.5", [&](const auto& in) { return my_rmsnorm(in[0], 0.5); }, {y});
  // One feature (D = 1): the mean over the last axis is the sum, so a backward
  // that sums where it should average passes here while one that lost the
  // second term fails; the hints tell the two mistakes apart by this check.
  c.grad("(3,1) D=1 eps 0.5", [&](const auto& in) { return my_rmsnorm(in[0], 0.5); },
         {randn64({3, 1}, 36)});
  c.grad(tr("check.used_twice", {{"expr", "rmsnorm(x) * x"}}),
         [&](const auto& in) { return my_rmsnorm(in[0], 1e-5) * in[0]; }, {y});
  return c.passed();
}

// ---- Exercise 8 ----------------------------------------------------------------

bool grade_rope(const std::function<Tensor(const Tensor&, std::size_t, double)>& my_rope,
                std::ostream& out) {
  Checker c(out);
  Tensor x = randn64({1, 2, 5, 8}, 34), y = randn64({2, 3, 4}, 35);
  c.close(
      "forward: my_rope == rope, start 0", [&] { return my_rope(x, 0, 10000.0); },
      rope(x, 0, 10000.0));
  c.close(
      "forward: my_rope == rope, start 7, theta 100",
      [&] { return my_rope(y, 7, 100.0); }, rope(y, 7, 100.0));
  c.grad("(1,2,5,8) start 0", [&](const auto& in) { return my_rope(in[0], 0, 10000.0); },
         {x});
  // Position 0 only: cos is 1 and sin is 0, so the backward is dout whatever
  // rotate_half^T does; a backward that swapped cos and sin fails here, one
  // with the wrong rotation passes (the hints tell them apart by this check).
  c.grad(tr("ex8.position0"), [&](const auto& in) { return my_rope(in[0], 0, 10000.0); },
         {randn64({1, 1, 1, 8}, 37)});
  c.grad("(2,3,4) start 7 theta 100",
         [&](const auto& in) { return my_rope(in[0], 7, 100.0); }, {y});
  c.grad(tr("check.used_twice", {{"expr", "my_rope(x) * x"}}),
         [&](const auto& in) { return my_rope(in[0], 3, 10000.0) * in[0]; }, {y});
  return c.passed();
}

// ---- running one ---------------------------------------------------------------

namespace {

// A report line wider than a projector shows (100 columns, counted in
// characters) is broken at spaces; its continuation lines are indented 4
// more than the line.
// The byte where column `col` (from 0) of s starts: UTF-8 letters may take
// more than one byte. s.size() when s is narrower.
std::size_t byte_of_column(const std::string& s, std::size_t col) {
  std::size_t byte = 0;
  for (std::size_t seen = 0; byte < s.size(); ++byte)
    if ((static_cast<unsigned char>(s[byte]) & 0xC0) != 0x80 && seen++ == col) break;
  return byte;
}

std::string wrapped(const std::string& text, std::size_t width = 100) {
  std::ostringstream out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const std::size_t indent = line.find_first_not_of(' ') + 4;
    while (columns(line) > width) {
      std::size_t cut = line.rfind(' ', byte_of_column(line, width));
      if (cut == std::string::npos || cut <= indent) break;  // one long word: leave it
      out << line.substr(0, cut) << "\n";
      line = std::string(indent, ' ') + line.substr(line.find_first_not_of(' ', cut));
    }
    out << line << "\n";
  }
  return out.str();
}

}  // namespace

bool run_exercise(const Exercise& e, std::ostream& out) {
  const std::string n = std::to_string(e.number);
  out << tr("run.header", {{"n", n}, {"title", e.title}}) << "\n";
  bool ok = false;
  // The report is kept whole (one line per check) to choose the hints by the
  // checks that failed, then printed wrapped to 100 columns.
  std::ostringstream report;
  try {
    ok = e.grade(report);
    if (!ok) {
      std::vector<std::string> hints = hints_for(e.number, report.str());
      std::string listed;
      if (hints.empty()) {  // no check pointed to one: the usual mistakes
        listed = "  " + tr("run.usual") + "\n";
        hints = common_mistakes(e.number);
      }
      for (const std::string& hint : hints)
        listed += "  " + tr("run.hint", {{"text", hint}}) + "\n";
      out << wrapped(report.str() + listed);
    } else {
      out << wrapped(report.str());
    }
  } catch (const NotImplemented& ex) {
    out << wrapped(report.str() + "  " +
                   tr("run.todo", {{"message", ex.what()}, {"file", e.name + ".cpp"}}) +
                   "\n");
  } catch (const std::exception& ex) {
    out << wrapped(report.str() + "  " + tr("run.error", {{"message", ex.what()}}) +
                   "\n");
  }
  out << tr(ok ? "run.pass" : "run.fail", {{"n", n}, {"name", e.name}}) << "\n";
  return ok;
}

}  // namespace glassllm::exercises
