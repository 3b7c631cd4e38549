// Tests for matmul, matmul_t and linear (glassllm/engine/ops_matmul.cpp), the BLAS
// they run on (include/glassllm/fast/blas.h), and naive_matmul
// (glassllm/engine/naive_matmul.cpp), the three loops they are checked against.
// Expected values are literal numbers worked out by hand, or come from
// naive_matmul, whose own results are checked by hand first.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <thread>
#include <vector>

#include "check.h"
#include "glassllm/engine/naive_matmul.h"
#include "glassllm/engine/ops.h"
#include "glassllm/fast/blas.h"

using namespace glassllm;
using glassllm::test::kDtypes;

namespace {

void check_product(const Tensor& t, const Shape& shape,
                   const std::vector<double>& expected) {
  CAPTURE(shape_str(t.shape()));
  REQUIRE(t.shape() == shape);
  std::vector<double> got = t.to_vector();
  REQUIRE(got.size() == expected.size());
  double tol = t.dtype() == DType::float32 ? 1e-5 : 1e-12;
  for (std::size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i] == doctest::Approx(expected[i]).epsilon(tol).scale(1.0));
  }
}

// Deterministic "random" values in [-1, 1) without the engine's generator.
std::vector<double> values(std::size_t n, int seed) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = std::sin(double(i * 7 + seed * 13 + 1));
  return v;
}

// The expected product in double by naive_matmul, the three-loop definition
// (include/glassllm/engine/naive_matmul.h), itself checked against hand-worked
// numbers below.
std::vector<double> naive(const std::vector<double>& a, const Shape& as,
                          const std::vector<double>& b, const Shape& bs, Shape& out) {
  Tensor c = naive_matmul(from_vector(a, as, DType::float64),
                          from_vector(b, bs, DType::float64));
  out = c.shape();
  return c.to_vector();
}

}  // namespace

TEST_CASE("naive_matmul computes the definition on hand-worked products") {
  for (DType dt : kDtypes) {
    SUBCASE(dtype_name(dt)) {
      // [1*7+2*9+3*11, 1*8+2*10+3*12], [4*7+5*9+6*11, 4*8+5*10+6*12]
      Tensor c = naive_matmul(tensor({{1, 2, 3}, {4, 5, 6}}, dt),
                              tensor({{7, 8}, {9, 10}, {11, 12}}, dt));
      CHECK(c.dtype() == dt);
      check_product(c, {2, 2}, {58, 64, 139, 154});
      // 1-D operands: a row, a column, or both (a 0-d dot product).
      Tensor v = tensor({1, 2, 3}, dt), m = tensor({{1, 0}, {0, 1}, {1, 1}}, dt);
      check_product(naive_matmul(v, v), {}, {14});     // 1+4+9
      check_product(naive_matmul(v, m), {2}, {4, 5});  // [1+3, 2+3]
      // Batch (2,) against one matrix: [[1,2]] @ [[1],[10]] = 21, [[3,4]] @ ... = 43.
      check_product(
          naive_matmul(tensor({{{1, 2}}, {{3, 4}}}, dt), tensor({{1}, {10}}, dt)),
          {2, 1, 1}, {21, 43});
      // Both broadcast: a (2,1,1,2), b (1,3,2,1) -> (2,3,1,1); b_j = [[j], [1]].
      Tensor a4 = tensor({{{{1, 2}}}, {{{3, 4}}}}, dt);
      Tensor b4 = tensor({{{{0}, {1}}, {{1}, {1}}, {{2}, {1}}}}, dt);
      // a_i . [j, 1] = a_i0 * j + a_i1: i=0: 2, 3, 4; i=1: 4, 7, 10
      check_product(naive_matmul(a4, b4), {2, 3, 1, 1}, {2, 3, 4, 4, 7, 10});
    }
  }
}

