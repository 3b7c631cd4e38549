// test_optim.cpp: SGD, AdamW, clip_grad_norm and lr_at against updates
// computed by hand, in float64. Each expected number has its arithmetic in a
// comment.
#include <cmath>
#include <numbers>

#include "glassllm/train/optim.h"
#include "tests/check.h"

using namespace glassllm;
using glassllm::test::check_tensor;

namespace {

// A parameter with a given gradient: w = values, loss = sum(w * g), so dloss/dw = g.
Tensor param_with_grad(const std::vector<double>& w, const std::vector<double>& g,
                       const Shape& shape) {
  Tensor p = from_vector(w, shape, DType::float64).requires_grad_();
  sum(p * from_vector(g, shape, DType::float64)).backward();
  return p;
}

void set_grad(Tensor& p, const std::vector<double>& g) {
  p.zero_grad();
  sum(p * from_vector(g, p.shape(), DType::float64)).backward();
}

}  // namespace

TEST_CASE("SGD with momentum: buf = g at the first step, then momentum * buf + g") {
  Tensor w = param_with_grad({1.0, -2.0}, {0.5, 1.0}, {2});
  SGD opt({{"w", w}}, /*lr=*/0.1, /*momentum=*/0.9);
  opt.step();
  // buf = g = [0.5, 1.0]; w = w - 0.1 * buf = [1 - 0.05, -2 - 0.1] = [0.95, -2.1]
  check_tensor(w, {2}, {0.95, -2.1}, 1e-15);
  set_grad(w, {1.0, -1.0});
  opt.step();
  // buf = 0.9 * [0.5, 1.0] + [1.0, -1.0] = [1.45, -0.1]
  // w = [0.95 - 0.145, -2.1 + 0.01] = [0.805, -2.09]
  check_tensor(w, {2}, {0.805, -2.09}, 1e-15);
  CHECK(opt.steps_taken() == 2);
}

TEST_CASE("SGD weight decay is L2: weight_decay * w is added to the gradient") {
  Tensor w = param_with_grad({2.0}, {0.5}, {1});
  SGD opt({{"w", w}}, /*lr=*/0.1, /*momentum=*/0.0, /*weight_decay=*/0.5);
  opt.step();
  // g = 0.5 + 0.5 * 2 = 1.5; w = 2 - 0.1 * 1.5 = 1.85
  check_tensor(w, {1}, {1.85}, 1e-15);
}

TEST_CASE("AdamW: two steps match PyTorch's formula with bias correction") {
  // A matrix (decayed) and a vector (a norm weight: never decayed).
  Tensor a = param_with_grad({1.0, -1.0}, {0.1, -0.2}, {1, 2});
  Tensor n = param_with_grad({1.0}, {0.3}, {1});
  AdamW opt({{"a", a}, {"n", n}}, /*lr=*/0.01, /*beta1=*/0.9, /*beta2=*/0.95,
            /*eps=*/1e-8,
            /*weight_decay=*/0.1);
  opt.step();
  // Step 1, a[0]: decay w = 1 * (1 - 0.01 * 0.1) = 0.999
  //   m = 0.1 * 0.1 = 0.01, v = 0.05 * 0.01 = 0.0005
  //   m_hat = 0.01 / 0.1 = 0.1, v_hat = 0.0005 / 0.05 = 0.01, sqrt = 0.1
  //   w = 0.999 - 0.01 * 0.1 / (0.1 + 1e-8) = 0.999 - 0.01 * 0.9999999 = 0.98900000
  // (the first Adam step moves every weight by about lr * sign(g))
  // a[1]: -0.999 + 0.01 * 0.2 / (0.2 + 1e-8) = -0.98900000
  // n: no decay: 1 - 0.01 * 0.3 / (0.3 + 1e-8)
  const double s1a = 0.01 * 0.1 / (0.1 + 1e-8), s1b = 0.01 * 0.2 / (0.2 + 1e-8);
  check_tensor(a, {1, 2}, {0.999 - s1a, -0.999 + s1b}, 1e-15);
  check_tensor(n, {1}, {1 - 0.01 * 0.3 / (0.3 + 1e-8)}, 1e-15);

  set_grad(a, {0.3, 0.0});
  set_grad(n, {0.3});
  opt.step();
  // Step 2, a[0]: w = (0.999 - s1a) * 0.999
  //   m = 0.9 * 0.01 + 0.1 * 0.3 = 0.039,  v = 0.95 * 0.0005 + 0.05 * 0.09 = 0.004975
  //   bias1 = 1 - 0.81 = 0.19, bias2 = 1 - 0.9025 = 0.0975
  //   w -= (0.01 / 0.19) * 0.039 / (sqrt(0.004975) / sqrt(0.0975) + 1e-8)
  const double a0 =
      (0.999 - s1a) * 0.999 -
      (0.01 / 0.19) * 0.039 / (std::sqrt(0.004975) / std::sqrt(0.0975) + 1e-8);
  // a[1]: g = 0: m = 0.9 * -0.02 = -0.018, v = 0.95 * 0.002 = 0.0019
  const double a1 =
      (-0.999 + s1b) * 0.999 -
      (0.01 / 0.19) * -0.018 / (std::sqrt(0.0019) / std::sqrt(0.0975) + 1e-8);
  check_tensor(a, {1, 2}, {a0, a1}, 1e-14);
  // n, same gradient twice: m = 0.03 + 0.9*0.03... m = 0.9 * 0.03 + 0.03 = 0.057,
  // v = 0.95 * 0.0045 + 0.0045 = 0.008775; m_hat = 0.3, v_hat = 0.09: step lr * 0.3 / 0.3
  const double n1 = 1 - 0.01 * 0.3 / (0.3 + 1e-8);
  const double n2 =
      n1 - (0.01 / 0.19) * 0.057 / (std::sqrt(0.008775) / std::sqrt(0.0975) + 1e-8);
  check_tensor(n, {1}, {n2}, 1e-14);
}

