// Tests for the neural-network ops of ops.h (glassllm/engine/ops_nn.cpp): softmax,
// log_softmax, cross_entropy, embedding, where, masked_fill.
//
// Expected values are worked out by hand (the arithmetic is in the comments)
// or computed by naive loops that spell out NumPy's definition; never by the
// engine itself. Every backward is also compared with central finite
// differences in float64 (check_gradient below).
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "check.h"
#include "glassllm/engine/ops.h"

using namespace glassllm;
using glassllm::test::check_gradient;
using glassllm::test::check_values;

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

// NumPy's softmax of one row, written out: e = exp(x - max(x)); e / e.sum().
std::vector<double> naive_softmax(const std::vector<double>& row) {
  double m = -inf;
  for (double v : row) m = std::max(m, v);
  std::vector<double> e(row.size());
  double total = 0;
  for (std::size_t i = 0; i < row.size(); ++i) total += e[i] = std::exp(row[i] - m);
  for (double& v : e) v /= total;
  return e;
}

}  // namespace

// ---- softmax ---------------------------------------------------------------------

TEST_CASE("softmax rows sum to 1 and masked -inf entries are exactly 0") {
  for (DType dt : {DType::float32, DType::float64}) {
    SUBCASE(dtype_name(dt)) {
      // The literals below carry 10 decimals, hence 1e-9 in float64.
      double tol = dt == DType::float32 ? 1e-6 : 1e-9;
      Tensor x = tensor({{1, 2, 3}, {0, -inf, 0}, {1000, 1001, -inf}}, dt);
      Tensor y = softmax(x, -1);
      CHECK(y.shape() == Shape{3, 3});
      CHECK(y.dtype() == dt);
      // Row 0: e^(x-3) = [e^-2, e^-1, 1]; sum 1.5032147244.
      //   -> [0.0900305732, 0.2447284711, 0.6652409558]
      // Row 1: e^0 = 1 twice and e^-inf = 0: [1/2, 0, 1/2].
      // Row 2: 1000 and 1001 would overflow exp without the max shift;
      //   shifted, [e^-1, 1] / (1 + e^-1) = [0.2689414214, 0.7310585786].
      check_values(y,
                   {0.0900305732, 0.2447284711, 0.6652409558, 0.5, 0.0, 0.5, 0.2689414214,
                    0.7310585786, 0.0},
                   tol);
      CHECK(y.at({1, 1}) == 0.0);  // exactly, not just small
      CHECK(y.at({2, 2}) == 0.0);
      for (std::size_t r = 0; r < 3; ++r)
        CHECK(y.at({r, 0}) + y.at({r, 1}) + y.at({r, 2}) ==
              doctest::Approx(1.0).epsilon(tol));
    }
  }
}

TEST_CASE("softmax along axis 0 normalises each column") {
  // Columns of [[1,2],[3,4]]: [1,3] -> [1, e^2] / (1 + e^2) = [0.1192029220,
  // 0.8807970780], and [2,4] gives the same numbers (only differences matter).
  Tensor y = softmax(tensor({{1, 2}, {3, 4}}, DType::float64), 0);
  check_values(y, {0.1192029220, 0.1192029220, 0.8807970780, 0.8807970780}, 1e-9);
}

TEST_CASE("softmax matches NumPy's formula on a 3-D tensor along the middle axis") {
  Tensor x = randn({2, 3, 4}, 7, DType::float64);
  Tensor y = softmax(x, 1);
  for (std::size_t a = 0; a < 2; ++a)
    for (std::size_t c = 0; c < 4; ++c) {
      std::vector<double> row{x.at({a, 0, c}), x.at({a, 1, c}), x.at({a, 2, c})};
      std::vector<double> e = naive_softmax(row);
      for (std::size_t k = 0; k < 3; ++k) CHECK(y.at({a, k, c}) == doctest::Approx(e[k]));
    }
}