TEST_CASE("naive_matmul names itself and both shapes for bad input") {
  CHECK_THROWS_WITH_AS(naive_matmul(zeros({2, 3}), zeros({4, 5})),
                       "naive_matmul: shapes (2,3) and (4,5) are not aligned: 3 != 4",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(naive_matmul(zeros({2, 3, 4}), zeros({5, 4, 6})),
                       doctest::Contains("naive_matmul: shapes (2,) and (5,) cannot be "
                                         "broadcast"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(naive_matmul(zeros({2, 2}), zeros({2, 2}, DType::float64)),
                       "naive_matmul: float32 (2,2) and float64 (2,2): need one dtype "
                       "and at least 1 axis each",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(naive_matmul(zeros({}), zeros({3})),
                       doctest::Contains("naive_matmul: float32 () and float32 (3,)"),
                       std::invalid_argument);
}

TEST_CASE("matmul, matmul_t and linear equal naive_matmul on every kind of shape") {
  // Shapes that reach every branch of the GEMM (glassllm/fast/blas.cpp): one
  // row and a few rows (the few-rows kernels; with linear, x @ w^T),
  // one B for a whole batch (a single GEMM), broadcast batches, and plain
  // OpenBLAS. Inputs are the same numbers in both dtypes; the reference is
  // naive_matmul in float64.
  struct Case {
    Shape as, bs;
  };
  const Case cases[] = {
      {{1, 64}, {64, 300}},          // one row
      {{1, 37}, {37, 21}},           // one row, K and N not whole batches of lanes
      {{5}, {2, 5, 7}},              // 1-D a against a batch
      {{2, 3, 4}, {4}},              // batch against 1-D b
      {{2, 4, 300}, {2, 300, 64}},   // probs @ values, few rows, K >= 256
      {{3, 70}, {70, 530}},          // few rows, N > 256: blocks of batches of C
      {{8, 20}, {20, 45}},           // 8 rows, short K, N not whole batches
      {{3, 8, 17}, {17, 9}},         // one B for the whole batch
      {{2, 1, 6, 5}, {1, 3, 5, 4}},  // both operands broadcast
      {{1, 2, 40, 33}, {3, 1, 33, 50}},
      {{130, 70}, {70, 90}},  // plain GEMM
  };
  for (DType dt : kDtypes) {
    SUBCASE(dtype_name(dt)) {
      for (const Case& cs : cases) {
        CAPTURE(shape_str(cs.as));
        CAPTURE(shape_str(cs.bs));
        auto av = values(shape_numel(cs.as), 8), bv = values(shape_numel(cs.bs), 9);
        Shape shape;
        std::vector<double> expected = naive(av, cs.as, bv, cs.bs, shape);
        Tensor a = from_vector(av, cs.as, dt), b = from_vector(bv, cs.bs, dt);
        check_product(matmul(a, b), shape, expected);
        if (a.ndim() >= 2 && b.ndim() >= 2) {  // the same product as a @ (b^T)^T
          Tensor bt = transpose(b, -2, -1);
          check_product(matmul_t(a, bt), shape, expected);
        }
        if (b.ndim() == 2) {  // linear(x, w) = x @ w^T
          Tensor w = transpose(b, 0, 1);
          check_product(linear(a, w), shape, expected);
        }
      }
      // q @ k^T with a few query rows and a long K (the few-rows kernel of
      // matmul_t): k stored [m, hd] and transposed for the reference.
      auto qv = values(4 * 32, 10), kv = values(300 * 32, 11);
      Tensor q = from_vector(qv, {1, 4, 32}, dt), k = from_vector(kv, {1, 300, 32}, dt);
      std::vector<double> expected =
          naive_matmul(from_vector(qv, {1, 4, 32}, DType::float64),
                       transpose(from_vector(kv, {1, 300, 32}, DType::float64), 1, 2))
              .to_vector();
      check_product(matmul_t(q, k), {1, 4, 300}, expected);
    }
  }
}

TEST_CASE("matmul multiplies two matrices") {
  for (DType dt : kDtypes) {
    SUBCASE(dtype_name(dt)) {
      Tensor a = tensor({{1, 2, 3}, {4, 5, 6}}, dt);
      Tensor b = tensor({{7, 8}, {9, 10}, {11, 12}}, dt);
      // [1*7+2*9+3*11, 1*8+2*10+3*12], [4*7+5*9+6*11, 4*8+5*10+6*12]
      Tensor c = matmul(a, b);
      CHECK(c.dtype() == dt);
      check_product(c, {2, 2}, {58, 64, 139, 154});
    }
  }
}

TEST_CASE("matmul promotes 1-D operands and removes the added axis, as np.matmul does") {
  for (DType dt : kDtypes) {
    SUBCASE(dtype_name(dt)) {
      Tensor v = tensor({1, 2, 3}, dt);
      Tensor m = tensor({{1, 0}, {0, 1}, {1, 1}}, dt);  // (3,2)
      check_product(matmul(v, v), {}, {14});            // 1+4+9, a 0-d result
      check_product(matmul(v, m), {2}, {4, 5});         // [1+3, 2+3]
      check_product(matmul(transpose(m, 0, 1), v), {2}, {4, 5});
      // v @ stack of two matrices: (3,) @ (2,3,2) -> (2,2)
      Tensor stack = concat({unsqueeze(m, 0), unsqueeze(m * 2.0, 0)}, 0);
      check_product(matmul(v, stack), {2, 2}, {4, 5, 8, 10});
      // stack (2,3,2)^T per batch @ v... here (2,2,3) @ (3,) -> (2,2)
      check_product(matmul(transpose(stack, 1, 2), v), {2, 2}, {4, 5, 8, 10});
    }
  }
}

TEST_CASE("matmul broadcasts batch axes like np.matmul") {
  for (DType dt : kDtypes) {
    SUBCASE(dtype_name(dt)) {
      struct Case {
        Shape as, bs;
      };
      for (Case cs : {Case{{2, 2, 3, 4}, {2, 2, 4, 5}},  // [B, H, T, hd] @ [B, H, hd, m]
                      Case{{2, 1, 3, 4}, {1, 3, 4, 2}},  // both operands broadcast
                      Case{{3, 5, 4}, {1, 4, 2}},        // one b for the whole batch
                      Case{{1, 5, 4}, {3, 4, 2}}}) {     // one a for the whole batch
        CAPTURE(shape_str(cs.as));
        CAPTURE(shape_str(cs.bs));
        auto av = values(shape_numel(cs.as), 1), bv = values(shape_numel(cs.bs), 2);
        Shape expected_shape;
        auto expected = naive(av, cs.as, bv, cs.bs, expected_shape);
        check_product(matmul(from_vector(av, cs.as, dt), from_vector(bv, cs.bs, dt)),
                      expected_shape, expected);
      }
      // A missing batch axis broadcasts too: (3,5,4) @ (4,2) equals (3,5,4) @ (1,4,2).
      auto av = values(60, 3), bv = values(8, 4);
      Shape expected_shape;
      auto expected = naive(av, {3, 5, 4}, bv, {1, 4, 2}, expected_shape);
      check_product(matmul(from_vector(av, {3, 5, 4}, dt), from_vector(bv, {4, 2}, dt)),
                    {3, 5, 2}, expected);
    }
  }
}

TEST_CASE("matmul with an empty inner axis gives zeros") {
  check_product(matmul(zeros({2, 0}), zeros({0, 3})), {2, 3}, {0, 0, 0, 0, 0, 0});
}

TEST_CASE("matmul explains shapes that are not aligned or cannot be broadcast") {
  CHECK_THROWS_WITH_AS(
      matmul(zeros({2, 3}), zeros({4, 5})),
      doctest::Contains(
          "matmul: shapes (2,3) and (4,5) are not aligned: 3 (dim 1) != 4 (dim 0)"),
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      matmul(zeros({3}), zeros({2, 4, 5})),
      doctest::Contains(
          "matmul: shapes (3,) and (2,4,5) are not aligned: 3 (dim 0) != 4 (dim 1)"),
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      matmul(zeros({2, 3, 4}), zeros({5, 4, 6})),
      doctest::Contains("matmul: shapes (2,3,4) and (5,4,6) cannot be broadcast in their "
                        "batch axes: 2 (dim 0) != 5 (dim 0)"),
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(matmul(zeros({}), zeros({3})),
                       doctest::Contains("matmul: shapes () and (3,)"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      matmul(zeros({2, 2}), zeros({2, 2}, DType::float64)),
      doctest::Contains("matmul: dtypes float32 (2,2) and float64 (2,2) differ"),
      std::invalid_argument);
}

TEST_CASE("the gradient of sum(a @ b) is ones @ b^T for a and a^T @ ones for b") {
  for (DType dt : kDtypes) {
    SUBCASE(dtype_name(dt)) {
      Tensor a = tensor({{1, 2, 3}, {4, 5, 6}}, dt).requires_grad_();
      Tensor b = tensor({{7, 8}, {9, 10}, {11, 12}}, dt).requires_grad_();
      Tensor c = matmul(a, b);
      CHECK(c.op() == "matmul");
      sum(c).backward();
      // da[i, k] = sum_j b[k, j]: the row sums of b, 15, 19, 23, on every row
      check_product(a.grad(), {2, 3}, {15, 19, 23, 15, 19, 23});
      // db[k, j] = sum_i a[i, k]: the column sums of a, 5, 7, 9, on every column
      check_product(b.grad(), {3, 2}, {5, 5, 7, 7, 9, 9});
    }
  }
}

TEST_CASE("matmul's gradient sums over the batch that b was broadcast along") {
  for (DType dt : kDtypes) {
    SUBCASE(dtype_name(dt)) {
      // a [2,3,4] = 0..23, b [4,5] = ones. L = sum(a @ b).
      Tensor a = reshape(arange(24, dt), {2, 3, 4}).detach().requires_grad_();
      Tensor b = ones({4, 5}, dt).requires_grad_();
      sum(matmul(a, b)).backward();
      // da[., i, k] = sum_j b[k, j] = 5 everywhere
      check_product(a.grad(), {2, 3, 4}, std::vector<double>(24, 5.0));
      // db[k, j] = sum over batch and rows of a[., ., k]:
      // k=0: 0+4+8+12+16+20 = 60, k=1: 66, k=2: 72, k=3: 78 (same for every j)
      std::vector<double> db;
      for (double v : {60, 66, 72, 78})
        for (int j = 0; j < 5; ++j) db.push_back(v);
      check_product(b.grad(), {4, 5}, db);
    }
  }
}

TEST_CASE("matmul's gradient with a general upstream gradient matches naive loops") {
  // dA_i = dC_i @ B_i^T and dB_i = A_i^T @ dC_i, summed over the batch axes
  // each operand was broadcast along. Both operands broadcast here.
  for (DType dt : kDtypes) {
    SUBCASE(dtype_name(dt)) {
      Shape as{2, 1, 3, 4}, bs{1, 2, 4, 5}, cs{2, 2, 3, 5};
      auto av = values(24, 5), bv = values(40, 6), gv = values(60, 7);
      Tensor a = from_vector(av, as, dt).requires_grad_();
      Tensor b = from_vector(bv, bs, dt).requires_grad_();
      matmul(a, b).backward(from_vector(gv, cs, dt));
      std::vector<double> da(24, 0.0), db(40, 0.0);
      for (std::size_t i0 = 0; i0 < 2; ++i0)
        for (std::size_t i1 = 0; i1 < 2; ++i1)
          for (std::size_t n = 0; n < 3; ++n)
            for (std::size_t k = 0; k < 4; ++k)
              for (std::size_t m = 0; m < 5; ++m) {
                double g = gv[((i0 * 2 + i1) * 3 + n) * 5 + m];
                da[(i0 * 3 + n) * 4 + k] += g * bv[(i1 * 4 + k) * 5 + m];
                db[(i1 * 4 + k) * 5 + m] += g * av[(i0 * 3 + n) * 4 + k];
              }
      check_product(a.grad(), as, da);
      check_product(b.grad(), bs, db);
    }
  }
}

TEST_CASE("matmul of a tensor with itself receives both gradient contributions") {
  for (DType dt : kDtypes) {
    SUBCASE(dtype_name(dt)) {
      // L = sum(a @ a), a = [[1,2],[3,4]]:
      // dL/da = ones @ a^T + a^T @ ones = [[3,7],[3,7]] + [[4,4],[6,6]]
      Tensor a = tensor({{1, 2}, {3, 4}}, dt).requires_grad_();
      sum(matmul(a, a)).backward();
      check_product(a.grad(), {2, 2}, {7, 11, 9, 13});
    }
  }
}

TEST_CASE("the gradient of a dot product of vectors is the other vector") {
  Tensor a = tensor({1, 2, 3}, DType::float64).requires_grad_();
  Tensor b = tensor({4, 5, 6}, DType::float64).requires_grad_();
  Tensor c = matmul(a, b);  // 4 + 10 + 18 = 32
  check_product(c, {}, {32});
  c.backward();
  check_product(a.grad(), {3}, {4, 5, 6});
  check_product(b.grad(), {3}, {1, 2, 3});
}

TEST_CASE("matmul_t multiplies by the transpose of b without copying it") {
  for (DType dt : kDtypes) {
    SUBCASE(dtype_name(dt)) {
      Tensor a = tensor({{1, 2, 3}, {4, 5, 6}}, dt);     // (2,3)
      Tensor b = tensor({{7, 9, 11}, {8, 10, 12}}, dt);  // (2,3): rows are b^T's columns
      // The same product as "matmul multiplies two matrices": a @ b^T.
      Tensor c = matmul_t(a, b);
      CHECK(c.dtype() == dt);
      check_product(c, {2, 2}, {58, 64, 139, 154});
    }
  }
}

TEST_CASE("matmul_t broadcasts batch axes and equals matmul with a transposed b") {
  // a (2,1,3,4), b (3,5,4): batch (2,1) with (3,) broadcasts to (2,3).
  Shape as{2, 1, 3, 4}, bs{3, 5, 4};
  std::vector<double> av = values(24, 1), bv = values(60, 2);
  // b^T as a naive copy, (3,4,5), then the naive matmul.
  std::vector<double> bt(60);
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t r = 0; r < 5; ++r)
      for (std::size_t c = 0; c < 4; ++c)
        bt[(i * 4 + c) * 5 + r] = bv[(i * 5 + r) * 4 + c];
  Shape out;
  std::vector<double> expected = naive(av, as, bt, Shape{3, 4, 5}, out);
  for (DType dt : kDtypes) {
    SUBCASE(dtype_name(dt)) {
      Tensor c = matmul_t(from_vector(av, as, dt), from_vector(bv, bs, dt));
      check_product(c, {2, 3, 3, 5}, expected);
    }
  }
}

TEST_CASE(
    "matmul_t's gradients are dout @ b for a and dout^T @ a for b, summed over "
    "broadcasts") {
  // Compared with matmul(a, transpose(b)), whose gradients are tested above.
  Tensor a0 = randn({2, 3, 4}, 11, DType::float64),
         b0 = randn({5, 4}, 12, DType::float64);
  Tensor dout = randn({2, 3, 5}, 13, DType::float64);
  Tensor a1 = a0.detach().requires_grad_(), b1 = b0.detach().requires_grad_();
  matmul_t(a1, b1).backward(dout);
  Tensor a2 = a0.detach().requires_grad_(), b2 = b0.detach().requires_grad_();
  matmul(a2, transpose(b2, 0, 1)).backward(dout);
  REQUIRE(b1.grad().shape() == Shape{5, 4});
  std::vector<double> ga1 = a1.grad().to_vector(), ga2 = a2.grad().to_vector();
  std::vector<double> gb1 = b1.grad().to_vector(), gb2 = b2.grad().to_vector();
  for (std::size_t i = 0; i < ga1.size(); ++i) CHECK(ga1[i] == doctest::Approx(ga2[i]));
  for (std::size_t i = 0; i < gb1.size(); ++i) CHECK(gb1[i] == doctest::Approx(gb2[i]));
}

TEST_CASE("matmul_t names both shapes when the inner axes differ") {
  Tensor a = zeros({2, 3}), b = zeros({4, 5});
  CHECK_THROWS_WITH_AS(matmul_t(a, b),
                       "matmul_t: shapes (2,3) and (4,5) are not aligned: 3 (dim 1) != 5 "
                       "(dim 1); b is [..., m, k] and gets transposed",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(matmul_t(zeros({3}), b), doctest::Contains("at least 2 axes"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(matmul_t(zeros({2, 2, 3}), zeros({3, 4, 3})),
                       doctest::Contains("cannot be broadcast"), std::invalid_argument);
}

TEST_CASE("linear computes x @ weight^T with weight stored [out, in]") {
  for (DType dt : kDtypes) {
    SUBCASE(dtype_name(dt)) {
      // x (2,3), weight (2,3): y[r, o] = sum_i x[r, i] weight[o, i]
      Tensor x = tensor({{1, 2, 3}, {4, 5, 6}}, dt);
      Tensor w = tensor({{1, 0, -1}, {2, 1, 0}}, dt);
      check_product(linear(x, w), {2, 2}, {-2, 4, -2, 13});
      // Leading axes are just more rows: x (2,1,3) -> (2,1,2); 1-D x (3,) -> (2,)
      check_product(linear(reshape(x, {2, 1, 3}), w), {2, 1, 2}, {-2, 4, -2, 13});
      check_product(linear(tensor({1, 2, 3}, dt), w), {2}, {-2, 4});
    }
  }
}

TEST_CASE("linear's gradients are dout @ weight and dout^T @ x over all rows") {
  for (DType dt : kDtypes) {
    SUBCASE(dtype_name(dt)) {
      Tensor x = from_vector({1, 2, 3, 4, 5, 6}, {2, 1, 3}, dt).requires_grad_();
      Tensor w = tensor({{1, 0, -1}, {2, 1, 0}}, dt).requires_grad_();
      Tensor y = linear(x, w);
      CHECK(y.op() == "linear");
      // dout rows [1, 10] and [100, 1000]
      y.backward(from_vector({1, 10, 100, 1000}, {2, 1, 2}, dt));
      // dx[r] = 1*w[0] + 10*w[1] = [21, 10, -1];  100*w[0] + 1000*w[1] = [2100, 1000,
      // -100]
      check_product(x.grad(), {2, 1, 3}, {21, 10, -1, 2100, 1000, -100});
      // dw[o] = sum_r dout[r, o] x[r]: o=0: 1*[1,2,3] + 100*[4,5,6] = [401, 502, 603]
      //                                 o=1: 10*[1,2,3] + 1000*[4,5,6] = [4010, 5020,
      //                                 6030]
      check_product(w.grad(), {2, 3}, {401, 502, 603, 4010, 5020, 6030});
    }
  }
}

TEST_CASE("linear names both shapes when x's features do not match weight's") {
  CHECK_THROWS_WITH_AS(
      linear(zeros({2, 3}), zeros({4, 5})),
      doctest::Contains("linear: shapes (2,3) and (4,5) are not aligned: "
                        "3 (dim 1) != 5 (dim 1); weight is [out, in]"),
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      linear(zeros({2, 3}), zeros({3})),
      doctest::Contains("linear: weight must be 2-D [out, in], got shape (3,)"),
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(linear(zeros({}), zeros({2, 1})),
                       doctest::Contains("linear: x of shape () has no features axis"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      linear(zeros({2, 3}), zeros({4, 3}, DType::float64)),
      doctest::Contains("linear: dtypes float32 (2,3) and float64 (4,3) differ"),
      std::invalid_argument);
}

TEST_CASE("blas_info names the backend and its kernels and uses every core by default") {
  BlasInfo info = blas_info();
  CAPTURE(info.backend);
  CAPTURE(info.library);
  CAPTURE(info.core);
  CAPTURE(info.config);
  if (info.backend == "openblas")
    CHECK(info.library.find("libopenblas") != std::string::npos);
  else if (info.backend == "builtin")
    CHECK(info.library.rfind("none", 0) == 0);
  else
    CHECK(info.backend == "system");
  CHECK_FALSE(info.library.empty());
  CHECK_FALSE(info.core.empty());
  CHECK_FALSE(info.config.empty());
  // The default: GLASSLLM_THREADS if set, else the number of cores (the
  // system backend leaves threads to the library and reports 0).
  const char* env = std::getenv("GLASSLLM_THREADS");
  int expected =
      env ? std::atoi(env) : int(std::max(1u, std::thread::hardware_concurrency()));
  const bool ours = info.backend != "system";
  CHECK(info.threads == (ours ? expected : 0));
  set_blas_threads(2);
  CHECK(blas_info().threads == (ours ? 2 : 0));
  set_blas_threads(1);
  CHECK(blas_info().threads == (ours ? 1 : 0));
  CHECK_THROWS_WITH_AS(
      set_blas_threads(0),
      doctest::Contains("set_blas_threads: need at least 1 thread, got 0"),
      std::invalid_argument);
  set_blas_threads(expected);
}

TEST_CASE(
    "a few rows against a long operand (attention's decode step) match plain loops") {
  // M query rows (M <= 8: the few-rows kernels) against m keys of hd = 64 or
  // 40 (matmul_t), then the probabilities [M, m] @ values [m, hd] (matmul).
  // m = 301 leaves a remainder after the blocks of keys done together and
  // after the blocks of value rows; m = 37 is shorter than one block; hd = 40
  // is not a whole number of batches (the one-key-at-a-time path, and value
  // columns past the last batch). Checked against sums written out as loops.
  for (DType dt : {DType::float32, DType::float64}) {
    CAPTURE(dtype_name(dt));
    for (std::size_t m : {37, 301})
      for (std::size_t hd : {64, 40})
        for (std::size_t M : {1, 2, 3, 4, 5, 8}) {
          CAPTURE(m);
          CAPTURE(hd);
          CAPTURE(M);
          Tensor q = randn({1, 2, M, hd}, 1, dt), k = randn({1, 2, m, hd}, 2, dt);
          Tensor p = randn({1, 2, M, m}, 3, dt), v = randn({1, 2, m, hd}, 4, dt);
          Tensor s = matmul_t(q, k), o = matmul(p, v);
          double tol = dt == DType::float32 ? 1e-3 : 1e-10;
          for (std::size_t h = 0; h < 2; ++h)
            for (std::size_t i = 0; i < M; ++i) {
              for (std::size_t j = 0; j < m; ++j) {
                double dot = 0;
                for (std::size_t d = 0; d < hd; ++d)
                  dot += q.at({0, h, i, d}) * k.at({0, h, j, d});
                CHECK(s.at({0, h, i, j}) == doctest::Approx(dot).epsilon(tol));
              }
              for (std::size_t d = 0; d < hd; ++d) {
                double sum = 0;
                for (std::size_t j = 0; j < m; ++j)
                  sum += p.at({0, h, i, j}) * v.at({0, h, j, d});
                CHECK(o.at({0, h, i, d}) == doctest::Approx(sum).epsilon(tol));
              }
            }
        }
  }
}

TEST_CASE("a long sum into a small result (a weight's gradient) matches plain loops") {
  // dW = dout^T @ x sums over every row of the batch: K = 2100 rows into a
  // [64, 24] gradient, which the GEMM cuts over K (glassllm/fast/blas.cpp,
  // split_gemm_over_k: 3 slices, the last one shorter) and adds back in a
  // fixed order. The same for a plain product, [40, 2100] @ [2100, 50] (4
  // slices), and its matmul_t form. Checked against sums written out as
  // loops, and for the same bits on 1 and 3 threads.
  const int previous = blas_info().threads;
  for (DType dt : {DType::float32, DType::float64}) {
    CAPTURE(dtype_name(dt));
    const double tol = dt == DType::float32 ? 1e-4 : 1e-12;
    const std::size_t rows = 2100, in = 24, out = 64;
    Tensor x = randn({1, rows, in}, 5, dt).requires_grad_();
    Tensor w = randn({out, in}, 6, dt).requires_grad_();
    Tensor dout = randn({1, rows, out}, 7, dt);
    set_blas_threads(1);
    linear(x, w).backward(dout);
    Tensor grad_one_thread = w.grad();
    w.zero_grad();
    set_blas_threads(3);
    linear(x, w).backward(dout);
    CHECK(w.grad().to_vector() == grad_one_thread.to_vector());
    for (std::size_t o = 0; o < out; ++o)
      for (std::size_t i = 0; i < in; ++i) {
        double sum = 0;
        for (std::size_t r = 0; r < rows; ++r)
          sum += dout.at({0, r, o}) * x.at({0, r, i});
        CHECK(w.grad().at({o, i}) == doctest::Approx(sum).epsilon(tol).scale(50));
      }
    Tensor a = randn({40, rows}, 8, dt), b = randn({rows, 50}, 9, dt);
    Tensor c = matmul(a, b), ct = matmul_t(a, transpose(b, 0, 1));
    for (std::size_t i = 0; i < 40; ++i)
      for (std::size_t j = 0; j < 50; ++j) {
        double sum = 0;
        for (std::size_t k = 0; k < rows; ++k) sum += a.at({i, k}) * b.at({k, j});
        CHECK(c.at({i, j}) == doctest::Approx(sum).epsilon(tol).scale(50));
        CHECK(ct.at({i, j}) == doctest::Approx(sum).epsilon(tol).scale(50));
      }
  }
  set_blas_threads(previous);
}
