// adding_an_op.cpp: a new op from outside the engine, from its header to the
// gradient check, through custom_op (include/glassllm/engine/custom_op.h). Quoted by
// docs/11-adding-an-op.md; the exercises (docs/exercises/) use the same
// extension point.
#include <cstdio>
#include <iostream>

#include "glassllm/glassllm.h"

using namespace glassllm;

// doc:begin op
// logsumexp(x) = log(sum_j exp(x_j)) along the last axis, keeping the axis:
// x [..., n] -> [..., 1], so the result broadcasts against x.
// Forward, stably: m + log(sum(exp(x - m))), m = max(x); the same value,
// without overflow for large x.
// Backward: d/dx_j log(sum exp(x)) = exp(x_j) / sum exp(x) = exp(x_j - out),
// so dx = dout * exp(x - out). It needs only x and the output.
Tensor logsumexp(const Tensor& x) {
  return custom_op(
      "logsumexp", {x},
      [](const std::vector<Tensor>& in) {
        Tensor m = max(in[0], -1, /*keepdims=*/true);  // [..., 1]
        return m + log(sum(exp(in[0] - m), {-1}, /*keepdims=*/true));
      },
      [](const std::vector<Tensor>& in, const Tensor& out, const Tensor& dout) {
        // dout and out are [..., 1]; they broadcast along the summed axis.
        return std::vector<Tensor>{dout * exp(in[0] - out)};
      });
}
// doc:end op

// doc:begin mistake
// A plausible slip: d/dx_j log(s) = (1/s) ds/dx_j, and the 1/s is forgotten.
Tensor logsumexp_wrong(const Tensor& x) {
  return custom_op(
      "logsumexp", {x},
      [](const std::vector<Tensor>& in) { return log(sum(exp(in[0]), {-1}, true)); },
      [](const std::vector<Tensor>& in, const Tensor& out, const Tensor& dout) {
        return std::vector<Tensor>{dout * exp(in[0])};  // missing / sum(exp(x))
      });
}
// doc:end mistake

int main() {
  // doc:begin use
  Tensor x = tensor({{1.0, 2.0, 3.0}, {0.0, 0.0, 0.0}}, DType::float64).requires_grad_();
  Tensor y = logsumexp(x);  // [2, 3] -> [2, 1]
  std::cout << "logsumexp(x) =\n" << y << "\n";
  std::cout << "y.op() = " << y.op() << ", parents: " << y.parents().size() << "\n";
  sum(y).backward();  // each row of dx is softmax of that row of x
  std::cout << "dx =\n" << x.grad() << "\n";
  // doc:end use

  // doc:begin check
  // The engine's checker, in float64: the op alone, a broadcasting case
  // (x + b, b [3] stretched over the rows) and x used twice.
  auto show = [](const char* name, const GradCheckResult& r) {
    for (const InputCheck& c : r.inputs)
      std::printf("%-22s input %zu %-7s max abs err %.1e  %s\n", name, c.input,
                  shape_str(c.shape).c_str(), c.max_abs_err, c.passed ? "PASS" : "FAIL");
  };
  Tensor a = randn({4, 5}, 0, DType::float64), b = randn({5}, 1, DType::float64);
  show("logsumexp(a)", gradcheck([](const auto& in) { return logsumexp(in[0]); }, {a}));
  show("logsumexp(a + b)",
       gradcheck([](const auto& in) { return logsumexp(in[0] + in[1]); }, {a, b}));
  show("logsumexp(a) * a",
       gradcheck([](const auto& in) { return logsumexp(in[0]) * in[0]; }, {a}));
  // doc:end check

  // doc:begin fail
  GradCheckResult r = gradcheck([](const auto& in) { return logsumexp_wrong(in[0]); },
                                {a}, {}, "logsumexp");
  std::cout << (r.passed ? "passed" : "failed") << ":\n" << r.message();
  // doc:end fail
  return 0;
}
