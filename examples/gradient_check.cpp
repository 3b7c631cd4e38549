// gradient_check.cpp: writing an op's backward and checking it against
// central finite differences. Quoted by docs/03-gradient-checker.md.
#include <cstdio>
#include <iostream>

#include "glassllm/glassllm.h"

using namespace glassllm;

// doc:begin op
// softplus(x) = log(1 + e^x); its derivative is sigmoid(x) = 1 / (1 + e^-x).
Tensor softplus(const Tensor& x, bool correct_backward) {
  return custom_op(
      "softplus", {x},
      [](const std::vector<Tensor>& in) { return log(1.0 + exp(in[0])); },
      [correct_backward](const std::vector<Tensor>& in, const Tensor& out,
                         const Tensor& dout) {
        Tensor local = correct_backward ? sigmoid(in[0])  // right
                                        : exp(in[0]);     // a plausible mistake
        return std::vector<Tensor>{dout * local};
      });
}
// doc:end op

int main() {
  // doc:begin check
  Tensor x = tensor({{-2.0, -0.5, 0.0}, {0.5, 1.0, 3.0}}, DType::float64);
  for (bool correct : {true, false}) {
    GradCheckResult r = gradcheck(
        [correct](const std::vector<Tensor>& in) { return softplus(in[0], correct); },
        {x}, GradCheckOptions{}, "softplus");
    const InputCheck& c = r.inputs[0];
    std::printf(
        "%s backward: %s, max abs err %.1e, worst at (%zu,%zu): "
        "analytic %.6f vs numeric %.6f\n",
        correct ? "correct" : "wrong  ", r.passed ? "PASS" : "FAIL", c.max_abs_err,
        c.worst_index[0], c.worst_index[1], c.analytic, c.numeric);
  }
  // doc:end check

  // doc:begin float32
  // Why float64: the same difference quotient in float32 rounds to ~1e-7 / eps.
  double eps = 1e-3;
  float xf = 0.5f;
  float numeric32 =
      (std::log1p(std::exp(xf + float(eps))) - std::log1p(std::exp(xf - float(eps)))) /
      float(2 * eps);
  double numeric64 =
      (std::log1p(std::exp(0.5 + eps)) - std::log1p(std::exp(0.5 - eps))) / (2 * eps);
  double exact = 1 / (1 + std::exp(-0.5));
  std::printf("d softplus/dx at 0.5: exact %.9f, float64 diff %.9f, float32 diff %.9f\n",
              exact, numeric64, double(numeric32));
  // doc:end float32
  return 0;
}
