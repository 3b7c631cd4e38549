// test_exercises.cpp: the exercises' extension points on their own (custom_op,
// Attention::custom, KVCache::append_fn), and the graders failing where they
// should: a planted wrong backward is named by input and index. That every
// reference solution passes and every untouched stub fails is checked by the
// CTest tests solution_exNN and stub_exNN_fails (CMakeLists.txt).
#include <cmath>
#include <sstream>

#include "check.h"
#include "exercises/exercises.h"
#include "exercises/grader.h"
#include "glassllm/model/model.h"

using namespace glassllm;
using namespace glassllm::test;

namespace {

// x^3, whose derivative is 3x^2; `forget_square` writes 3x instead.
Tensor cube(const Tensor& x, bool forget_square) {
  return custom_op(
      "cube", {x}, [](const std::vector<Tensor>& in) { return in[0] * in[0] * in[0]; },
      [forget_square](const std::vector<Tensor>& in, const Tensor&, const Tensor& dout) {
        Tensor local = forget_square ? in[0] * 3.0 : in[0] * in[0] * 3.0;
        return std::vector<Tensor>{dout * local};
      });
}

// repeat_kv whose backward forgets to sum the copies: it keeps copy 0 only.
Tensor repeat_kv_first_copy(const Tensor& x, std::size_t n_rep) {
  return custom_op(
      "repeat_kv_first_copy", {x},
      [n_rep](const std::vector<Tensor>& in) { return repeat_kv(in[0], n_rep); },
      [n_rep](const std::vector<Tensor>& in, const Tensor&, const Tensor& dout) {
        const Shape& s = in[0].shape();
        auto i = [](std::size_t v) { return std::int64_t(v); };
        Tensor g = reshape(dout, {i(s[0]), i(s[1]), i(n_rep), i(s[2]), i(s[3])});
        return std::vector<Tensor>{squeeze(slice(g, 2, 0, 1), 2)};  // the bug
      });
}

Config tiny_config() {
  Config cfg;
  cfg.vocab_size = 9;
  cfg.d_model = 8;
  cfg.n_layers = 2;
  cfg.n_heads = 4;
  cfg.n_kv_heads = 2;
  cfg.d_ff = 12;
  cfg.max_len = 8;
  return cfg;
}

}  // namespace

TEST_CASE("custom_op: a correct backward passes the gradient checker") {
  Tensor x = tensor({0.5, -1.0, 2.0, 1.5}, DType::float64);
  GradCheckResult r =
      gradcheck([](const auto& in) { return cube(in[0], false); }, {x}, {}, "cube");
  CAPTURE(r.message());
  CHECK(r.passed);
}

TEST_CASE("custom_op: a wrong backward fails at the index where it is wrong") {
  // 3x and 3x^2 agree at x = 0 and x = 1, so only index 2 (x = 2: 6 vs 12) is wrong.
  Tensor x = tensor({0.0, 1.0, 2.0, 1.0}, DType::float64);
  GradCheckResult r =
      gradcheck([](const auto& in) { return cube(in[0], true); }, {x}, {}, "cube");
  CAPTURE(r.message());
  CHECK_FALSE(r.passed);
  CHECK(r.inputs[0].worst_index == std::vector<std::size_t>{2});
  CHECK(r.message().find("cube: input 0 (4,) FAILED: worst index (2,)") !=
        std::string::npos);
}

