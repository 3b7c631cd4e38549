// Tests for the attention pieces of ops.h (glassllm/engine/ops_attention.cpp):
// repeat_kv, rmsnorm, rope and causal_softmax.
//
// Expected values are worked out by hand (the arithmetic is in the comments)
// or computed by naive loops that spell out docs/design.md's formulas; never by
// the engine itself. Every backward is also compared with central finite
// differences in float64 (check_gradient below).
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "check.h"
#include "glassllm/engine/ops.h"
#include "glassllm/fast/blas.h"

using namespace glassllm;
using glassllm::test::check_gradient;
using glassllm::test::check_values;

namespace {

// docs/design.md's RoPE, literally, for one vector x of length hd at position p:
//   cos = [cos(a), cos(a)], sin = [sin(a), sin(a)], a_i = p * theta^(-2i/hd)
//   rope(x) = x * cos + rotate_half(x) * sin,
//   rotate_half(x) = concat(-x[hd/2:], x[:hd/2]).
std::vector<double> naive_rope(const std::vector<double>& x, double p, double theta) {
  std::size_t hd = x.size(), half = hd / 2;
  std::vector<double> cos(hd), sin(hd), rot(hd), out(hd);
  for (std::size_t i = 0; i < half; ++i) {
    double a = p * std::pow(theta, -2.0 * double(i) / double(hd));
    cos[i] = cos[i + half] = std::cos(a);
    sin[i] = sin[i + half] = std::sin(a);
  }
  for (std::size_t i = 0; i < half; ++i) {
    rot[i] = -x[i + half];
    rot[i + half] = x[i];
  }
  for (std::size_t i = 0; i < hd; ++i) out[i] = x[i] * cos[i] + rot[i] * sin[i];
  return out;
}

}  // namespace

// ---- repeat_kv ---------------------------------------------------------------------

TEST_CASE("repeat_kv repeats each head in place: [0,0,1,1]") {
  for (DType dt : {DType::float32, DType::float64}) {
    SUBCASE(dtype_name(dt)) {
      // [[1,2],[3,4]] as x of shape [B=1, Hkv=2, T=2, D=1]: head 0 holds the
      // values 1, 2 at positions 0, 1 and head 1 holds 3, 4. (Shape [1,2,2,1]
      // rather than [1,1,2,2], so that the order of two heads is visible.)
      Tensor x =
          reshape(tensor({{1, 2}, {3, 4}}, dt), {1, 2, 2, 1}).detach().requires_grad_();
      Tensor y = repeat_kv(x, 2);
      CHECK(y.shape() == Shape{1, 4, 2, 1});
      CHECK(y.dtype() == dt);
      // Heads [0, 0, 1, 1] = [1,2], [1,2], [3,4], [3,4].
      double expected[4][2] = {{1, 2}, {1, 2}, {3, 4}, {3, 4}};
      for (std::size_t h = 0; h < 4; ++h)
        for (std::size_t t = 0; t < 2; ++t) {
          CAPTURE(h);
          CAPTURE(t);
          CHECK(y.at({0, h, t, 0}) == expected[h][t]);
        }

      // backward of sum(y): every element of x appears twice, so each gets 1 + 1.
      y.backward(ones_like(y));
      CHECK(x.grad().shape() == Shape{1, 2, 2, 1});
      check_values(x.grad(), {2, 2, 2, 2}, 0);  // [[2,2],[2,2]]
    }
  }
}

TEST_CASE("repeat_kv matches np.repeat(x, n_rep, axis=1) on a larger tensor") {
  // np.repeat along axis 1: out[b, h, t, d] = x[b, h // n_rep, t, d].
  Tensor x = randn({2, 2, 3, 4}, 3, DType::float64);
  Tensor y = repeat_kv(x, 3);
  REQUIRE(y.shape() == Shape{2, 6, 3, 4});
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t h = 0; h < 6; ++h)
      for (std::size_t t = 0; t < 3; ++t)
        for (std::size_t d = 0; d < 4; ++d)
          CHECK(y.at({b, h, t, d}) == x.at({b, h / 3, t, d}));
}