TEST_CASE("softmax backward is y * (dout - sum(dout * y))") {
  for (DType dt : {DType::float32, DType::float64}) {
    SUBCASE(dtype_name(dt)) {
      // softmax([0, ln 3]) = [1, 3] / 4 = [1/4, 3/4]. With dout = [1, 0]:
      // sum(dout * y) = 1/4, dx = [1/4 (1 - 1/4), 3/4 (0 - 1/4)] = [3/16, -3/16].
      Tensor x = tensor({0.0, std::log(3.0)}, dt).requires_grad_();
      softmax(x).backward(tensor({1, 0}, dt));
      check_values(x.grad(), {3.0 / 16, -3.0 / 16}, 1e-6);
    }
  }
  SUBCASE("against finite differences") {
    check_gradient([](const Tensor& x) { return softmax(x, 1); },
                   randn({2, 3, 4}, 11, DType::float64));
    check_gradient([](const Tensor& x) { return softmax(x, -1); },
                   randn({3, 5}, 12, DType::float64));
  }
}

TEST_CASE("softmax gives no gradient to masked -inf entries") {
  Tensor x = tensor({0.0, -inf, 0.0}, DType::float64).requires_grad_();
  softmax(x).backward(tensor({1, 5, 3}, DType::float64));
  // y = [1/2, 0, 1/2], sum(dout * y) = 2, dx = [1/2 (1-2), 0, 1/2 (3-2)].
  check_values(x.grad(), {-0.5, 0.0, 0.5}, 1e-12);
}

TEST_CASE("softmax rejects an axis outside the tensor") {
  CHECK_THROWS_WITH_AS(
      softmax(zeros({2, 3}), 2),
      doctest::Contains("softmax: axis 2 is out of range for shape (2,3)"),
      std::invalid_argument);
}

// ---- log_softmax -------------------------------------------------------------------

TEST_CASE("log_softmax is x minus log-sum-exp, stable for large logits") {
  for (DType dt : {DType::float32, DType::float64}) {
    SUBCASE(dtype_name(dt)) {
      // [0, ln 3]: log-sum-exp = ln 4, so [-ln 4, ln 3 - ln 4] = [-1.3862943611,
      // -0.2876820725]. [1000, 0]: log-sum-exp = 1000 + ln(1 + e^-1000) = 1000 (e^-1000
      // underflows), so [0, -1000]; log(softmax) would give log(0) = -inf instead.
      Tensor y = log_softmax(tensor({{0.0, std::log(3.0)}, {1000, 0}}, dt));
      check_values(y, {-1.3862943611, -0.2876820725, 0.0, -1000.0}, 1e-6);
    }
  }
}

TEST_CASE("log_softmax backward is dout - softmax * sum(dout)") {
  // softmax([0, ln 3]) = [1/4, 3/4]; dout = [1, 0] -> dx = [1 - 1/4, 0 - 3/4].
  Tensor x = tensor({0.0, std::log(3.0)}, DType::float64).requires_grad_();
  log_softmax(x).backward(tensor({1, 0}, DType::float64));
  check_values(x.grad(), {0.75, -0.75}, 1e-12);
  check_gradient([](const Tensor& t) { return log_softmax(t, -1); },
                 randn({2, 3, 4}, 21, DType::float64));
  check_gradient([](const Tensor& t) { return log_softmax(t, 0); },
                 randn({3, 2}, 22, DType::float64));
}

// ---- cross_entropy -----------------------------------------------------------------

TEST_CASE("cross_entropy is the mean of log-sum-exp minus the target logit") {
  for (DType dt : {DType::float32, DType::float64}) {
    SUBCASE(dtype_name(dt)) {
      double tol = dt == DType::float32 ? 1e-6 : 1e-10;
      // Row 0: logits [1, 2, 3], target 2.
      //   logsumexp = 3 + ln(e^-2 + e^-1 + 1) = 3 + ln(1.5032147244) = 3.4076059644
      //   loss_0 = 3.4076059644 - 3 = 0.4076059644
      // Row 1: logits [0, 0, ln 2], target 0.
      //   logsumexp = ln(1 + 1 + 2) = ln 4 = 1.3862943611; loss_1 = 1.3862943611 - 0
      // Mean: (0.4076059644 + 1.3862943611) / 2 = 0.8969501628
      Tensor logits = tensor({{1, 2, 3}, {0, 0, std::log(2.0)}}, dt).requires_grad_();
      Tensor loss = cross_entropy(logits, {2, 0});
      CHECK(loss.shape() == Shape{});
      CHECK(loss.item() == doctest::Approx(0.8969501628).epsilon(tol));

      // Gradient: (softmax - onehot) / 2 rows.
      //   row 0: softmax = [e^-2, e^-1, 1] / 1.5032147244 = [0.0900305732, 0.2447284711,
      //          0.6652409558]; minus onehot(2), halved:
      //          [0.0450152866, 0.1223642356, -0.1673795221]
      //   row 1: softmax = [1/4, 1/4, 1/2]; minus onehot(0), halved:
      //          [-0.375, 0.125, 0.25]
      loss.backward();
      check_values(logits.grad(),
                   {0.0450152866, 0.1223642356, -0.1673795221, -0.375, 0.125, 0.25}, tol);
    }
  }
}

