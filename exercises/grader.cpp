// grader.cpp: what each exercise's grader checks. Every check prints one line
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

namespace glassllm::exercises {

namespace {

std::string index_str(const std::vector<std::size_t>& index) {
  std::string s = "(";
  for (std::size_t i = 0; i < index.size(); ++i)
    s += (i ? "," : "") + std::to_string(index[i]);
  return s + (index.size() == 1 ? ",)" : ")");
}

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  std::vector<double> x = a.to_vector(), y = b.to_vector();
  double m = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    double d = std::fabs(x[i] - y[i]);
    if (std::isnan(d)) return INFINITY;
    m = std::max(m, d);
  }
  return m;
}

// Random float64 inputs from a fixed seed, so a failure repeats.
Tensor randn64(const Shape& shape, std::uint64_t seed) {
  return randn(shape, seed, DType::float64);
}

// The first entry of d sum(f(inputs)) / d inputs[which] (dout = 1
// everywhere) where the backward and central differences disagree beyond the
// gradient checker's tolerance.
struct WrongEntry {
  bool found = false;
  std::vector<std::size_t> index;
  double analytic = 0, numeric = 0;
};
WrongEntry first_wrong_entry(const TensorFn& f, const std::vector<Tensor>& inputs,
                             std::size_t which) {
  const GradCheckOptions o;
  std::vector<Tensor> xs;
  for (const Tensor& in : inputs)
    xs.push_back(
        from_vector(in.to_vector(), in.shape(), DType::float64).requires_grad_());
  {
    Tensor out = f(xs);
    if (out.requires_grad()) sum(out).backward();
  }
  const Tensor analytic =
      xs[which].grad().defined() ? xs[which].grad() : zeros_like(xs[which]);
  no_grad guard;
  double* x = xs[which].mutable_data<double>();
  WrongEntry w;
  for (std::size_t j = 0; j < xs[which].size(); ++j) {
    const double saved = x[j];
    x[j] = saved + o.eps;
    const double plus = sum(f(xs)).item();
    x[j] = saved - o.eps;
    const double minus = sum(f(xs)).item();
    x[j] = saved;
    const double numeric = (plus - minus) / (2 * o.eps);
    const double a = analytic.data<double>()[j];
    if (!(std::fabs(a - numeric) <= o.atol + o.rtol * std::fabs(numeric))) {
      w.found = true;
      w.analytic = a;
      w.numeric = numeric;
      const Shape& shape = xs[which].shape();
      w.index.assign(shape.size(), 0);
      for (std::size_t k = shape.size(), flat = j; k-- > 0; flat /= shape[k])
        w.index[k] = flat % shape[k];
      return w;
    }
  }
  return w;
}

// Runs the checks of one exercise and prints them.
class Checker {
 public:
  explicit Checker(std::ostream& out) : out_(out) {}
  bool passed() const { return passed_; }

  // A check that is true or false, with what was seen.
  void expect(const std::string& what, bool ok, const std::string& detail) {
    line(what, detail, ok);
  }

  // got == want up to tol: shapes equal, max |got - want| <= tol.
  void close(const std::string& what, const std::function<Tensor()>& got,
             const Tensor& want, double tol = 1e-12) {
    guarded(what, [&] {
      Tensor g = got();
      if (!g.defined() || g.shape() != want.shape()) {
        line(what,
             "shape " + (g.defined() ? shape_str(g.shape()) : std::string("undefined")) +
                 ", expected " + shape_str(want.shape()),
             false);
        return;
      }
      double d = max_abs_diff(g, want);
      std::string detail =
          "max diff " + fmt("%.1e", d) + " (tol " + fmt("%.0e", tol) + ")";
      if (!(d <= tol)) {
        // Where it starts: the first element off by more than tol.
        std::vector<double> x = g.to_vector(), y = want.to_vector();
        for (std::size_t j = 0; j < x.size(); ++j)
          if (!(std::fabs(x[j] - y[j]) <= tol)) {
            std::vector<std::size_t> index(want.ndim());
            for (std::size_t k = index.size(), flat = j; k-- > 0; flat /= want.shape()[k])
              index[k] = flat % want.shape()[k];
            detail += "; first at index " + index_str(index) + ": expected " +
                      fmt("%.6g", y[j]) + ", got " + fmt("%.6g", x[j]);
            break;
          }
      }
      line(what, detail, d <= tol);
    });
  }