TEST_CASE("repeat_kv backward sums the gradients of the copies of each head") {
  // dx[b, k, t, d] = sum over r < n_rep of dout[b, k*n_rep + r, t, d], as a naive loop.
  Tensor x = randn({2, 2, 3, 4}, 5, DType::float64).requires_grad_();
  Tensor dout = randn({2, 4, 3, 4}, 6, DType::float64);
  repeat_kv(x, 2).backward(dout);
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t k = 0; k < 2; ++k)
      for (std::size_t t = 0; t < 3; ++t)
        for (std::size_t d = 0; d < 4; ++d) {
          double expected = dout.at({b, 2 * k, t, d}) + dout.at({b, 2 * k + 1, t, d});
          CHECK(x.grad().at({b, k, t, d}) == doctest::Approx(expected).epsilon(1e-14));
        }
  check_gradient([](const Tensor& t) { return repeat_kv(t, 3); },
                 randn({1, 2, 2, 3}, 7, DType::float64));
  SUBCASE("n_rep = 1 is a copy with gradient dout") {
    check_gradient([](const Tensor& t) { return repeat_kv(t, 1); },
                   randn({1, 2, 2, 2}, 8, DType::float64));
  }
}

TEST_CASE("repeat_kv and its backward over more heads than one range of the pool") {
  // [2, 3, 64, 96]: 12 K elements a head-pair, so the backward's sums are
  // cut into several ranges, run on two threads. Checked against the index
  // formulas out[b, h] = x[b, h / n_rep] and dx[b, k] = sum_r dout[b,
  // k * n_rep + r].
  const int previous = blas_info().threads;
  set_blas_threads(2);
  Tensor x = randn({2, 3, 64, 96}, 31, DType::float32).requires_grad_();
  Tensor dout = randn({2, 6, 64, 96}, 32, DType::float32);
  Tensor y = repeat_kv(x, 2);
  y.backward(dout);
  set_blas_threads(previous);
  REQUIRE(y.shape() == Shape{2, 6, 64, 96});
  std::vector<double> xv = x.to_vector(), yv = y.to_vector(), gv = dout.to_vector(),
                      dxv = x.grad().to_vector();
  const std::size_t block = 64 * 96;
  std::size_t wrong_copies = 0, wrong_sums = 0;
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t h = 0; h < 6; ++h)
      for (std::size_t i = 0; i < block; ++i)
        wrong_copies += yv[(b * 6 + h) * block + i] != xv[(b * 3 + h / 2) * block + i];
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t k = 0; k < 3; ++k)
      for (std::size_t i = 0; i < block; ++i) {
        double expected =
            gv[(b * 6 + 2 * k) * block + i] + gv[(b * 6 + 2 * k + 1) * block + i];
        wrong_sums += std::abs(dxv[(b * 3 + k) * block + i] - expected) >
                      1e-6 * (1 + std::abs(expected));
      }
  CHECK(wrong_copies == 0);
  CHECK(wrong_sums == 0);
}

TEST_CASE("repeat_kv rejects input that is not 4-D and n_rep = 0") {
  CHECK_THROWS_WITH_AS(
      repeat_kv(zeros({2, 3, 4}), 2),
      doctest::Contains("repeat_kv: expected x of shape [B, Hkv, T, D], got (2,3,4)"),
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      repeat_kv(zeros({1, 2, 3, 4}), 0),
      doctest::Contains(
          "repeat_kv: n_rep must be at least 1, got 0 for x of shape (1,2,3,4)"),
      std::invalid_argument);
}

// ---- rmsnorm -----------------------------------------------------------------------

TEST_CASE("rmsnorm divides each row by its root mean square") {
  for (DType dt : {DType::float32, DType::float64}) {
    SUBCASE(dtype_name(dt)) {
      // The literals below carry 10 decimals, hence 1e-9 in float64.
      double tol = dt == DType::float32 ? 1e-6 : 1e-9;
      // [3, 4]: mean of squares (9 + 16) / 2 = 12.5, so [3, 4] / sqrt(12.5)
      // = [0.8485281374, 1.1313708499].
      check_values(rmsnorm(tensor({3, 4}, dt), 0.0), {0.8485281374, 1.1313708499}, tol);
      // Rows of [[1, 1], [0, 2]]: mean squares 1 and 2 -> [1, 1] and [0, 2 / sqrt 2].
      check_values(rmsnorm(tensor({{1, 1}, {0, 2}}, dt), 0.0), {1, 1, 0, std::sqrt(2.0)},
                   tol);
      // eps is added inside the root: [3, 4] with eps 0.5 -> [3, 4] / sqrt(13) exactly.
      check_values(rmsnorm(tensor({3, 4}, dt), 0.5),
                   {3 / std::sqrt(13.0), 4 / std::sqrt(13.0)}, tol);
    }
  }
}