TEST_CASE("AdamW's state round-trips: a restored optimizer takes the same next step") {
  Tensor w1 = param_with_grad({1.0, 2.0}, {0.5, -0.5}, {1, 2});
  AdamW opt1({{"w", w1}}, 0.01);
  opt1.step();
  NamedTensors state = opt1.state();
  REQUIRE(state.size() == 3);
  CHECK(state[0].first == "step");
  CHECK(state[1].first == "exp_avg.w");
  CHECK(state[2].first == "exp_avg_sq.w");

  Tensor w2 = from_vector(w1.to_vector(), {1, 2}, DType::float64).requires_grad_();
  AdamW opt2({{"w", w2}}, 0.01);
  opt2.load_state(state);
  CHECK(opt2.steps_taken() == 1);
  set_grad(w1, {0.25, 1.0});
  set_grad(w2, {0.25, 1.0});
  opt1.step();
  opt2.step();
  CHECK(w1.to_vector() == w2.to_vector());  // bit for bit

  CHECK_THROWS_WITH_AS(opt2.load_state({{"step", state[0].second}}),
                       doctest::Contains("state has no 'exp_avg.w'"),
                       std::invalid_argument);
}

TEST_CASE("clip_grad_norm returns the norm before clipping and bounds the global norm") {
  // Gradients [3] and [4, 0]: global norm sqrt(9 + 16) = 5.
  Tensor a = param_with_grad({0.0}, {3.0}, {1});
  Tensor b = param_with_grad({0.0, 0.0}, {4.0, 0.0}, {2});
  Tensor old_grad = a.grad();
  CHECK(clip_grad_norm({a, b}, 10.0) == doctest::Approx(5.0).epsilon(1e-15));
  CHECK(a.grad().is(old_grad));  // under the limit: untouched

  CHECK(clip_grad_norm({a, b}, 1.0) == doctest::Approx(5.0).epsilon(1e-15));
  // scale = 1 / (5 + 1e-6): grads [3, 4, 0] * scale
  const double scale = 1.0 / (5.0 + 1e-6);
  check_tensor(a.grad(), {1}, {3 * scale}, 1e-15);
  check_tensor(b.grad(), {2}, {4 * scale, 0.0}, 1e-15);
  CHECK(clip_grad_norm({a, b}, 0.0) <= 1.0);  // max_norm 0: measure only
  // The clipped gradient is a new tensor; the old one still holds 3.
  CHECK(!a.grad().is(old_grad));
  check_tensor(old_grad, {1}, {3.0});
}

TEST_CASE("lr_at: linear warm-up, then a cosine down to min_lr, then min_lr") {
  // base 1e-3, warmup 10, total 110, min_lr = 1e-4
  const double base = 1e-3, min_lr = 1e-4;
  // step < warmup: base * (step + 1) / 10
  CHECK(lr_at(0, base, 10, 110, 0.1) == doctest::Approx(1e-4));
  CHECK(lr_at(4, base, 10, 110, 0.1) == doctest::Approx(5e-4));
  CHECK(lr_at(9, base, 10, 110, 0.1) == doctest::Approx(1e-3));
  // step 10: p = 0, cos 0 = 1: base
  CHECK(lr_at(10, base, 10, 110, 0.1) == doctest::Approx(1e-3));
  // step 60: p = 50 / 100 = 0.5, cos(pi / 2) = 0: min + (base - min) / 2 = 5.5e-4
  CHECK(lr_at(60, base, 10, 110, 0.1) == doctest::Approx(5.5e-4));
  // step 35: p = 0.25: min + 0.9e-3 * (1 + cos(pi / 4)) / 2
  CHECK(lr_at(35, base, 10, 110, 0.1) ==
        doctest::Approx(min_lr + 0.9e-3 * (1 + std::cos(std::numbers::pi / 4)) / 2));
  // step >= total: min_lr
  CHECK(lr_at(110, base, 10, 110, 0.1) == doctest::Approx(min_lr));
  CHECK(lr_at(500, base, 10, 110, 0.1) == doctest::Approx(min_lr));
  // No warm-up: step 0 is the peak.
  CHECK(lr_at(0, base, 0, 100, 0.0) == doctest::Approx(base));
}
