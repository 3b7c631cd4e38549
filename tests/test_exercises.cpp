// test_exercises.cpp: the exercises' extension points on their own (custom_op,
// Attention::custom, KVCache::append_fn), and the graders failing where they
// should: a planted wrong backward is named by input and index. That every
// reference solution passes and every untouched stub fails is checked by the
// CTest tests solution_exNN and stub_exNN_fails (CMakeLists.txt).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <regex>
#include <set>
#include <sstream>

#include "check.h"
#include "exercises/exercises.h"
#include "exercises/grader.h"
#include "exercises/messages.h"
#include "glassllm/model/model.h"

using namespace glassllm;
using namespace glassllm::test;

namespace {

// The graders speak the environment's language (messages.h); these tests
// read their English, whatever LANG the tests run with.
const bool graders_in_english = setenv("GLASSLLM_LANG", "en", 1) == 0;

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

Config gqa_config() {
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
  // The walkthrough: dout is 1, 10, 100, 1000 on output heads 0-3; heads 0
  // and 1 copy K/V head 0, heads 2 and 3 K/V head 1. Keeping copy 0 only
  // gives K/V head 0 the 1 and K/V head 1 the 100.
  CHECK(text.find("got dx [[1,1],[100,100]], expected [[11,11],[1100,1100]]  FAIL") !=
        std::string::npos);
  // The first random case, x (2,2,3,4) with n_rep 2, explained with dout = 1
  // everywhere: every element of x has two copies, so d sum / dx = 2 at every
  // index; the planted backward gives 1, already at the first index.
  CHECK(text.find("-> n_rep 2, (2,2,3,4): input 0 (x, (2,2,3,4)) at index (0,0,0,0): "
                  "with dout = 1 everywhere, your backward gives dx(0,0,0,0) = 1.000000, "
                  "central differences of sum(f) give 2.000000") != std::string::npos);
}

TEST_CASE("planted: exercise 6's walkthrough fails the tiled order of the copies") {
  // The backward sums dout's heads as if the copies were [0,1,0,1] (reshape to
  // [B, n_rep, Hkv, T, D]): K/V head 0 gets output heads 0 and 2 (1 + 100),
  // head 1 gets 1 and 3 (10 + 1000). A plain sum(repeat_kv(x)) could not tell.
  auto tiled = [](const Tensor& x, std::size_t n_rep) {
    return custom_op(
        "repeat_kv_tiled", {x},
        [n_rep](const std::vector<Tensor>& in) { return repeat_kv(in[0], n_rep); },
        [n_rep](const std::vector<Tensor>& in, const Tensor&, const Tensor& dout) {
          const Shape& s = in[0].shape();
          auto i = [](std::size_t v) { return std::int64_t(v); };
          Tensor g = reshape(dout, {i(s[0]), i(n_rep), i(s[1]), i(s[2]), i(s[3])});
          return std::vector<Tensor>{sum(g, {1})};  // the bug: the tiled order
        });
  };
  std::ostringstream out;
  CHECK_FALSE(exercises::grade_repeat_kv(tiled, out));
  CAPTURE(out.str());
  CHECK(out.str().find("got dx [[101,101],[1010,1010]], expected [[11,11],[1100,1100]]  "
                       "FAIL") != std::string::npos);
}

TEST_CASE("planted: a mul whose da uses a names input a, the index and both entries") {
  // da = dout * a instead of dout * b. With dout = 1, d sum(a*b) / da = b, so
  // the first wrong entry is the first index where a and b differ: (0,0) for
  // these random inputs (the grader's own: randn (2,3), seeds 1 and 2).
  auto wrong_mul = [](const Tensor& a, const Tensor& b) {
    return custom_op(
        "mul_wrong", {a, b}, [](const std::vector<Tensor>& v) { return v[0] * v[1]; },
        [](const std::vector<Tensor>& v, const Tensor&, const Tensor& dout) {
          return std::vector<Tensor>{dout * v[0], dout * v[0]};
        });
  };
  std::ostringstream out;
  CHECK_FALSE(exercises::grade_elementwise(
      wrong_mul, [](const Tensor& x) { return exp(x); },
      [](const Tensor& x) { return silu(x); }, out));
  Tensor a = randn({2, 3}, 1, DType::float64), b = randn({2, 3}, 2, DType::float64);
  char expected[200];
  std::snprintf(expected, sizeof expected,
                "input 0 (a, (2,3)) at index (0,0): with dout = 1 everywhere, your "
                "backward gives da(0,0) = %.6f, central differences of sum(f) give %.6f",
                a.at({0, 0}), b.at({0, 0}));
  CAPTURE(out.str());
  CHECK(out.str().find(expected) != std::string::npos);
}

TEST_CASE(
    "planted: exercise 9 names the layer, head and position of the first wrong key") {
  // Appending fresh BEFORE held keeps every key but in the wrong order. With
  // every cached key visible, attention does not care about the order, so the
  // logits still match; only the cache shows it: after all 10 tokens it holds
  // them newest first, so position 0 holds position 9's key. (In layer 0 a
  // key depends only on its token and position, so that key is the
  // engine's own.)
  auto fresh_first = [](const Tensor& held, const Tensor& fresh) {
    return held.defined() ? concat({fresh.detach(), held}, 2) : fresh.detach();
  };
  std::ostringstream out;
  CHECK_FALSE(exercises::grade_kv_cache(fresh_first, out));
  CAPTURE(out.str());
  // The grader's model and tokens, decoded with the engine's own cache.
  Config cfg;
  cfg.vocab_size = 11;
  cfg.d_model = 16;
  cfg.n_layers = 2;
  cfg.n_heads = 4;
  cfg.n_kv_heads = 2;
  cfg.d_ff = 24;
  cfg.max_len = 16;
  GlassLM model(cfg, 0, DType::float64);
  no_grad guard;
  Cache cache = model.new_cache();
  model.forward({3, 1, 4, 1, 5, 9, 2, 6, 5, 3}, &cache, 0);  // the grader's tokens
  char expected[200];
  std::snprintf(expected, sizeof expected,
                "layer 0, K/V head 0, position 0, keys[.., 0]: expected %.6g, got %.6g  "
                "FAIL",
                cache[0].k().at({0, 0, 0, 0}), cache[0].k().at({0, 0, 9, 0}));
  CHECK(out.str().find("model: incremental == full, prompt 1 ") != std::string::npos);
  CHECK(out.str().find(expected) != std::string::npos);
}

TEST_CASE(
    "a failing exercise prints the hints its failed checks point to; a passing one "
    "none") {
  auto count_hints = [](const std::string& text) {
    std::size_t n = 0;
    for (std::size_t at = text.find("  hint: "); at != std::string::npos;
         at = text.find("  hint: ", at + 1))
      ++n;
    return n;
  };
  std::ostringstream failing, passing;
  CHECK_FALSE(exercises::run_exercise({6, "ex06_repeat_kv", "t",
                                       [](std::ostream& o) {
                                         return exercises::grade_repeat_kv(
                                             repeat_kv_first_copy, o);
                                       }},
                                      failing));
  // Keeping one copy fails the walkthrough with [[1,1],[100,100]]: that
  // mistake's hint, and not the tiled order's (the walkthrough rules it out).
  CAPTURE(failing.str());
  CHECK(count_hints(failing.str()) == 1);
  CHECK(failing.str().find("hint: each input head has n_rep copies: add all their "
                           "gradients") != std::string::npos);
  CHECK(exercises::run_exercise(
      {6, "ex06_repeat_kv", "t",
       [](std::ostream& o) {
         return exercises::grade_repeat_kv(
             [](const Tensor& x, std::size_t n) { return repeat_kv(x, n); }, o);
       }},
      passing));
  CHECK(count_hints(passing.str()) == 0);
  for (int n = 1; n <= 10; ++n) CHECK(exercises::common_mistakes(n).size() >= 3);
  // A report whose failed checks point to no hint gets the usual mistakes.
  CHECK(exercises::hints_for(9, "  held is left unchanged   held was written  FAIL\n")
            .empty());
  CHECK(exercises::hints_for(9, "  result is detached   it requires grad  FAIL\n") ==
        std::vector<std::string>{"the result must be detached (the cache is for "
                                 "inference): detach() what you store"});
}

namespace {

// Two usual mistakes in rmsnorm's backward (exercise 7): `dx = r * dout`
// (the second term lost), and a sum where the mean belongs.
Tensor rmsnorm_with(bool lose_second_term, const Tensor& x, double eps) {
  return custom_op(
      "my_rmsnorm", {x},
      [eps](const std::vector<Tensor>& in) { return rmsnorm(in[0], eps); },
      [eps, lose_second_term](const std::vector<Tensor>& in, const Tensor& y,
                              const Tensor& dout) {
        Tensor r = rsqrt(mean(in[0] * in[0], {-1}, true) + eps);  // [..., 1]
        if (lose_second_term) return std::vector<Tensor>{r * dout};
        return std::vector<Tensor>{r * (dout - y * sum(dout * y, {-1}, true))};
      });
}

// Two usual mistakes in rope's backward (exercise 8): rotate_half instead of
// its transpose, and sin where cos multiplies dout.
Tensor rope_with(bool wrong_rotation, const Tensor& x, std::size_t start, double theta) {
  return custom_op(
      "my_rope", {x},
      [=](const std::vector<Tensor>& in) { return rope(in[0], start, theta); },
      [=](const std::vector<Tensor>& in, const Tensor&, const Tensor& dout) {
        const std::size_t T = in[0].dim(-2), hd = in[0].dim(-1), half = hd / 2;
        std::vector<double> c(T * hd), s(T * hd);  // [T, hd]
        for (std::size_t t = 0; t < T; ++t)
          for (std::size_t i = 0; i < half; ++i) {
            double a = double(start + t) * std::pow(theta, -2.0 * double(i) / double(hd));
            c[t * hd + i] = c[t * hd + i + half] = std::cos(a);
            s[t * hd + i] = s[t * hd + i + half] = std::sin(a);
          }
        Tensor cos = from_vector(c, {T, hd}, in[0].dtype());
        Tensor sin = from_vector(s, {T, hd}, in[0].dtype());
        Tensor g = dout * sin;
        auto h = std::int64_t(half), n = std::int64_t(hd);
        if (wrong_rotation)
          return std::vector<Tensor>{
              dout * cos + concat({-slice(g, -1, h, n), slice(g, -1, 0, h)}, -1)};
        return std::vector<Tensor>{dout * sin +
                                   concat({slice(g, -1, h, n), -slice(g, -1, 0, h)}, -1)};
      });
}

// The one hint a failing report of exercise n printed ("" if not exactly one).
std::string the_one_hint(int n, const std::function<bool(std::ostream&)>& grade) {
  std::ostringstream report;
  CHECK_FALSE(exercises::run_exercise({n, "ex", "t", grade}, report));
  std::vector<std::string> hints = exercises::hints_for(n, report.str());
  CAPTURE(report.str());
  CHECK(hints.size() == 1);
  return hints.size() == 1 ? hints[0] : "";
}

}  // namespace

TEST_CASE("exercises 7 and 8: two mistakes in one backward get two different hints") {
  CHECK(the_one_hint(7, [](std::ostream& o) {
          return exercises::grade_rmsnorm(
              [](const Tensor& x, double eps) { return rmsnorm_with(true, x, eps); }, o);
        }).find("the second term is the one usually lost") != std::string::npos);
  CHECK(the_one_hint(7, [](std::ostream& o) {
          return exercises::grade_rmsnorm(
              [](const Tensor& x, double eps) { return rmsnorm_with(false, x, eps); }, o);
        }).find("mean (divide by D), not sum") != std::string::npos);
  CHECK(the_one_hint(8, [](std::ostream& o) {
          return exercises::grade_rope(
              [](const Tensor& x, std::size_t s, double th) {
                return rope_with(true, x, s, th);
              },
              o);
        }).find("the TRANSPOSE of rotate_half") != std::string::npos);
  CHECK(the_one_hint(8, [](std::ostream& o) {
          return exercises::grade_rope(
              [](const Tensor& x, std::size_t s, double th) {
                return rope_with(false, x, s, th);
              },
              o);
        }).find("cos with dout, sin inside") != std::string::npos);
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
  GlassLM model(gqa_config(), 1, DType::float64);
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
  GlassLM model(gqa_config(), 2, DType::float64);
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

// ---- the graders' languages (messages.h) ---------------------------------------

namespace {

std::set<std::string> placeholders(const std::string& text) {
  std::set<std::string> names;
  static const std::regex placeholder("\\{([a-z_]+)\\}");
  for (std::sregex_iterator m(text.begin(), text.end(), placeholder), end; m != end; ++m)
    names.insert((*m)[1]);
  return names;
}

// Sets GLASSLLM_LANG for one scope, then back to English.
struct GraderLanguage {
  explicit GraderLanguage(const char* lang) { setenv("GLASSLLM_LANG", lang, 1); }
  ~GraderLanguage() { setenv("GLASSLLM_LANG", "en", 1); }
};

}  // namespace

TEST_CASE(
    "the graders' English and Portuguese tables have the same ids and placeholders") {
  REQUIRE(graders_in_english);
  const auto& en = exercises::message_table(exercises::Language::en);
  const auto& pt = exercises::message_table(exercises::Language::pt);
  CHECK(en.size() > 100);
  for (const auto& [id, text] : en) {
    CAPTURE(id);
    auto other = pt.find(id);
    REQUIRE(other != pt.end());
    CHECK(placeholders(text) == placeholders(other->second));
    CHECK(other->second != "");
  }
  for (const auto& [id, text] : pt) {
    CAPTURE(id);
    CHECK(en.count(id) == 1);
  }
  // A hint for each of the usual mistakes, in both languages.
  for (int n = 1; n <= 10; ++n) {
    CAPTURE(n);
    const std::size_t english = exercises::common_mistakes(n).size();
    GraderLanguage pt_here("pt");
    CHECK(exercises::common_mistakes(n).size() == english);
  }
}

TEST_CASE("tr fills placeholders and refuses an unknown id or a missing argument") {
  using exercises::Language;
  CHECK(exercises::tr(Language::en, "run.pass", {{"n", "6"}, {"name", "ex06"}}) ==
        "Exercise 6 (ex06): PASS");
  CHECK(exercises::tr(Language::pt, "run.pass", {{"n", "6"}, {"name", "ex06"}}) ==
        "Exercício 6 (ex06): PASSOU");
  CHECK_THROWS_AS(exercises::tr(Language::en, "no.such.id"), std::logic_error);
  CHECK_THROWS_AS(exercises::tr(Language::en, "run.pass", {{"n", "6"}}),
                  std::logic_error);
}

TEST_CASE("the graders' language: GLASSLLM_LANG, then LC_ALL, LC_MESSAGES, LANG") {
  using exercises::Language;
  using exercises::language_from;
  CHECK(language_from(nullptr, nullptr, nullptr, nullptr) == Language::en);
  CHECK(language_from("pt", nullptr, nullptr, "C") == Language::pt);
  CHECK(language_from("en", "pt_BR.UTF-8", nullptr, "pt_BR.UTF-8") == Language::en);
  CHECK(language_from("", nullptr, nullptr, "pt_BR.UTF-8") == Language::pt);
  CHECK(language_from(nullptr, "pt_PT.UTF-8", nullptr, "C") == Language::pt);
  CHECK(language_from(nullptr, "C", nullptr, "pt_BR.UTF-8") == Language::en);
  CHECK(language_from(nullptr, "", "pt_BR.UTF-8", "en_US.UTF-8") == Language::pt);
  CHECK(language_from(nullptr, nullptr, nullptr, "en_US.UTF-8") == Language::en);
  CHECK(language_from(nullptr, nullptr, nullptr, "p") == Language::en);
}

TEST_CASE("in Portuguese, exercise 6's planted mistake gets the same checks and hint") {
  // The walkthrough fails with [[1,1],[100,100]] in both languages, and the
  // hint chosen is the same mistake's, written in Portuguese.
  GraderLanguage pt_here("pt");
  std::ostringstream out;
  CHECK_FALSE(exercises::run_exercise({6, "ex06_repeat_kv", exercises::tr("title.6"),
                                       [](std::ostream& o) {
                                         return exercises::grade_repeat_kv(
                                             repeat_kv_first_copy, o);
                                       }},
                                      out));
  const std::string text = out.str();
  CAPTURE(text);
  CHECK(text.rfind("Exercício 6: backward de repeat_kv (as cópias somadas)\n", 0) == 0);
  // (The report is wrapped at 100 columns: each part checked ends a line.)
  CHECK(text.find(": obtido dx\n      [[1,1],[100,100]], esperado") != std::string::npos);
  CHECK(
      text.find("  dica: cada cabeça de entrada tem n_rep cópias: some os gradientes de "
                "todas, não fique com uma só\n") != std::string::npos);
  CHECK(text.find("hint") == std::string::npos);
  CHECK(text.find(
            "-> n_rep 2, (2,2,3,4): entrada 0 (x, (2,2,3,4)) no índice (0,0,0,0): com "
            "dout = 1 em toda parte,\n") != std::string::npos);
  CHECK(text.find("Exercício 6 (ex06_repeat_kv): FALHOU\n") != std::string::npos);
  // The gradient table's columns stay aligned with accented headers: the
  // header's "analítico" ends where the rows' analytic values end.
  std::istringstream lines(text);
  std::string header, row;
  for (std::string l; std::getline(lines, l);) {
    if (l.rfind("  caso ", 0) == 0) header = l;
    if (l.rfind("  n_rep 1, (1,3,2,2) ", 0) == 0) row = l;
  }
  REQUIRE(header != "");
  REQUIRE(row != "");
  auto chars_before = [](const std::string& s, std::size_t byte) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < byte; ++i)
      n += (static_cast<unsigned char>(s[i]) & 0xC0) != 0x80;
    return n;
  };
  const std::size_t header_end = chars_before(header, header.find("analítico") + 10);
  // "  " + 28 + " " + 3 + " " + 10 + " " + 10 + " " + 10: the analytic column's end.
  CHECK(header_end == 2 + 28 + 1 + 3 + 1 + 10 + 1 + 10 + 1 + 10);
  CHECK(row.size() > header_end);
  CHECK(row[header_end] == ' ');
  CHECK(row[header_end - 1] != ' ');
}