TEST_CASE("rmsnorm backward is r * (dout - y * mean(dout * y))") {
  for (DType dt : {DType::float32, DType::float64}) {
    SUBCASE(dtype_name(dt)) {
      // x = [3, 4], eps 0: r = 1/sqrt(12.5), r^2 = 0.08, y = [3r, 4r].
      // dout = [1, 0]: mean(dout * y) = 3r / 2, so
      //   dx = r ([1, 0] - [3r, 4r] * 3r/2) = r [1 - 4.5 r^2, -6 r^2] = r [0.64, -0.48]
      //      = [0.1810193359, -0.1357645019].
      // (dx is orthogonal to x, 3 * 0.64 - 4 * 0.48 = 0: scaling x does not change y.)
      Tensor x = tensor({3, 4}, dt).requires_grad_();
      rmsnorm(x, 0.0).backward(tensor({1, 0}, dt));
      check_values(x.grad(), {0.1810193359, -0.1357645019}, 1e-6);
    }
  }
  SUBCASE("against finite differences") {
    check_gradient([](const Tensor& t) { return rmsnorm(t, 1e-5); },
                   randn({2, 3, 5}, 13, DType::float64));
    check_gradient([](const Tensor& t) { return rmsnorm(t, 0.3); },
                   randn({4}, 14, DType::float64));
  }
}

TEST_CASE("rmsnorm over rows longer than one batch of SIMD lanes") {
  // 37 values per row: whole batches of 8 or 16 lanes and a remainder in the
  // vectorised sums. Expected: docs/design.md's formula, y = x / sqrt(mean(x^2)
  // + eps), as a plain loop in long double.
  const std::size_t rows = 3, D = 37;
  const double eps = 1e-5;
  for (DType dt : {DType::float32, DType::float64}) {
    SUBCASE(dtype_name(dt)) {
      Tensor x = randn({rows, D}, 15, dt);
      std::vector<double> xs = x.to_vector(), expected(xs.size());
      for (std::size_t r = 0; r < rows; ++r) {
        long double squares = 0;
        for (std::size_t j = 0; j < D; ++j)
          squares += (long double)xs[r * D + j] * xs[r * D + j];
        long double inv_rms = 1 / std::sqrt(squares / D + eps);
        for (std::size_t j = 0; j < D; ++j)
          expected[r * D + j] = double(xs[r * D + j] * inv_rms);
      }
      check_values(rmsnorm(x, eps), expected, dt == DType::float32 ? 1e-5 : 1e-13);
    }
  }
  check_gradient([&](const Tensor& t) { return rmsnorm(t, eps); },
                 randn({rows, D}, 16, DType::float64));
}

