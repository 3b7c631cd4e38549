// Tests for permute, transpose, concat and slice (glassllm/engine/ops_shape.cpp).
// Expected values are written out by hand, with the NumPy expression that
// gives them in a comment.
#include <doctest/doctest.h>

#include <vector>

#include "check.h"
#include "glassllm/engine/ops.h"
#include "glassllm/fast/blas.h"

using namespace glassllm;
using glassllm::test::kDtypes;

namespace {

// Elements in row-major order, checked one by one with a small tolerance.
void check_elements(const Tensor& t, const Shape& shape,
                    const std::vector<double>& expected) {
  CAPTURE(shape_str(t.shape()));
  REQUIRE(t.shape() == shape);
  std::vector<double> got = t.to_vector();
  REQUIRE(got.size() == expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i] == doctest::Approx(expected[i]));
  }
}

}  // namespace

TEST_CASE("permute reorders axes like NumPy's transpose") {
  for (DType dt : kDtypes) {
    SUBCASE(dtype_name(dt)) {
      // x = np.arange(24).reshape(2, 3, 4)
      Tensor x = reshape(arange(24, dt), {2, 3, 4});
      SUBCASE("(2,0,1): out[i,j,k] = x[j,k,i]") {
        Tensor y = permute(x, {2, 0, 1});
        CHECK(y.dtype() == dt);
        // x.transpose(2, 0, 1).ravel()
        check_elements(y, {4, 2, 3}, {0, 4, 8,  12, 16, 20, 1, 5, 9,  13, 17, 21,
                                      2, 6, 10, 14, 18, 22, 3, 7, 11, 15, 19, 23});
        CHECK(y.parents().empty());  // nothing required grad: no graph recorded
      }
      SUBCASE("negative axes count from the end") {
        // x.transpose(0, 2, 1) == x.transpose(0, -1, -2)
        check_elements(permute(x, {0, -1, -2}), {2, 4, 3},
                       {0,  4,  8,  1,  5,  9,  2,  6,  10, 3,  7,  11,
                        12, 16, 20, 13, 17, 21, 14, 18, 22, 15, 19, 23});
      }
      SUBCASE("the identity permutation copies") {
        Tensor y = permute(x, {0, 1, 2});
        check_elements(y, {2, 3, 4}, x.to_vector());
      }
    }
  }
}

TEST_CASE("permute over more rows than one range of the pool") {
  // x = np.arange(n).reshape(3, 40, 8, 36) (35 K elements), transposed as
  // attention does, [B, T, H, hd] -> [B, H, T, hd]: the copy is cut into
  // several ranges of output rows, run on two threads, and each range must
  // start reading at the right element. out[b, h, t, d] = x[b, t, h, d] =
  // ((b * 40 + t) * 8 + h) * 36 + d.
  const int previous = blas_info().threads;
  set_blas_threads(2);
  Tensor y = permute(reshape(arange(3 * 40 * 8 * 36, DType::float64), {3, 40, 8, 36}),
                     {0, 2, 1, 3});
  set_blas_threads(previous);
  REQUIRE(y.shape() == Shape{3, 8, 40, 36});
  std::vector<double> got = y.to_vector();
  std::size_t wrong = 0, i = 0;
  for (std::size_t b = 0; b < 3; ++b)
    for (std::size_t h = 0; h < 8; ++h)
      for (std::size_t t = 0; t < 40; ++t)
        for (std::size_t d = 0; d < 36; ++d)
          wrong += got[i++] != double(((b * 40 + t) * 8 + h) * 36 + d);
  CHECK(wrong == 0);
}

TEST_CASE("permute's gradient applies the inverse permutation") {
  for (DType dt : kDtypes) {
    SUBCASE(dtype_name(dt)) {
      Tensor x = reshape(arange(6, dt), {1, 2, 3}).detach().requires_grad_();
      Tensor y = permute(x, {2, 0, 1});  // (3,1,2)
      CHECK(y.op() == "permute");
      // Upstream gradient g = np.arange(6).reshape(3, 1, 2); dx = g.transpose(1, 2, 0)
      y.backward(reshape(arange(6, dt), {3, 1, 2}));
      // dx[0, j, k] = g[k, 0, j]: (0,2,4,1,3,5)
      check_elements(x.grad(), {1, 2, 3}, {0, 2, 4, 1, 3, 5});
    }
  }
}

TEST_CASE("permute names the axes and the shape when they are not a permutation") {
  Tensor x = zeros({2, 3, 4});
  CHECK_THROWS_WITH_AS(
      permute(x, {0, 0, 1}),
      doctest::Contains(
          "permute: axes (0,0,1) are not a permutation of 3 axes for shape (2,3,4)"),
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      permute(x, {0, 1}),
      doctest::Contains("permute: axes (0,1) are not a permutation of 3 axes"),
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      permute(x, {0, 1, 3}),
      doctest::Contains("permute: axis 3 is out of range for shape (2,3,4)"),
      std::invalid_argument);
}