  // The engine's gradient checker on f, one table row per input. `names`
  // names the inputs in failure messages (default: x, or a, b, ...).
  void grad(const std::string& name, const TensorFn& f, const std::vector<Tensor>& inputs,
            std::vector<std::string> names = {}) {
    if (names.size() != inputs.size()) {
      names.clear();
      for (std::size_t i = 0; i < inputs.size(); ++i)
        names.push_back(inputs.size() == 1 ? "x" : std::string(1, char('a' + i)));
    }
    guarded(name, [&] {
      GradCheckResult r = gradcheck(f, inputs, GradCheckOptions{}, name);
      if (!table_) {
        GradCheckOptions o;
        out_ << "  gradient checks (float64, eps " << o.eps << ", atol " << o.atol
             << ", rtol " << o.rtol
             << "): analytic = backward(), numeric = "
                "central differences\n";
        char head[200];
        std::snprintf(head, sizeof head, "  %-30s %5s %-12s %-11s %12s %12s %8s %8s\n",
                      "case", "input", "shape", "worst index", "analytic", "numeric",
                      "abs err", "rel err");
        out_ << head;
        table_ = true;
      }
      for (const InputCheck& c : r.inputs) {
        char row[240];
        std::snprintf(row, sizeof row,
                      "  %-30s %5zu %-12s %-11s %12.6f %12.6f %8.1e %8.1e  %s\n",
                      name.c_str(), c.input, shape_str(c.shape).c_str(),
                      index_str(c.worst_index).c_str(), c.analytic, c.numeric,
                      c.max_abs_err, c.max_rel_err, c.passed ? "PASS" : "FAIL");
        out_ << row;
      }
      for (const InputCheck& c : r.inputs)
        if (!c.passed) explain_wrong_entry(name, f, inputs, c, names[c.input]);
      passed_ = passed_ && r.passed;
    });
  }

  // Says which gradient entry is wrong in terms a student can recompute: the
  // input by name, the index, and d sum(f) / d input[index] (every dout 1)
  // from the backward and from central differences. When summing hides the
  // error (softmax's gradient of a sum is 0 whatever the backward does), the
  // checker's own weighted sum is shown instead, saying what it is.
  void explain_wrong_entry(const std::string& name, const TensorFn& f,
                           const std::vector<Tensor>& inputs, const InputCheck& c,
                           const std::string& input_name) {
    const std::string where = "    -> " + name + ": input " + std::to_string(c.input) +
                              " (" + input_name + ", " + shape_str(c.shape) +
                              ") at index ";
    WrongEntry w = first_wrong_entry(f, inputs, c.input);
    if (w.found) {
      out_ << where << index_str(w.index) << ": with dout = 1 everywhere, your backward "
           << "gives d" << input_name << index_str(w.index) << " = "
           << fmt("%.6f", w.analytic) << ", central differences of sum(f) give "
           << fmt("%.6f", w.numeric) << "\n";
    } else {
      out_ << where << index_str(c.worst_index) << ": with dout = R (fixed random "
           << "numbers of the output's shape, seed 0), your backward gives d"
           << input_name << index_str(c.worst_index) << " = " << fmt("%.6f", c.analytic)
           << ", central differences of sum(f * R) give " << fmt("%.6f", c.numeric)
           << " (with dout = 1 everywhere the two agree)\n";
    }
  }

  // Runs a check; an exception from the code under test fails it with its
  // message. NotImplemented goes up: the whole exercise is not done yet.
  void guarded(const std::string& what, const std::function<void()>& body) {
    try {
      body();
    } catch (const NotImplemented&) {
      throw;
    } catch (const std::exception& e) {
      line(what, std::string("threw: ") + e.what(), false);
    }
  }