TEST_CASE("cross_entropy skips ignored rows in the mean and gives them no gradient") {
  // The two rows above plus a row whose target is ignore_index (-100 by
  // default): the mean is still over 2 rows, and the third row's gradient is 0.
  Tensor logits = tensor({{1, 2, 3}, {5, -1, 2}, {0, 0, std::log(2.0)}}, DType::float64)
                      .requires_grad_();
  Tensor loss = cross_entropy(logits, {2, -100, 0});
  CHECK(loss.item() == doctest::Approx(0.8969501628).epsilon(1e-10));
  loss.backward();
  check_values(logits.grad(),
               {0.0450152866, 0.1223642356, -0.1673795221, 0, 0, 0, -0.375, 0.125, 0.25},
               1e-10);

  SUBCASE("with a custom ignore_index") {
    Tensor l2 = cross_entropy(logits.detach(), {2, -1, 0}, -1);
    CHECK(l2.item() == doctest::Approx(0.8969501628).epsilon(1e-10));
  }
  SUBCASE("every row ignored gives 0 and a zero gradient") {
    Tensor z = tensor({{1, 2}, {3, 4}}, DType::float64).requires_grad_();
    Tensor l3 = cross_entropy(z, {-100, -100});
    CHECK(l3.item() == 0.0);
    l3.backward();
    check_values(z.grad(), {0, 0, 0, 0}, 0);
  }
}

TEST_CASE("cross_entropy reads logits [B, T, C] as B*T rows") {
  // One row per (b, t); the values are those of the hand-computed example.
  Tensor logits = tensor({{{1, 2, 3}, {0, 0, std::log(2.0)}}}, DType::float64);
  CHECK(cross_entropy(logits, {2, 0}).item() ==
        doctest::Approx(0.8969501628).epsilon(1e-10));
}

TEST_CASE("cross_entropy backward matches finite differences") {
  check_gradient(
      [](const Tensor& x) {
        return cross_entropy(x, {3, 0, -100, 4, 1, 2});
      },
      randn({2, 3, 5}, 31, DType::float64));
}

TEST_CASE("cross_entropy over rows longer than one batch of SIMD lanes") {
  // 37 classes: whole batches of 8 or 16 lanes and a remainder in the
  // vectorised max, exp and sum. Expected: each row's log-sum-exp minus its
  // target logit, added up in long double by the plain formula.
  const std::size_t rows = 4, C = 37;
  const std::vector<std::int64_t> targets{0, 36, -100, 17};
  for (DType dt : {DType::float32, DType::float64}) {
    SUBCASE(dtype_name(dt)) {
      Tensor logits = randn({rows, C}, 32, dt) * 3.0;
      std::vector<double> z = logits.to_vector();
      long double total = 0;
      for (std::size_t r = 0; r < rows; ++r) {
        if (targets[r] < 0) continue;
        long double sum_exp = 0;
        for (std::size_t c = 0; c < C; ++c)
          sum_exp += std::exp((long double)z[r * C + c]);
        total += std::log(sum_exp) - z[r * C + std::size_t(targets[r])];
      }
      double tol = dt == DType::float32 ? 1e-5 : 1e-12;
      CHECK(cross_entropy(logits, targets).item() ==
            doctest::Approx(double(total / 3)).epsilon(tol));
    }
  }
  check_gradient([&](const Tensor& x) { return cross_entropy(x, targets); },
                 randn({rows, C}, 33, DType::float64));
}