TEST_CASE("rmsnorm rejects a tensor without a last axis and a negative eps") {
  CHECK_THROWS_WITH_AS(
      rmsnorm(scalar(2.0)),
      doctest::Contains("rmsnorm: x of shape () has no last axis to normalise"),
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      rmsnorm(zeros({2, 0})),
      doctest::Contains("rmsnorm: x of shape (2,0) has a last axis of length 0"),
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(rmsnorm(zeros({2, 3}), -1.0),
                       doctest::Contains("rmsnorm: eps must be >= 0"),
                       std::invalid_argument);
}

// ---- rope --------------------------------------------------------------------------

TEST_CASE("rope at position 0 is the identity") {
  for (DType dt : {DType::float32, DType::float64}) {
    SUBCASE(dtype_name(dt)) {
      // One position (T = 1) at start 0: every angle is 0, cos 1, sin 0.
      Tensor x = tensor({{{1, -2, 3, 4.5}}, {{0.25, 6, -7, 8}}}, dt);  // [2, 1, 4]
      check_values(rope(x, 0), x.to_vector(), 0);
    }
  }
}

TEST_CASE("rope rotates a hd=2 vector at position p by the angle p") {
  for (DType dt : {DType::float32, DType::float64}) {
    SUBCASE(dtype_name(dt)) {
      // The literals below carry 10 decimals, hence 1e-9 in float64.
      double tol = dt == DType::float32 ? 1e-6 : 1e-9;
      // hd = 2: inv_freq[0] = theta^0 = 1, so the angle is the position itself.
      // [1, 0] at p = 1 -> [cos 1, sin 1] = [0.5403023059, 0.8414709848].
      check_values(rope(tensor({{1, 0}}, dt), 1), {0.5403023059, 0.8414709848}, tol);
      // [2, 3] at p = 2: cos 2 = -0.4161468365, sin 2 = 0.9092974268;
      //   [2 cos 2 - 3 sin 2, 3 cos 2 + 2 sin 2]
      //   = [-0.8322936731 - 2.7278922805, -1.2484405096 + 1.8185948537]
      //   = [-3.5601859536, 0.5701543441].
      check_values(rope(tensor({{2, 3}}, dt), 2), {-3.5601859536, 0.5701543441}, tol);
      // T = 3 rows of [1, 0] with start 5 sit at positions 5, 6, 7.
      check_values(rope(tensor({{1, 0}, {1, 0}, {1, 0}}, dt), 5),
                   {std::cos(5.0), std::sin(5.0), std::cos(6.0), std::sin(6.0),
                    std::cos(7.0), std::sin(7.0)},
                   tol);
    }
  }
}

TEST_CASE("rope follows docs/design.md's rotate-half formula for hd=8 and any start") {
  // x [B=2, H=3, T=4, hd=8] at positions 9..12; compare each vector with the
  // literal formula (naive_rope).
  const double theta = 500.0;
  Tensor x = randn({2, 3, 4, 8}, 17, DType::float64);
  Tensor y = rope(x, 9, theta);
  std::vector<double> xv = x.to_vector(), yv = y.to_vector();
  for (std::size_t v = 0; v < 2 * 3 * 4; ++v) {
    std::size_t t = v % 4;
    std::vector<double> in(xv.begin() + v * 8, xv.begin() + (v + 1) * 8);
    std::vector<double> expected = naive_rope(in, double(9 + t), theta);
    for (std::size_t i = 0; i < 8; ++i) {
      CAPTURE(v);
      CAPTURE(i);
      CHECK(yv[v * 8 + i] == doctest::Approx(expected[i]).epsilon(1e-12));
    }
  }
  SUBCASE("hd=4 with theta 100: pair (0,2) turns by p, pair (1,3) by p/10") {
    // inv_freq = [100^0, 100^(-2/4)] = [1, 0.1]. x = [1, 2, 3, 4] at p = 1:
    //   [1 cos 1 - 3 sin 1,  2 cos 0.1 - 4 sin 0.1,
    //    3 cos 1 + 1 sin 1,  4 cos 0.1 + 2 sin 0.1]
    double c1 = std::cos(1.0), s1 = std::sin(1.0), c01 = std::cos(0.1),
           s01 = std::sin(0.1);
    check_values(rope(tensor({{1, 2, 3, 4}}, DType::float64), 1, 100.0),
                 {c1 - 3 * s1, 2 * c01 - 4 * s01, 3 * c1 + s1, 4 * c01 + 2 * s01}, 1e-12);
  }
}

TEST_CASE("rope with given inverse frequencies turns pair i by p * inv_freq[i]") {
  // inv_freq = [0.5, 0.25] at p = 2: pair (0,2) turns by 1, pair (1,3) by 0.5.
  // cos 1 = 0.5403023059, sin 1 = 0.8414709848, cos 0.5 = 0.8775825619,
  // sin 0.5 = 0.4794255386; x = [1, 2, 3, 4]:
  //   [1 cos 1 - 3 sin 1, 2 cos .5 - 4 sin .5, 3 cos 1 + sin 1, 4 cos .5 + 2 sin .5]
  for (DType dt : {DType::float32, DType::float64}) {
    CAPTURE(dtype_name(dt));
    double tol = dt == DType::float32 ? 1e-6 : 1e-9;
    check_values(rope(tensor({{1, 2, 3, 4}}, dt), 2, std::vector<double>{0.5, 0.25}),
                 {-1.9841106485, -0.1625370306, 2.4623779025, 4.4691813248}, tol);
  }
  CHECK_THROWS_WITH(rope(tensor({{1, 2, 3, 4}}), 0, std::vector<double>{1.0}),
                    "rope: 1 inverse frequencies for head dim 4; expected hd/2 = 2");
}

TEST_CASE("rope preserves the norm of each pair (i, i + hd/2)") {
  for (DType dt : {DType::float32, DType::float64}) {
    SUBCASE(dtype_name(dt)) {
      double tol = dt == DType::float32 ? 1e-5 : 1e-12;
      Tensor x = randn({2, 3, 5, 8}, 19, dt);
      Tensor y = rope(x, 7);
      std::vector<double> xv = x.to_vector(), yv = y.to_vector();
      for (std::size_t v = 0; v < xv.size() / 8; ++v)
        for (std::size_t i = 0; i < 4; ++i) {
          std::size_t j = v * 8 + i, k = j + 4;
          CAPTURE(v);
          CAPTURE(i);
          CHECK(yv[j] * yv[j] + yv[k] * yv[k] ==
                doctest::Approx(xv[j] * xv[j] + xv[k] * xv[k]).epsilon(tol));
        }
    }
  }
}

TEST_CASE("rope backward rotates the gradient back by the same angle") {
  // The Jacobian is a rotation R, so dx = R^T dout; with dout = R x the
  // gradient must be x again.
  Tensor x = randn({1, 2, 3, 6}, 23, DType::float64);
  Tensor xg = x.detach().requires_grad_();
  Tensor rotated = rope(x, 4);
  rope(xg, 4).backward(rotated);
  check_values(xg.grad(), x.to_vector(), 1e-12);
  // And by hand for hd=2 at p=1, dout = [1, 0]: dx = [cos 1, -sin 1].
  Tensor v = tensor({{0.3, -0.7}}, DType::float64).requires_grad_();
  rope(v, 1).backward(tensor({{1, 0}}, DType::float64));
  check_values(v.grad(), {std::cos(1.0), -std::sin(1.0)}, 1e-12);
  SUBCASE("against finite differences") {
    check_gradient([](const Tensor& t) { return rope(t, 3, 50.0); },
                   randn({2, 3, 4}, 29, DType::float64));
  }
}

TEST_CASE("rope over more rows than one range of the pool, forward and back") {
  // [2, 4, 100, 48] = 38 K elements: cut into several ranges of rows, run on
  // two threads. Row v is position start + v % T; each is compared with the
  // literal formula, and rotating the result back must give x again.
  const int previous = blas_info().threads;
  set_blas_threads(2);
  const std::size_t T = 100, hd = 48, rows = 2 * 4 * T;
  Tensor x = randn({2, 4, T, hd}, 37, DType::float64);
  Tensor xg = x.detach().requires_grad_();
  Tensor y = rope(xg, 5, 1000.0);
  y.backward(y.detach());
  set_blas_threads(previous);
  std::vector<double> xv = x.to_vector(), yv = y.to_vector(), dxv = xg.grad().to_vector();
  std::size_t wrong = 0, not_back = 0;
  for (std::size_t v = 0; v < rows; ++v) {
    std::vector<double> in(xv.begin() + v * hd, xv.begin() + (v + 1) * hd);
    std::vector<double> expected = naive_rope(in, double(5 + v % T), 1000.0);
    for (std::size_t i = 0; i < hd; ++i) {
      wrong += std::abs(yv[v * hd + i] - expected[i]) > 1e-12;
      not_back += std::abs(dxv[v * hd + i] - xv[v * hd + i]) > 1e-12;
    }
  }
  CHECK(wrong == 0);
  CHECK(not_back == 0);
}

TEST_CASE("rope rejects an odd head dim, a 1-D input and a non-positive theta") {
  CHECK_THROWS_WITH_AS(
      rope(zeros({1, 2, 3, 5}), 0),
      doctest::Contains("rope: head dim hd=5 of x (1,2,3,5) must be even"),
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      rope(zeros({4}), 0),
      doctest::Contains("rope: expected x of shape [..., T, hd], got (4,)"),
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(rope(zeros({2, 4}), 0, 0.0),
                       doctest::Contains("rope: theta must be positive, got 0"),
                       std::invalid_argument);
}

// ---- causal_softmax ---------------------------------------------------------------

namespace {

// docs/design.md's causal mask written out: 1 where row r (query at position
// i = query_start + r % T) must not see column j (key at position p =
// key_start + j): p > i, or with a sliding window p <= i - window.
Tensor hidden_mask(std::size_t R, std::size_t m, std::size_t query_start,
                   std::size_t key_start, std::size_t T, std::size_t window = 0) {
  std::vector<double> mask(R * m, 0.0);
  for (std::size_t r = 0; r < R; ++r)
    for (std::size_t j = 0; j < m; ++j) {
      const double i = double(query_start + r % T), p = double(key_start + j);
      const bool behind = window > 0 && p <= i - double(window);
      mask[r * m + j] = p > i || behind ? 1.0 : 0.0;
    }
  return from_vector(mask, {R, m}, DType::float64);
}

}  // namespace

TEST_CASE("causal_softmax on 3 queries: row t spreads over keys 0..t, zeros after") {
  // Scores all 0: a query that sees n keys gives each 1/n.
  Tensor y = causal_softmax(zeros({1, 1, 3, 3}, DType::float64), 0);
  check_values(y, {1, 0, 0, 0.5, 0.5, 0, 1.0 / 3, 1.0 / 3, 1.0 / 3}, 1e-15);
  // Hidden entries are exactly 0, not merely small.
  CHECK(y.at({0, 0, 0, 1}) == 0.0);
  CHECK(y.at({0, 0, 1, 2}) == 0.0);
}

TEST_CASE("causal_softmax equals softmax(masked_fill(x, mask, -inf)) for every layout") {
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    const char* name;
    Shape shape;
    std::size_t query_start, key_start, T;
    std::size_t window = 0;
  };
  // full forward; a cache (queries at 5.., keys from 0); no cache at start 5
  // (keys from 5 too); grouped rows (G = 2 heads of T = 3 queries); a fixed
  // buffer of 8 slots of which 6 are written (queries 3..5); long rows of a
  // 37-slot buffer (queries 30..32 see 31..33 keys: whole batches of lanes
  // and a remainder in the vectorised max, exp and sum).
  for (const Case& c :
       {Case{"full", {2, 2, 4, 4}, 0, 0, 4}, Case{"cache", {1, 2, 2, 7}, 5, 0, 2},
        Case{"offset", {1, 1, 3, 3}, 5, 5, 3}, Case{"grouped", {1, 2, 6, 5}, 2, 0, 3},
        Case{"buffer", {1, 1, 3, 8}, 3, 0, 3}, Case{"long rows", {1, 2, 3, 37}, 30, 0, 3},
        // sliding windows: full forward (the first queries see fewer than
        // window keys), a cache, grouped rows, and a window of 1 (itself only)
        Case{"window full", {1, 2, 6, 6}, 0, 0, 6, 3},
        Case{"window cache", {1, 2, 2, 9}, 7, 0, 2, 4},
        Case{"window grouped", {1, 2, 6, 7}, 4, 0, 3, 2},
        Case{"window 1", {1, 1, 4, 4}, 0, 0, 4, 1}}) {
    SUBCASE(c.name) {
      std::size_t R = c.shape[2], m = c.shape[3];
      Tensor x = randn(c.shape, 21, DType::float64);
      Tensor mask = hidden_mask(R, m, c.query_start, c.key_start, c.T, c.window);
      Tensor expected = softmax(masked_fill(x, mask, -inf), -1);
      Tensor got = causal_softmax(x, c.query_start, c.key_start, c.T, c.window);
      check_values(got, expected.to_vector(), 1e-14);
      // The same backward too, for a random upstream gradient.
      Tensor dout = randn(c.shape, 22, DType::float64);
      Tensor x1 = x.detach().requires_grad_(), x2 = x.detach().requires_grad_();
      causal_softmax(x1, c.query_start, c.key_start, c.T, c.window).backward(dout);
      softmax(masked_fill(x2, mask, -inf), -1).backward(dout);
      check_values(x1.grad(), x2.grad().to_vector(), 1e-12);
      check_gradient(
          [&](const Tensor& t) {
            return causal_softmax(t, c.query_start, c.key_start, c.T, c.window);
          },
          x);
    }
  }
}

TEST_CASE("causal_softmax with a window of 2: each query sees itself and one before") {
  // Scores all 0: query 0 sees key 0 only; every later one exactly two keys.
  Tensor y = causal_softmax(zeros({1, 1, 4, 4}, DType::float64), 0, 0, 0, 2);
  check_values(y, {1, 0, 0, 0, 0.5, 0.5, 0, 0, 0, 0.5, 0.5, 0, 0, 0, 0.5, 0.5}, 1e-15);
  CHECK(y.at({0, 0, 3, 1}) == 0.0);  // at distance 2 = window: hidden, exactly 0
}

TEST_CASE("causal_softmax rejects a first query that sees no key and ragged groups") {
  Tensor x = zeros({1, 1, 4, 4}, DType::float64);
  CHECK_THROWS_WITH_AS(causal_softmax(x, 2, 3),
                       "causal_softmax: the first query (position 2) sees no key: keys "
                       "start at position 3",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      causal_softmax(x, 0, 0, 3),
      "causal_softmax: 4 rows of scores (1,1,4,4) are not a whole number "
      "of groups of 3 queries",
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(causal_softmax(zeros({4}), 0), doctest::Contains("[..., R, m]"),
                       std::invalid_argument);
}