 private:
  void line(const std::string& what, const std::string& detail, bool ok) {
    table_ = false;  // a table that follows gets its header again
    char buf[64];
    std::snprintf(buf, sizeof buf, "  %-44s ", what.c_str());
    out_ << buf << detail << "  " << (ok ? "PASS" : "FAIL") << "\n";
    passed_ = passed_ && ok;
  }

  std::ostream& out_;
  bool passed_ = true;
  bool table_ = false;
};

// A tiny float64 model for exercises 9 and 10, and its tokens.
GlassLM tiny_model() {
  Config cfg;
  cfg.vocab_size = 11;
  cfg.d_model = 16;
  cfg.n_layers = 2;
  cfg.n_heads = 4;
  cfg.n_kv_heads = 2;
  cfg.d_ff = 24;
  cfg.max_len = 16;
  return GlassLM(cfg, 0, DType::float64);
}
const std::vector<std::int64_t> kTokens{3, 1, 4, 1, 5, 9, 2, 6, 5, 3};
const std::vector<std::int64_t> kTargets{1, 4, 1, 5, 9, 2, 6, 5, 3, 5};

// Prefill `prompt` tokens, then one token per step; all logits [1, n, V].
Tensor decode_all(const GlassLM& model, Cache& cache, std::size_t prompt) {
  std::vector<Tensor> parts;
  std::vector<std::int64_t> first(kTokens.begin(),
                                  kTokens.begin() + std::ptrdiff_t(prompt));
  parts.push_back(model.forward(first, &cache, 0));
  for (std::size_t i = prompt; i < kTokens.size(); ++i)
    parts.push_back(model.forward(std::vector<std::int64_t>{kTokens[i]}, &cache, i));
  return concat(parts, 1);
}

}  // namespace

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
  c.grad("my_mul(x, x): used twice", [&](const auto& in) { return my_mul(in[0], in[0]); },
         {a});
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
  c.grad("(2,3) * () scalar", mb, {randn64({2, 3}, 8), randn64({}, 9)});
  c.grad("(3,1) * (1,4)", mb, {randn64({3, 1}, 10), randn64({1, 4}, 11)});
  c.grad("(2,3) * (2,3)", mb, {randn64({2, 3}, 12), randn64({2, 3}, 13)});
  c.grad("x * (x * y): x used twice",
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
    std::string tag = "axis " + std::to_string(k.axis) + (k.keepdims ? ", keepdims" : "");
    c.close(
        "forward: my_mean == mean, " + tag,
        [&] { return my_mean(x, k.axis, k.keepdims); }, mean(x, {k.axis}, k.keepdims));
    c.close(
        "forward: my_max == max, " + tag, [&] { return my_max(x, k.axis, k.keepdims); },
        max(x, k.axis, k.keepdims));
  }
  for (const Case& k : cases) {
    std::string tag = "axis " + std::to_string(k.axis) + (k.keepdims ? " keep" : "");
    c.grad("my_mean " + tag,
           [&](const auto& in) { return my_mean(in[0], k.axis, k.keepdims); }, {x});
  }
  for (const Case& k : cases) {
    std::string tag = "axis " + std::to_string(k.axis) + (k.keepdims ? " keep" : "");
    c.grad("my_max " + tag,
           [&](const auto& in) { return my_max(in[0], k.axis, k.keepdims); }, {x});
  }
  c.grad("my_max(x) * x: used twice",
         [&](const auto& in) { return my_max(in[0], 1, true) * in[0]; }, {x});
  // A tie is not differentiable, so no finite differences there: check the
  // rule itself. max of [1, 3, 3] along its axis; each 3 gets half of dout.
  c.guarded("my_max tie [1,3,3]: gradient [0,0.5,0.5]", [&] {
    Tensor t = tensor({1.0, 3.0, 3.0}, DType::float64).requires_grad_();
    my_max(t, 0, false).backward();
    std::vector<double> g =
        t.grad().defined() ? t.grad().to_vector() : std::vector<double>{};
    bool ok = g.size() == 3 && g[0] == 0 && g[1] == 0.5 && g[2] == 0.5;
    std::string seen = g.size() == 3 ? "[" + fmt("%g", g[0]) + "," + fmt("%g", g[1]) +
                                           "," + fmt("%g", g[2]) + "]"
                                     : "no gradient";
    c.expect("my_max tie [1,3,3]: gradient [0,0.5,0.5]", ok, "got " + seen);
  });
  return c.passed();
}