TEST_CASE("transpose swaps two axes and its gradient swaps them back") {
  for (DType dt : kDtypes) {
    SUBCASE(dtype_name(dt)) {
      // x = [[1,2,3],[4,5,6]]; x.T = [[1,4],[2,5],[3,6]]
      Tensor x = tensor({{1, 2, 3}, {4, 5, 6}}, dt).requires_grad_();
      Tensor y = transpose(x, 0, -1);
      CHECK(y.op() == "transpose");
      check_elements(y, {3, 2}, {1, 4, 2, 5, 3, 6});
      // dout = [[10,20],[30,40],[50,60]] -> dx = dout.T
      y.backward(tensor({{10, 20}, {30, 40}, {50, 60}}, dt));
      check_elements(x.grad(), {2, 3}, {10, 30, 50, 20, 40, 60});
      CHECK_THROWS_WITH_AS(
          transpose(x, 0, 2),
          doctest::Contains("transpose: axis 2 is out of range for shape (2,3)"),
          std::invalid_argument);
    }
  }
}

TEST_CASE(
    "transpose of the middle axes moves heads in front of time: [B,T,H,hd] -> "
    "[B,H,T,hd]") {
  // x[b,t,h,d] = 1000b + 100t + 10h + d; after the swap y[b,h,t,d] holds the same number.
  std::vector<double> v;
  for (int b = 0; b < 2; ++b)
    for (int t = 0; t < 3; ++t)
      for (int h = 0; h < 2; ++h)
        for (int d = 0; d < 2; ++d) v.push_back(1000 * b + 100 * t + 10 * h + d);
  Tensor y = transpose(from_vector(v, {2, 3, 2, 2}), 1, 2);
  REQUIRE(y.shape() == Shape{2, 2, 3, 2});
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t h = 0; h < 2; ++h)
      for (std::size_t t = 0; t < 3; ++t)
        for (std::size_t d = 0; d < 2; ++d)
          CHECK(y.at({b, h, t, d}) == double(1000 * b + 100 * t + 10 * h + d));
}

TEST_CASE("concat joins tensors along one axis") {
  for (DType dt : kDtypes) {
    SUBCASE(dtype_name(dt)) {
      Tensor a = tensor({{1, 2}, {3, 4}}, dt);
      Tensor b = from_vector({5, 6}, {1, 2}, dt);
      Tensor c = from_vector({7, 8}, {2, 1}, dt);
      // np.concatenate([a, b], axis=0)
      check_elements(concat({a, b}, 0), {3, 2}, {1, 2, 3, 4, 5, 6});
      // np.concatenate([a, c, a], axis=1) = [[1,2,7,1,2],[3,4,8,3,4]]
      check_elements(concat({a, c, a}, -1), {2, 5}, {1, 2, 7, 1, 2, 3, 4, 8, 3, 4});
      // A single tensor concatenates to a copy of itself.
      check_elements(concat({a}, 0), {2, 2}, {1, 2, 3, 4});
    }
  }
}

TEST_CASE("concat onto a zero-length axis works, as an empty KV cache needs") {
  // cache [B=1, Hkv=1, 0, hd=2] + new keys [1, 1, 1, 2] -> [1, 1, 1, 2]
  Tensor empty_cache = zeros({1, 1, 0, 2});
  Tensor k = from_vector({3, 4}, {1, 1, 1, 2});
  check_elements(concat({empty_cache, k}, 2), {1, 1, 1, 2}, {3, 4});
}

TEST_CASE("concat's gradient gives each input its own part of dout") {
  for (DType dt : kDtypes) {
    SUBCASE(dtype_name(dt)) {
      Tensor a = from_vector({1, 2, 3, 4}, {2, 2}, dt).requires_grad_();
      Tensor c = from_vector({7, 8}, {2, 1}, dt).requires_grad_();
      Tensor y = concat({a, c}, 1);  // (2,3)
      CHECK(y.op() == "concat");
      y.backward(tensor({{10, 20, 30}, {40, 50, 60}}, dt));
      check_elements(a.grad(), {2, 2}, {10, 20, 40, 50});  // dout[:, 0:2]
      check_elements(c.grad(), {2, 1}, {30, 60});          // dout[:, 2:3]
    }
  }
}

TEST_CASE("concat of a tensor with itself sums both parts of the gradient") {
  Tensor a = tensor({1, 2}, DType::float64).requires_grad_();
  Tensor y = concat({a, a}, 0);  // [1,2,1,2]
  y.backward(tensor({1, 10, 100, 1000}, DType::float64));
  check_elements(a.grad(), {2}, {101, 1010});  // [1+100, 10+1000]
}