TEST_CASE("custom_op: a wrong gradient of the second input names input 1") {
  // d(a*b)/db = a, but this backward copies the line for a and returns b.
  // a and b differ only at index 1, so only there is db wrong.
  Tensor a = tensor({1.0, 2.0, 3.0}, DType::float64),
         b = tensor({1.0, 5.0, 3.0}, DType::float64);
  auto wrong = [](const std::vector<Tensor>& in) {
    return custom_op(
        "mul_typo", in, [](const std::vector<Tensor>& v) { return v[0] * v[1]; },
        [](const std::vector<Tensor>& v, const Tensor&, const Tensor& dout) {
          return std::vector<Tensor>{dout * v[1], dout * v[1]};
        });
  };
  GradCheckResult r = gradcheck(wrong, {a, b}, {}, "mul_typo");
  CAPTURE(r.message());
  CHECK(r.inputs[0].passed);
  CHECK_FALSE(r.inputs[1].passed);
  CHECK(r.inputs[1].worst_index == std::vector<std::size_t>{1});
}

TEST_CASE(
    "planted: repeat_kv that forgets to sum the copies fails at the copy it dropped") {
  // Only output element (0,1,2,3) reaches the loss. Output head 1 is copy 1 of
  // K/V head 0, so the true gradient sits at input (0,0,2,3), and a backward
  // that keeps copy 0 only returns 0 there.
  Tensor mask = zeros({1, 4, 3, 4}, DType::float64);
  mask.mutable_data<double>()[((0 * 4 + 1) * 3 + 2) * 4 + 3] = 1.0;
  auto f = [&](bool buggy) {
    return [&, buggy](const std::vector<Tensor>& in) {
      return (buggy ? repeat_kv_first_copy(in[0], 2) : repeat_kv(in[0], 2)) * mask;
    };
  };
  Tensor x = randn({1, 2, 3, 4}, 7, DType::float64);
  CHECK(gradcheck(f(false), {x}, {}, "repeat_kv").passed);
  GradCheckResult r = gradcheck(f(true), {x}, {}, "repeat_kv_first_copy");
  CAPTURE(r.message());
  CHECK_FALSE(r.passed);
  CHECK(r.inputs[0].worst_index == std::vector<std::size_t>{0, 0, 2, 3});
  CHECK(r.inputs[0].analytic == 0.0);
}

TEST_CASE(
    "planted: exercise 6's grader fails the forgotten sum, naming input 0 and the "
    "index") {
  std::ostringstream out;
  CHECK_FALSE(exercises::grade_repeat_kv(repeat_kv_first_copy, out));
  std::string text = out.str();
  CAPTURE(text);
  // The walkthrough: each of [[1,2],[3,4]] gets one copy's 1 instead of 2.
  CHECK(text.find("got [[1,1],[1,1]], expected [[2,2],[2,2]]  FAIL") !=
        std::string::npos);
  // The first random case: x (2,2,3,4), n_rep 2, and the checker's projection
  // R = Rng(0).normal of the output's shape (2,4,3,4). The true gradient is
  // R[b,2i] + R[b,2i+1]; the planted one R[b,2i]: off by R[b,2i+1]. The worst
  // element is the one whose error is largest against atol + rtol*|true|.
  Tensor R = Rng(0).normal({2, 4, 3, 4}, 0.0, 1.0, DType::float64);
  std::vector<std::size_t> worst;
  double worst_ratio = -1;
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t i = 0; i < 2; ++i)
      for (std::size_t t = 0; t < 3; ++t)
        for (std::size_t d = 0; d < 4; ++d) {
          double kept = R.at({b, 2 * i, t, d}), dropped = R.at({b, 2 * i + 1, t, d});
          double ratio = std::fabs(dropped) / (1e-5 + 1e-3 * std::fabs(kept + dropped));
          if (ratio > worst_ratio) worst_ratio = ratio, worst = {b, i, t, d};
        }
  std::string index = "(" + std::to_string(worst[0]) + "," + std::to_string(worst[1]) +
                      "," + std::to_string(worst[2]) + "," + std::to_string(worst[3]) +
                      ")";
  CAPTURE(index);
  CHECK(text.find("n_rep 2, (2,2,3,4): input 0 at index " + index) != std::string::npos);
}

