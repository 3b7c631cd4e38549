// gradcheck.cpp: the finite-difference gradient checker (see gradcheck.h for
// the method). The built-in suite of op checks is in gradcheck_suite.cpp.
#include "glassllm/engine/gradcheck.h"

#include <cmath>
#include <sstream>

#include "glassllm/engine/node.h"

namespace glassllm {

namespace {

std::vector<std::size_t> unravel(std::size_t flat, const Shape& shape) {
  std::vector<std::size_t> index(shape.size());
  for (std::size_t i = shape.size(); i-- > 0;) {
    index[i] = flat % shape[i];
    flat /= shape[i];
  }
  return index;
}

// L = sum(f(x) * R), in double.
double projected(const TensorFn& f, const std::vector<Tensor>& xs, const Tensor& r) {
  Tensor out = f(xs);
  if (out.shape() != r.shape())
    throw std::logic_error("gradcheck: f returned shape " + shape_str(out.shape()) +
                           " on one call and " + shape_str(r.shape()) + " on another");
  const double* o = out.data<double>();
  const double* w = r.data<double>();
  double total = 0;
  for (std::size_t i = 0; i < out.size(); ++i) total += o[i] * w[i];
  return total;
}

// Compares input i's analytic gradient (already in xs[i].grad()) with central
// differences of L = sum(f(x) * r), one element at a time.
InputCheck check_input(const TensorFn& f, std::vector<Tensor>& xs, const Tensor& r,
                       std::size_t i, const GradCheckOptions& options) {
  InputCheck check;
  check.input = i;
  check.shape = xs[i].shape();
  Tensor analytic = xs[i].grad().defined() ? xs[i].grad() : zeros_like(xs[i]);
  const double* a = analytic.data<double>();
  double* x = xs[i].mutable_data<double>();
  double worst_ratio = -1;
  for (std::size_t j = 0; j < xs[i].size(); ++j) {
    double saved = x[j];
    x[j] = saved + options.eps;
    double plus = projected(f, xs, r);
    x[j] = saved - options.eps;
    double minus = projected(f, xs, r);
    x[j] = saved;
    double numeric = (plus - minus) / (2 * options.eps);
    double err = std::fabs(a[j] - numeric);
    double allowed = options.atol + options.rtol * std::fabs(numeric);
    double rel = err / std::max(std::fabs(numeric), 1e-12);
    check.max_abs_err = std::max(check.max_abs_err, err);
    check.max_rel_err = std::max(check.max_rel_err, rel);
    // NaN compares false, so a NaN fails and counts as the worst element.
    bool ok = err <= allowed;
    double ratio = std::isnan(err) ? INFINITY : err / allowed;
    if (!ok) check.passed = false;
    if (ratio > worst_ratio) {
      worst_ratio = ratio;
      check.worst_index = unravel(j, check.shape);
      check.analytic = a[j];
      check.numeric = numeric;
    }
  }
  return check;
}

}  // namespace

GradCheckResult gradcheck(const TensorFn& f, const std::vector<Tensor>& inputs,
                          const GradCheckOptions& options, const std::string& op) {
  GradCheckResult result;
  result.op = op;
  result.options = options;

  // Fresh float64 leaves that we are free to perturb.
  std::vector<Tensor> xs;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    check_defined("gradcheck", inputs[i]);
    if (inputs[i].dtype() != DType::float64)
      throw std::invalid_argument("gradcheck: input " + std::to_string(i) + " of shape " +
                                  shape_str(inputs[i].shape()) + " is " +
                                  dtype_name(inputs[i].dtype()) +
                                  "; finite differences need float64");
    Tensor x = from_vector(inputs[i].to_vector(), inputs[i].shape(), DType::float64);
    xs.push_back(x.requires_grad_());
  }

  // Analytic: one backward pass of L = sum(f(x) * R).
  Tensor r;
  {
    Tensor out = f(xs);
    check_defined("gradcheck", out);
    if (out.dtype() != DType::float64)
      throw std::invalid_argument("gradcheck: f returned " +
                                  std::string(dtype_name(out.dtype())) + ", not float64");
    r = Rng(options.seed).normal(out.shape(), 0.0, 1.0, DType::float64);
    if (out.requires_grad()) sum(mul(out, r)).backward();
  }

  // Numeric: central differences, one element at a time.
  no_grad guard;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    InputCheck check = check_input(f, xs, r, i, options);
    result.passed = result.passed && check.passed;
    result.inputs.push_back(check);
  }
  return result;
}

std::string GradCheckResult::message() const {
  std::ostringstream os;
  os.precision(6);
  for (const InputCheck& c : inputs) {
    os << (op.empty() ? "gradcheck" : op) << ": input " << c.input << " "
       << shape_str(c.shape) << (c.passed ? " passed" : " FAILED") << ": worst index "
       << shape_str(c.worst_index) << " analytic " << c.analytic << " numeric "
       << c.numeric << ", max abs err " << c.max_abs_err << ", max rel err "
       << c.max_rel_err << " (eps " << options.eps << ", atol " << options.atol
       << ", rtol " << options.rtol << ", float64)\n";
  }
  return os.str();
}

}  // namespace glassllm