TEST_CASE("cross_entropy rejects bad targets, naming the position") {
  Tensor logits = zeros({4, 5});
  CHECK_THROWS_WITH_AS(
      cross_entropy(logits, {0, 1, 2, 7}),
      doctest::Contains(
          "cross_entropy: target 7 at position 3 is out of range for 5 classes"),
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      cross_entropy(logits, {0, -2, 1, 1}),
      doctest::Contains(
          "cross_entropy: target -2 at position 1 is out of range for 5 classes"),
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      cross_entropy(logits, {0, 1, 2}),
      doctest::Contains("cross_entropy: 3 targets for logits of shape (4,5), "
                        "which have 4 rows"),
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      cross_entropy(scalar(1.0), {0}),
      doctest::Contains("cross_entropy: logits of shape () have no class axis"),
      std::invalid_argument);
}

// ---- embedding ---------------------------------------------------------------------

TEST_CASE("embedding picks rows of the weight, result ids_shape + [D]") {
  for (DType dt : {DType::float32, DType::float64}) {
    SUBCASE(dtype_name(dt)) {
      Tensor weight = tensor({{0, 1}, {10, 11}, {20, 21}}, dt);
      Tensor out = embedding(weight, {2, 0, 2, 1}, {2, 2});
      CHECK(out.shape() == Shape{2, 2, 2});
      CHECK(out.dtype() == dt);
      // weight[[[2, 0], [2, 1]]]
      check_values(out, {20, 21, 0, 1, 20, 21, 10, 11}, 0);
    }
  }
}

TEST_CASE("embedding backward accumulates the gradients of a repeated id") {
  for (DType dt : {DType::float32, DType::float64}) {
    SUBCASE(dtype_name(dt)) {
      Tensor weight = zeros({3, 2}, dt).requires_grad_();
      Tensor out = embedding(weight, {1, 1, 0}, {3});
      out.backward(tensor({{1, 2}, {3, 4}, {5, 6}}, dt));
      // Row 1 is used at positions 0 and 1: [1, 2] + [3, 4] = [4, 6].
      // Row 0 at position 2: [5, 6]. Row 2 is never used: [0, 0].
      check_values(weight.grad(), {5, 6, 4, 6, 0, 0}, 0);
    }
  }
  check_gradient(
      [](const Tensor& w) {
        return embedding(w, {3, 1, 3, 0, 3, 2}, {2, 3});
      },
      randn({4, 5}, 41, DType::float64));
}

TEST_CASE("embedding rejects ids outside the table and a mismatched ids_shape") {
  Tensor weight = zeros({10, 3});
  CHECK_THROWS_WITH_AS(
      embedding(weight, {0, 1, 2, 3, 12}, {5}),
      doctest::Contains("embedding: id 12 at position 4 is out of range for 10 rows"),
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      embedding(weight, {-1}, {1}),
      doctest::Contains("embedding: id -1 at position 0 is out of range for 10 rows"),
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      embedding(weight, {0, 1, 2, 3, 4}, {2, 3}),
      doctest::Contains("embedding: 5 ids do not fill ids_shape (2,3) (6 elements)"),
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      embedding(zeros({10}), {0}, {1}),
      doctest::Contains("embedding: weight must be 2-D [V, D], got shape (10,)"),
      std::invalid_argument);
}

// ---- where -------------------------------------------------------------------------

TEST_CASE(
    "where picks a where the condition is nonzero, b elsewhere, broadcasting all three") {
  for (DType dt : {DType::float32, DType::float64}) {
    SUBCASE(dtype_name(dt)) {
      // condition (1,3), a (2,1), b () broadcast to (2,3); the condition has
      // the other dtype, which where allows.
      DType other = dt == DType::float32 ? DType::float64 : DType::float32;
      Tensor cond = tensor({{1, 0, -2}}, other);
      Tensor a = from_vector({1, 2}, {2, 1}, dt).requires_grad_();  // [[1], [2]]
      Tensor b = scalar(-1, dt).requires_grad_();
      Tensor out = where(cond, a, b);
      CHECK(out.shape() == Shape{2, 3});
      CHECK(out.dtype() == dt);
      check_values(out, {1, -1, 1, 2, -1, 2}, 0);

      // dout = [[1,2,3],[4,5,6]]: a gets the entries where the condition
      // holds, summed over its broadcast axis: [[1+3], [4+6]] = [[4], [10]];
      // b gets the others, summed to a scalar: 2 + 5 = 7.
      out.backward(tensor({{1, 2, 3}, {4, 5, 6}}, dt));
      check_values(a.grad(), {4, 10}, 0);
      check_values(b.grad(), {7}, 0);
    }
  }
}