TEST_CASE("concat names the shapes and the axis it cannot join") {
  Tensor a = zeros({2, 3});
  CHECK_THROWS_WITH_AS(
      concat({a, zeros({4, 5})}, 0),
      doctest::Contains("concat: shapes (2,3) and (4,5) differ outside axis 0"),
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      concat({a, zeros({2, 3, 1})}, 1),
      doctest::Contains("concat: shapes (2,3) and (2,3,1) differ outside axis 1"),
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(concat({}, 0),
                       doctest::Contains("concat: needs at least one tensor"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      concat({a, zeros({2, 3}, DType::float64)}, 0),
      doctest::Contains("concat: dtypes float32 (2,3) and float64 (2,3) differ"),
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      concat({a, a}, 2),
      doctest::Contains("concat: axis 2 is out of range for shape (2,3)"),
      std::invalid_argument);
}

TEST_CASE("slice follows Python's slicing rules along one axis") {
  for (DType dt : kDtypes) {
    SUBCASE(dtype_name(dt)) {
      // x = np.arange(12).reshape(3, 4)
      Tensor x = reshape(arange(12, dt), {3, 4});
      check_elements(slice(x, 1, 1, 3), {3, 2}, {1, 2, 5, 6, 9, 10});      // x[:, 1:3]
      check_elements(slice(x, 0, -1, 3), {1, 4}, {8, 9, 10, 11});          // x[-1:]
      check_elements(slice(x, -1, 2, 100), {3, 2}, {2, 3, 6, 7, 10, 11});  // x[:, 2:100]
      check_elements(slice(x, 0, -100, 1), {1, 4}, {0, 1, 2, 3});          // x[-100:1]
      check_elements(slice(x, 0, 2, 1), {0, 4}, {});                   // x[2:1] is empty
      check_elements(slice(x, 1, 0, -2), {3, 2}, {0, 1, 4, 5, 8, 9});  // x[:, :-2]
    }
  }
}

TEST_CASE("slice's gradient is dout in the sliced region and zero elsewhere") {
  for (DType dt : kDtypes) {
    SUBCASE(dtype_name(dt)) {
      Tensor x = zeros({2, 4}, dt).requires_grad_();
      Tensor y = slice(x, 1, 1, 3);  // x[:, 1:3], (2,2)
      CHECK(y.op() == "slice");
      y.backward(tensor({{1, 2}, {3, 4}}, dt));
      check_elements(x.grad(), {2, 4}, {0, 1, 2, 0, 0, 3, 4, 0});
    }
  }
}

TEST_CASE("rotate_half is a concat of two slices, and its gradient comes back rotated") {
  // rotate_half(x) = concat(-x[hd/2:], x[:hd/2]) with x = [1,2,3,4] -> [-3,-4,1,2]
  Tensor x = tensor({1, 2, 3, 4}, DType::float64).requires_grad_();
  Tensor y = concat({neg(slice(x, 0, 2, 4)), slice(x, 0, 0, 2)}, 0);
  check_elements(y, {4}, {-3, -4, 1, 2});
  // d/dx sum(w * y) with w = [1,10,100,1000]: y0=-x2, y1=-x3, y2=x0, y3=x1
  y.backward(tensor({1, 10, 100, 1000}, DType::float64));
  check_elements(x.grad(), {4}, {100, 1000, -1, -10});
}

TEST_CASE("slice rejects an axis out of range") {
  CHECK_THROWS_WITH_AS(
      slice(zeros({2, 3}), -3, 0, 1),
      doctest::Contains("slice: axis -3 is out of range for shape (2,3)"),
      std::invalid_argument);
}

TEST_CASE("a permute that only moves length-1 axes is a view; any other is a copy") {
  // [1, 1, 4, 3] -> [1, 4, 1, 3]: the 4 and the 3 keep their order.
  Tensor x = reshape(arange(12), {1, 1, 4, 3});
  Tensor v = permute(x, {0, 2, 1, 3});
  CHECK(v.shape() == Shape{1, 4, 1, 3});
  CHECK(v.data<float>() == x.data<float>());
  // [2, 1, 3] -> [3, 1, 2] swaps two real axes: a copy, in the new order.
  Tensor y = reshape(arange(6), {2, 1, 3});
  Tensor c = permute(y, {2, 1, 0});
  CHECK(c.data<float>() != y.data<float>());
  CHECK(c.to_vector() == std::vector<double>{0, 3, 1, 4, 2, 5});
  // The view still has a gradient: dout reshaped back.
  Tensor w = ones({1, 1, 2, 2}).requires_grad_();
  sum(permute(w, {0, 2, 1, 3}) * tensor({{{{1, 2}}, {{3, 4}}}})).backward();
  CHECK(w.grad().to_vector() == std::vector<double>{1, 2, 3, 4});
}