TEST_CASE("run_exercise prints an unfinished exercise's message and fails it") {
  exercises::Exercise e{
      5, "ex05_matmul", "batched matmul backward",
      [](std::ostream&) -> bool { throw exercises::NotImplemented(5); }};
  std::ostringstream out;
  CHECK_FALSE(exercises::run_exercise(e, out));
  CHECK(out.str().find("Exercise 5: not implemented") != std::string::npos);
  CHECK(out.str().find("Exercise 5 (ex05_matmul): FAIL") != std::string::npos);
}

TEST_CASE(
    "Attention::custom calls custom_attention once per layer and checks its shape") {
  GlassLM model(tiny_config(), 1, DType::float64);
  std::vector<std::int64_t> tokens{1, 2, 3, 4, 5};
  Tensor reference = model.forward(tokens);
  CHECK(std::string(attention_name(Attention::custom)) == "custom");

  SUBCASE("the repeat_kv path written as a custom one gives the same logits") {
    int calls = 0;
    model.attention = Attention::custom;
    model.custom_attention = [&](const Tensor& q, const Tensor& k, const Tensor& v,
                                 std::size_t qs, std::size_t ks) {
      ++calls;
      std::size_t G = q.dim(1) / k.dim(1);
      Tensor scores = matmul_t(q, repeat_kv(k, G)) * (1.0 / std::sqrt(double(q.dim(3))));
      return matmul(causal_softmax(scores, qs, ks), repeat_kv(v, G));
    };
    CHECK(max_abs_diff(model.forward(tokens), reference) == 0.0);
    CHECK(calls == 2);
  }
  SUBCASE("unset: the forward says what to do") {
    model.attention = Attention::custom;
    CHECK_THROWS_WITH_AS(model.forward(tokens),
                         doctest::Contains("custom_attention is not set"),
                         std::invalid_argument);
  }
  SUBCASE("a wrong shape is named") {
    model.attention = Attention::custom;
    model.custom_attention = [](const Tensor& q, const Tensor& k, const Tensor&,
                                std::size_t, std::size_t) { return k; };
    CHECK_THROWS_WITH_AS(
        model.forward(tokens),
        doctest::Contains("custom_attention returned (1,2,5,2); expected q's "
                          "shape [B, H, T, hd] = (1,4,5,2)"),
        std::invalid_argument);
  }
}

TEST_CASE("KVCache::append_fn replaces concat and is checked") {
  GlassLM model(tiny_config(), 2, DType::float64);
  no_grad guard;
  std::vector<std::int64_t> tokens{3, 1, 4, 1, 5};
  Tensor full = model.forward(tokens);

  SUBCASE("a correct append: incremental == full, called for k and v") {
    int calls = 0;
    Cache cache = model.new_cache();
    for (KVCache& c : cache)
      c.append_fn = [&](const Tensor& held, const Tensor& fresh) {
        ++calls;
        return held.defined() ? concat({held, fresh.detach()}, 2) : fresh.detach();
      };
    std::vector<Tensor> parts{model.forward({3, 1, 4}, &cache, 0)};
    parts.push_back(model.forward({1}, &cache, 3));
    parts.push_back(model.forward({5}, &cache, 4));
    CHECK(max_abs_diff(concat(parts, 1), full) <= 1e-12);
    CHECK(calls == 3 * 2 * 2);  // 3 forwards x 2 layers x (k, v)
    CHECK(cache[0].length() == 5);
  }
  SUBCASE("an append along the wrong axis is named") {
    Cache cache = model.new_cache();
    cache[0].append_fn = [](const Tensor& held, const Tensor& fresh) {
      return held.defined() ? concat({held, fresh}, 1) : fresh;  // heads, not positions
    };
    model.forward({3}, &cache, 0);
    CHECK_THROWS_WITH_AS(model.forward({1}, &cache, 1),
                         doctest::Contains("append_fn returned (1,4,1,2) float64 for k; "
                                           "expected (1,2,2,2) float64"),
                         std::invalid_argument);
  }
}