TEST_CASE("where with the same tensor on both sides passes the whole gradient through") {
  // x used twice: the true and false parts add up to dout.
  Tensor x = tensor({1, 2, 3}, DType::float64).requires_grad_();
  where(tensor({0, 1, 0}, DType::float64), x, x)
      .backward(tensor({5, 6, 7}, DType::float64));
  check_values(x.grad(), {5, 6, 7}, 0);
}

TEST_CASE("where backward matches finite differences for a and b") {
  Tensor cond = tensor({{1, 0, 0}, {0, 1, 1}}, DType::float64);  // (2,3)
  Tensor b = randn({3}, 51, DType::float64);
  Tensor a = randn({2, 1}, 52, DType::float64);
  check_gradient([&](const Tensor& t) { return where(cond, t, b); }, a);
  check_gradient([&](const Tensor& t) { return where(cond, a, t); }, b);
}

TEST_CASE("where rejects shapes that do not broadcast and mixed dtypes") {
  CHECK_THROWS_WITH_AS(
      where(zeros({2, 3}), zeros({4}), zeros({})),
      doctest::Contains("where: shapes (2,3), (4,) and () cannot be broadcast"),
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      where(zeros({2}), zeros({2}, DType::float32), zeros({2}, DType::float64)),
      doctest::Contains("where: dtypes float32 (2,) and float64 (2,) differ"),
      std::invalid_argument);
}

// ---- masked_fill -------------------------------------------------------------------

TEST_CASE(
    "masked_fill writes the value where the mask is nonzero and blocks its gradient") {
  for (DType dt : {DType::float32, DType::float64}) {
    SUBCASE(dtype_name(dt)) {
      // A causal mask: key 1 is in the future of query 0.
      Tensor x = tensor({{1, 2}, {3, 4}}, dt).requires_grad_();
      Tensor mask = tensor({{0, 1}, {0, 0}}, dt);
      Tensor out = masked_fill(x, mask, -inf);
      check_values(out, {1, -inf, 3, 4}, 0);
      out.backward(tensor({{1, 2}, {3, 4}}, dt));
      check_values(x.grad(), {1, 0, 3, 4}, 0);  // 0 where filled

      // Followed by softmax, the masked entry gets exactly 0.
      CHECK(softmax(out.detach()).at({0, 1}) == 0.0);
    }
  }
}

TEST_CASE("masked_fill broadcasts a smaller mask over x") {
  // mask (2,) applies to every row of x (2,2); mask (2,1,2) would not fit.
  Tensor x = tensor({{1, 2}, {3, 4}}, DType::float64);
  check_values(masked_fill(x, tensor({1, 0}, DType::float32), 9), {9, 2, 9, 4}, 0);
  Tensor mask = tensor({{1, 0, 0}, {1, 1, 0}}, DType::float64);  // (2,3)
  check_gradient([&](const Tensor& t) { return masked_fill(t, mask, 0.5); },
                 randn({4, 2, 3}, 61, DType::float64));
}

TEST_CASE("masked_fill rejects a mask that does not broadcast to x") {
  CHECK_THROWS_WITH_AS(
      masked_fill(zeros({2, 2}), zeros({3}), 0),
      doctest::Contains(
          "masked_fill: mask of shape (3,) does not broadcast to x's shape (2,2)"),
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      masked_fill(zeros({2}), zeros({1, 2}), 0),
      doctest::Contains(
          "masked_fill: mask of shape (1,2) does not broadcast to x's shape (2,)"),
      std::invalid_argument);
}
