// grader_checks.h (private): what the graders share -- the Checker that
// prints one line per check, finding the first wrong entry of a tensor, and
// small helpers. Used by grader.cpp (exercises 1-8) and grader_model.cpp
// (exercises 9 and 10, on a tiny model).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "exercises/exercises.h"
#include "exercises/grader.h"
#include "exercises/messages.h"

namespace glassllm::exercises {

inline std::string index_str(const std::vector<std::size_t>& index) {
  std::string s = "(";
  for (std::size_t i = 0; i < index.size(); ++i)
    s += (i ? "," : "") + std::to_string(index[i]);
  return s + (index.size() == 1 ? ",)" : ")");
}

// The columns s takes on a terminal: its characters, not its bytes (a
// Portuguese text's accented letters take two bytes each in UTF-8).
inline std::size_t columns(const std::string& s) {
  std::size_t chars = 0;
  for (unsigned char ch : s) chars += (ch & 0xC0) != 0x80;  // not a continuation byte
  return chars;
}

// s padded with spaces to `width` columns, on the right or the left.
inline std::string padded(const std::string& s, std::size_t width, bool left = true) {
  const std::size_t chars = columns(s);
  const std::string fill(chars < width ? width - chars : 0, ' ');
  return left ? s + fill : fill + s;
}

inline std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

inline double max_abs_diff(const Tensor& a, const Tensor& b) {
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
inline Tensor randn64(const Shape& shape, std::uint64_t seed) {
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
inline WrongEntry first_wrong_entry(const TensorFn& f, const std::vector<Tensor>& inputs,
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
             tr("check.shape",
                {{"got", g.defined() ? shape_str(g.shape()) : tr("check.undefined")},
                 {"expected",
                  tr("check.expected_shape", {{"shape", shape_str(want.shape())}})}}),
             false);
        return;
      }
      double d = max_abs_diff(g, want);
      std::string detail =
          tr("check.max_diff", {{"diff", fmt("%.1e", d)}, {"tol", fmt("%.0e", tol)}});
      if (!(d <= tol)) {
        // Where it starts: the first element off by more than tol.
        std::vector<double> x = g.to_vector(), y = want.to_vector();
        for (std::size_t j = 0; j < x.size(); ++j)
          if (!(std::fabs(x[j] - y[j]) <= tol)) {
            std::vector<std::size_t> index(want.ndim());
            for (std::size_t k = index.size(), flat = j; k-- > 0; flat /= want.shape()[k])
              index[k] = flat % want.shape()[k];
            detail += tr("check.first_at", {{"index", index_str(index)},
                                            {"want", fmt("%.6g", y[j])},
                                            {"got", fmt("%.6g", x[j])}});
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
        std::ostringstream eps, atol, rtol;
        eps << o.eps;
        atol << o.atol;
        rtol << o.rtol;
        out_ << "  "
             << tr("grad.header",
                   {{"eps", eps.str()}, {"atol", atol.str()}, {"rtol", rtol.str()}})
             << "\n";
        // 100 columns for a case name of up to 28 characters (a projector).
        out_ << "  " << padded(tr("grad.case"), 28) << " "
             << padded(tr("grad.input"), 3, false) << " " << padded(tr("grad.shape"), 10)
             << " " << padded(tr("grad.worst"), 10) << " "
             << padded(tr("grad.analytic"), 10, false) << " "
             << padded(tr("grad.numeric"), 10, false) << " "
             << padded(tr("grad.abs"), 7, false) << " "
             << padded(tr("grad.rel"), 7, false) << "\n";
        table_ = true;
      }
      for (const InputCheck& c : r.inputs) {
        char row[240];
        std::snprintf(row, sizeof row, " %3zu %-10s %-10s %10.6f %10.6f %7.1e %7.1e  ",
                      c.input, shape_str(c.shape).c_str(),
                      index_str(c.worst_index).c_str(), c.analytic, c.numeric,
                      c.max_abs_err, c.max_rel_err);
        out_ << "  " << padded(name, 28) << row
             << tr(c.passed ? "check.pass" : "check.fail") << "\n";
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
    WrongEntry w = first_wrong_entry(f, inputs, c.input);
    const std::vector<std::size_t>& index = w.found ? w.index : c.worst_index;
    out_ << "    "
         << tr(w.found ? "grad.entry" : "grad.entry_weighted",
               {{"case", name},
                {"input", std::to_string(c.input)},
                {"name", input_name},
                {"shape", shape_str(c.shape)},
                {"index", index_str(index)},
                {"analytic", fmt("%.6f", w.found ? w.analytic : c.analytic)},
                {"numeric", fmt("%.6f", w.found ? w.numeric : c.numeric)}})
         << "\n";
  }

  // Runs a check; an exception from the code under test fails it with its
  // message. NotImplemented goes up: the whole exercise is not done yet.
  void guarded(const std::string& what, const std::function<void()>& body) {
    try {
      body();
    } catch (const NotImplemented&) {
      throw;
    } catch (const std::exception& e) {
      line(what, tr("check.threw", {{"message", e.what()}}), false);
    }
  }

 private:
  void line(const std::string& what, const std::string& detail, bool ok) {
    table_ = false;  // a table that follows gets its header again
    out_ << "  " << padded(what, 44) << " " << detail << "  "
         << tr(ok ? "check.pass" : "check.fail") << "\n";
    passed_ = passed_ && ok;
  }

  std::ostream& out_;
  bool passed_ = true;
  bool table_ = false;
};

}  // namespace glassllm::exercises
