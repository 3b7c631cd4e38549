// Tests for the gradient checker (gradcheck.h) and the custom-op extension
// point (custom_op.h) it is meant to check.
#include "check.h"

using namespace glassllm;

namespace {
// square(x) = x^2 with a backward supplied by the test: right (2x) or wrong.
Tensor square(const Tensor& x, double factor) {
  return custom_op(
      "square", {x}, [](const std::vector<Tensor>& in) { return in[0] * in[0]; },
      [factor](const std::vector<Tensor>& in, const Tensor&, const Tensor& dout) {
        return std::vector<Tensor>{dout * in[0] * factor};
      });
}
}  // namespace

TEST_CASE("a custom op with a correct backward passes the gradient checker") {
  Tensor x = randn({3, 4}, 1, DType::float64);
  GradCheckResult r =
      gradcheck([](const std::vector<Tensor>& in) { return square(in[0], 2.0); }, {x}, {},
                "square");
  CAPTURE(r.message());
  CHECK(r.passed);
  REQUIRE(r.inputs.size() == 1);
  CHECK(r.inputs[0].shape == Shape{3, 4});
  CHECK(r.inputs[0].max_abs_err < 1e-8);
}

TEST_CASE("a wrong backward fails, naming the op, the input and the worst index") {
  // Backward 1*x instead of 2*x: the error at element i is |x_i| * |R_i|, so
  // the worst index is where that product is largest; we compute it here.
  Tensor x = tensor({{0.1, -3.0}, {0.5, 0.2}}, DType::float64);
  GradCheckResult r =
      gradcheck([](const std::vector<Tensor>& in) { return square(in[0], 1.0); }, {x}, {},
                "square");
  CHECK_FALSE(r.passed);
  REQUIRE(r.inputs.size() == 1);
  CHECK_FALSE(r.inputs[0].passed);
  Tensor proj = Rng(0).normal({2, 2}, 0, 1, DType::float64);  // the checker's R (seed 0)
  std::vector<double> xv = x.to_vector(), rv = proj.to_vector();
  std::size_t worst = 0;
  double worst_err = -1;
  for (std::size_t i = 0; i < 4; ++i) {
    double err = std::fabs(xv[i] * rv[i]);  // |analytic - numeric| = |x R|
    double allowed = 1e-5 + 1e-3 * std::fabs(2 * xv[i] * rv[i]);
    if (err / allowed > worst_err) worst_err = err / allowed, worst = i;
  }
  CHECK(r.inputs[0].worst_index == std::vector<std::size_t>{worst / 2, worst % 2});
  CHECK(r.inputs[0].analytic == doctest::Approx(xv[worst] * rv[worst]));
  CHECK(r.inputs[0].numeric == doctest::Approx(2 * xv[worst] * rv[worst]).epsilon(1e-6));
  std::string msg = r.message();
  CHECK(msg.find("square: input 0 (2,2) FAILED") != std::string::npos);
  CHECK(msg.find("worst index (" + std::to_string(worst / 2) + "," +
                 std::to_string(worst % 2) + ")") != std::string::npos);
}

TEST_CASE("the checker finds which of several inputs has the wrong gradient") {
  // f(a, b) = a * square(b) with square's backward wrong: input 0 passes, input 1 fails.
  Tensor a = randn({3}, 2, DType::float64), b = randn({3}, 3, DType::float64);
  GradCheckResult r = gradcheck(
      [](const std::vector<Tensor>& in) { return in[0] * square(in[1], 1.0); }, {a, b});
  CHECK_FALSE(r.passed);
  CHECK(r.inputs[0].passed);
  CHECK_FALSE(r.inputs[1].passed);
}

TEST_CASE("the checker needs float64 inputs and leaves the caller's tensors alone") {
  CHECK_THROWS_WITH_AS(
      gradcheck([](const std::vector<Tensor>& in) { return exp(in[0]); }, {ones({2})}),
      doctest::Contains(
          "input 0 of shape (2,) is float32; finite differences need float64"),
      std::invalid_argument);
  Tensor x = tensor({1, 2}, DType::float64);
  gradcheck([](const std::vector<Tensor>& in) { return exp(in[0]); }, {x});
  CHECK(x.to_vector() == std::vector<double>{1, 2});
  CHECK_FALSE(x.grad().defined());
}

TEST_CASE("a custom op is recorded as one node with its own name") {
  Tensor x = ones({2}).requires_grad_();
  Tensor y = square(x, 2.0);
  CHECK(y.op() == "square");
  REQUIRE(y.parents().size() == 1);
  CHECK(y.parents()[0].is(x));  // the forward's inner mul is not in the graph
  sum(y).backward();
  CHECK(x.grad().to_vector() == std::vector<double>{2, 2});
}

TEST_CASE("a custom backward of the wrong shape is reported with the op's name") {
  Tensor x = ones({2, 3}).requires_grad_();
  Tensor y = custom_op(
      "bad_shape", {x}, [](const std::vector<Tensor>& in) { return in[0] * 2.0; },
      [](const std::vector<Tensor>&, const Tensor&, const Tensor&) {
        return std::vector<Tensor>{ones({3})};
      });
  CHECK_THROWS_WITH_AS(sum(y).backward(),
                       doctest::Contains("backward of 'bad_shape' returned a gradient "
                                         "(3,) float32 for input 0 of shape (2,3)"),
                       std::logic_error);
}