// ---- Exercise 4 ----------------------------------------------------------------

bool grade_softmax(const std::function<Tensor(const Tensor&, int)>& my_softmax,
                   std::ostream& out) {
  Checker c(out);
  Tensor x = randn64({3, 5}, 17) * 2.0, y = randn64({2, 3, 4}, 18);
  c.close(
      "forward: my_softmax == softmax, axis -1", [&] { return my_softmax(x, -1); },
      softmax(x, -1));
  c.close(
      "forward: my_softmax == softmax, axis 1", [&] { return my_softmax(y, 1); },
      softmax(y, 1));
  c.grad("(3,5) axis -1", [&](const auto& in) { return my_softmax(in[0], -1); }, {x});
  c.grad("(2,3,4) axis 1", [&](const auto& in) { return my_softmax(in[0], 1); }, {y});
  c.grad("(2,3,4) axis 0", [&](const auto& in) { return my_softmax(in[0], 0); }, {y});
  c.grad("my_softmax(x) * x: used twice",
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
  c.grad("x @ x: used twice", [&](const auto& in) { return my_matmul(in[0], in[0]); },
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
  const std::string walk = "walkthrough: dout 1,10,100,1000 per output head";
  c.guarded(walk, [&] {
    Tensor x = tensor({{{{1.0, 2.0}}, {{3.0, 4.0}}}}, DType::float64).requires_grad_();
    Tensor head_weight = tensor({{{{1.0}}, {{10.0}}, {{100.0}}, {{1000.0}}}},
                                DType::float64);  // [1,4,1,1]
    sum(my_repeat_kv(x, 2) * head_weight).backward();
    std::vector<double> g =
        x.grad().defined() ? x.grad().to_vector() : std::vector<double>{};
    std::string seen = "no gradient";
    if (g.size() == 4)
      seen = "[[" + fmt("%g", g[0]) + "," + fmt("%g", g[1]) + "],[" + fmt("%g", g[2]) +
             "," + fmt("%g", g[3]) + "]]";
    bool ok = g == std::vector<double>{11, 11, 1100, 1100};
    c.expect(walk, ok,
             "x = [[1,2],[3,4]]: got dx " + seen + ", expected [[11,11],[1100,1100]]");
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
  c.grad("r(x) * r(x): used twice",
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
  c.grad("my_rmsnorm(x) * x: used twice",
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
  c.grad("(2,3,4) start 7 theta 100",
         [&](const auto& in) { return my_rope(in[0], 7, 100.0); }, {y});
  c.grad("my_rope(x) * x: used twice",
         [&](const auto& in) { return my_rope(in[0], 3, 10000.0) * in[0]; }, {y});
  return c.passed();
}

// ---- Exercise 9 ----------------------------------------------------------------

namespace {

// "" if two caches hold the same keys and values (up to 1e-12); otherwise
// where they first differ, earliest position first (a mistake shows where
// it starts), then layer, head, K before V, dimension:
// "layer 0, K/V head 1, position 3, keys[.., 2]: expected 0.418, got -1.02".
std::string first_cache_mismatch(const Cache& mine, const Cache& reference) {
  for (std::size_t l = 0; l < reference.size(); ++l)
    if (mine[l].length() != reference[l].length() ||
        mine[l].k().shape() != reference[l].k().shape())
      return "layer " + std::to_string(l) + ": the cache holds " +
             std::to_string(mine[l].length()) + " positions, keys " +
             shape_str(mine[l].k().shape()) + "; expected " +
             std::to_string(reference[l].length()) + ", keys " +
             shape_str(reference[l].k().shape());
  const Shape& s = reference[0].k().shape();  // [1, Hkv, m, hd]
  for (std::size_t p = 0; p < s[2]; ++p)
    for (std::size_t l = 0; l < reference.size(); ++l)
      for (std::size_t h = 0; h < s[1]; ++h)
        for (int kv = 0; kv < 2; ++kv)
          for (std::size_t d = 0; d < s[3]; ++d) {
            const Tensor& a = kv ? mine[l].v() : mine[l].k();
            const Tensor& b = kv ? reference[l].v() : reference[l].k();
            const double got = a.at({0, h, p, d}), want = b.at({0, h, p, d});
            if (!(std::fabs(got - want) <= 1e-12))
              return "layer " + std::to_string(l) + ", K/V head " + std::to_string(h) +
                     ", position " + std::to_string(p) + ", " + (kv ? "values" : "keys") +
                     "[.., " + std::to_string(d) + "]: expected " + fmt("%.6g", want) +
                     ", got " + fmt("%.6g", got);
          }
  return "";
}

}  // namespace

bool grade_kv_cache(const CacheAppendFn& my_cache_append, std::ostream& out) {
  Checker c(out);
  Tensor held = randn64({2, 2, 3, 4}, 36), fresh = randn64({2, 2, 2, 4}, 37);
  c.close(
      "empty cache + 2 positions", [&] { return my_cache_append(Tensor(), fresh); },
      fresh);
  std::vector<double> before = held.to_vector();
  c.close(
      "3 held + 2 new == concat(axis 2)", [&] { return my_cache_append(held, fresh); },
      concat({held, fresh}, 2));
  c.expect("held is left unchanged", held.to_vector() == before,
           held.to_vector() == before ? "same values" : "held was written");
  c.guarded("result is detached", [&] {
    Tensor f = fresh.detach().requires_grad_();
    Tensor next = my_cache_append(held, f * 1.0);
    c.expect("result is detached", !next.requires_grad(),
             next.requires_grad()
                 ? "it requires grad: detach it (the cache is for inference)"
                 : "requires_grad() is false");
  });

  // The real model, decoding with your append in every layer. The cache is
  // compared with the engine's, position by position, so a failure names the
  // first layer, K/V head and position that differ.
  GlassLM model = tiny_model();
  Tensor full;
  {
    no_grad guard;
    full = model.forward(kTokens);
  }
  for (std::size_t prompt : {std::size_t(1), std::size_t(4)}) {
    const std::string what =
        "model: incremental == full, prompt " + std::to_string(prompt);
    c.guarded(what, [&] {
      no_grad guard;
      Cache mine = model.new_cache(), reference = model.new_cache();
      for (KVCache& layer : mine) layer.append_fn = my_cache_append;
      Tensor logits = decode_all(model, mine, prompt);
      decode_all(model, reference, prompt);
      std::string where = first_cache_mismatch(mine, reference);
      if (!where.empty()) {
        c.expect(what, false, where);
        return;
      }
      c.close(
          what, [&] { return logits; }, full, 1e-10);
    });
  }
  return c.passed();
}

// ---- Exercise 10 ---------------------------------------------------------------

namespace {

// The reference path, built from the engine's ops: copy K/V to H heads.
Tensor reference_attention(const Tensor& q, const Tensor& keys, const Tensor& values,
                           std::size_t query_start, std::size_t key_start) {
  std::size_t G = q.dim(1) / keys.dim(1);
  Tensor scores = matmul_t(q, repeat_kv(keys, G)) * (1.0 / std::sqrt(double(q.dim(3))));
  return matmul(causal_softmax(scores, query_start, key_start), repeat_kv(values, G));
}

// Whether the graph behind t contains an op named `op`.
bool graph_has(const Tensor& t, const std::string& op) {
  std::vector<Tensor> stack{t};
  std::vector<const Node*> seen;
  while (!stack.empty()) {
    Tensor n = stack.back();
    stack.pop_back();
    if (std::find(seen.begin(), seen.end(), n.node()) != seen.end()) continue;
    seen.push_back(n.node());
    if (n.op() == op) return true;
    for (const Tensor& p : n.parents()) stack.push_back(p);
  }
  return false;
}

}  // namespace

bool grade_grouped_attention(const AttentionFn& my_attention, std::ostream& out) {
  Checker c(out);
  // q [1, 4, 3, 4] against 5 keys of 2 K/V heads: no cache (keys = the 3 new
  // positions) and a cache (2 earlier positions, then the 3 new ones).
  Tensor q = randn64({1, 4, 3, 4}, 38);
  Tensor k3 = randn64({1, 2, 3, 4}, 39), v3 = randn64({1, 2, 3, 4}, 40);
  Tensor k5 = randn64({1, 2, 5, 4}, 41), v5 = randn64({1, 2, 5, 4}, 42);
  c.close(
      "no cache: == repeat_kv path", [&] { return my_attention(q, k3, v3, 0, 0); },
      reference_attention(q, k3, v3, 0, 0), 1e-12);
  c.close(
      "cache of 2, queries at 2..4: == repeat_kv",
      [&] { return my_attention(q, k5, v5, 2, 0); }, reference_attention(q, k5, v5, 2, 0),
      1e-12);
  c.guarded("K and V are not copied", [&] {
    Tensor qg = q.detach().requires_grad_();
    bool copies = graph_has(my_attention(qg, k5, v5, 2, 0), "repeat_kv");
    c.expect("K and V are not copied", !copies,
             copies ? "the graph calls repeat_kv" : "no repeat_kv in the graph");
  });
  c.grad("q, keys, values; cache of 2",
         [&](const auto& in) { return my_attention(in[0], in[1], in[2], 2, 0); },
         {q, k5, v5}, {"q", "keys", "values"});

  // The real model: logits and every weight's gradient, against repeat_kv.
  GlassLM base = tiny_model();
  auto run = [&](Attention path, std::vector<Tensor>& grads) {
    GlassLM m = base.to(DType::float64);  // fresh weights, fresh gradients
    m.attention = path;
    m.custom_attention = my_attention;
    Tensor logits = m.forward(kTokens);
    cross_entropy(logits, kTargets).backward();
    for (auto& [name, w] : m.named_parameters()) grads.push_back(w.grad());
    return logits.detach();
  };
  std::vector<Tensor> g_ref, g_mine;
  Tensor ref = run(Attention::repeat_kv, g_ref);
  c.close(
      "model: logits == repeat_kv path", [&] { return run(Attention::custom, g_mine); },
      ref, 1e-10);
  if (g_mine.size() == g_ref.size()) {
    double worst = 0;
    std::size_t worst_i = 0;
    for (std::size_t i = 0; i < g_ref.size(); ++i) {
      double d = g_mine[i].defined() ? max_abs_diff(g_mine[i], g_ref[i]) : INFINITY;
      if (d > worst) worst = d, worst_i = i;
    }
    bool ok = worst <= 1e-10;
    c.expect("model: " + std::to_string(g_ref.size()) + " weight gradients == repeat_kv",
             ok,
             "max diff " + fmt("%.1e", worst) + " (tol 1e-10)" +
                 (ok ? "" : ", worst " + base.named_parameters()[worst_i].first));
  }
  c.guarded("model: incremental == full, custom path", [&] {
    no_grad guard;
    GlassLM m = base;
    m.attention = Attention::custom;
    m.custom_attention = my_attention;
    Cache cache = m.new_cache();
    Tensor inc = decode_all(m, cache, 4);
    c.close(
        "model: incremental == full, custom path", [&] { return inc; },
        m.forward(kTokens), 1e-10);
  });
  return c.passed();
}

// ---- running one ---------------------------------------------------------------

const std::vector<std::string>& common_mistakes(int exercise) {
  // Found by writing each exercise wrong on purpose and reading what its
  // grader said (tests/test_exercises.cpp keeps several of them planted).
  static const std::vector<std::vector<std::string>> hints{
      {"mul: da is dout * b and db is dout * a (each input's gradient uses the OTHER "
       "input)",
       "exp: the derivative is the forward's output y = e^x: reuse `out`, do not take "
       "exp(dout)",
       "silu: d/dx = s * (1 + x * (1 - s)); s alone forgets that x also multiplies s"},
      {"sum the leading axes the target lacks first, then the length-1 axes WITH "
       "keepdims, so (4,2,3) -> (2,1) keeps its 1",
       "an input of shape () (a scalar) needs every axis summed",
       "each input's gradient must have that input's shape: sum dout * b back to "
       "a.shape(), not to b's"},
      {"mean: dx = dout / n, where n is the length of the reduced axis only",
       "without keepdims, put the reduced axis back (length 1) before broadcasting dout "
       "over it",
       "max: only the entries equal to the max get gradient, split equally between ties"},
      {"dx = y * (dout - sum(dout * y)), not dout * y * (1 - y): every output depends on "
       "every input",
       "the sum runs along the softmax axis, with keepdims, so it broadcasts back",
       "use the forward's output y (softmax(x)), not x"},
      {"da = dout @ b^T and db = a^T @ dout, where ^T swaps only the LAST two axes",
       "broadcast batch axes: sum each gradient back to its input's shape (exercise 2)",
       "the order matters: a^T @ dout, not dout @ a^T"},
      {"each input head has n_rep copies: add all their gradients, do not keep one",
       "copies of one head are neighbours ([0,0,1,1]): reshape dout to [B, Hkv, n_rep, "
       "T, "
       "D], not [B, n_rep, Hkv, T, D] (the tiled order)",
       "sum over the n_rep axis (2 after that reshape), not over positions"},
      {"dx = r * (dout - y * mean(dout * y)): the second term is the one usually lost",
       "mean (divide by D), not sum, over the last axis",
       "r = 1 / sqrt(mean(x^2) + eps): eps inside the square root, as in the forward"},
      {"the backward uses the TRANSPOSE of rotate_half: concat(g2, -g1), not "
       "concat(-g2, g1)",
       "cos and sin belong to positions start .. start+T-1: pass `start` on",
       "dx = dout * cos + rotate_half^T(dout * sin): cos with dout, sin inside"},
      {"positions are axis 2 of [B, Hkv, m, hd]: concatenate there, not on the heads "
       "(axis 1)",
       "the result must be detached (the cache is for inference): detach() what you "
       "store",
       "held first, then fresh; and an undefined held means an empty cache: return "
       "fresh"},
      {"fold q so that row g*T + t of K/V head i is query head i*G + g (heads of a group "
       "are neighbours), not g*Hkv + i",
       "in the folded rows the query position is query_start + (row mod T), not the row "
       "number: mask with that",
       "scale the scores by 1/sqrt(hd) (head_dim, not d_model), and unfold back to [B, "
       "H, "
       "T, hd]"},
  };
  static const std::vector<std::string> none;
  return exercise >= 1 && exercise <= int(hints.size()) ? hints[std::size_t(exercise - 1)]
                                                        : none;
}

bool run_exercise(const Exercise& e, std::ostream& out) {
  out << "Exercise " << e.number << ": " << e.title << "\n";
  bool ok = false;
  try {
    ok = e.grade(out);
    if (!ok)
      for (const std::string& hint : common_mistakes(e.number))
        out << "  hint: " << hint << "\n";
  } catch (const NotImplemented& ex) {
    out << "  " << ex.what() << " (fill in the TODOs of " << e.name << ".cpp)\n";
  } catch (const std::exception& ex) {
    out << "  error: " << ex.what() << "\n";
  }
  out << "Exercise " << e.number << " (" << e.name << "): " << (ok ? "PASS" : "FAIL")
      << "\n";
  return ok;
}

}  // namespace glassllm::exercises
