// Tests for the ops at the edges of their domain, where they must agree with
// NumPy and PyTorch: huge logits, 0^0, NaN, all-masked rows, size-0 axes, and
// which results require grad. Each case once disagreed with PyTorch.
//
// Expected values come from a formula written out here or from PyTorch 1.13
// (the line that computes them is in the comment), never from the engine.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "check.h"
#include "glassllm/engine/ops.h"

using namespace glassllm;
using glassllm::test::check_tensor;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool all_nan(const Tensor& t) {
  for (double v : t.to_vector())
    if (!std::isnan(v)) return false;
  return true;
}
}  // namespace

// ---- log_softmax and cross_entropy at large logits ------------------------------

// log_softmax = (x - max) - log(sum(exp(x - max))): for two equal logits
// every entry is -log(2), however large the logits are. Computed as
// x - (max + log 2), max + log 2 rounds to max at 1e16 (float64) or 1e8
// (float32) and the result was 0.
TEST_CASE("log_softmax of two equal huge logits is -log 2 in both dtypes") {
  for (auto [big, dtype] : {std::pair{1e16, DType::float64}, {1e8, DType::float32}}) {
    CAPTURE(dtype_name(dtype));
    Tensor x = from_vector({big, big}, {1, 2}, dtype).requires_grad_();
    Tensor y = log_softmax(x, -1);
    check_tensor(y, {1, 2}, {-std::log(2.0), -std::log(2.0)}, 1e-6);
    // d y0 / dx = [1 - p0, -p1] = [0.5, -0.5]  (torch: [[0.5, -0.5]])
    y.backward(from_vector({1, 0}, {1, 2}, dtype));
    check_tensor(x.grad(), {1, 2}, {0.5, -0.5}, 1e-6);
  }
}

// float32 logits [1000, 1000.5]: (x - max) is exact ([-0.5, 0]), so the
// answer is -0.5 - log(1 + e^-0.5) = -0.9740770 and -log(1 + e^-0.5) =
// -0.4740770 to float32 rounding (torch float32: -0.9740770, -0.4740770).
// The old x - (max + log_sum) gave -0.974060, 1.7e-5 off.
TEST_CASE("log_softmax in float32 keeps its digits at logits near 1000") {
  Tensor y = log_softmax(from_vector({1000, 1000.5}, {2}, DType::float32));
  const double lse = std::log(1 + std::exp(-0.5));
  check_tensor(y, {2}, {-0.5 - lse, -lse}, 2e-7);
}

TEST_CASE("log_softmax is shift invariant: [1, 1] and [0, 0] give the same row") {
  Tensor a = log_softmax(from_vector({1, 1}, {2}, DType::float32));
  Tensor b = log_softmax(from_vector({0, 0}, {2}, DType::float32));
  // x - max is exactly 0 in both rows, so both compute -log(2) the same way.
  CHECK(a.to_vector() == b.to_vector());
  check_tensor(a, {2}, {-std::log(2.0), -std::log(2.0)}, 1e-7);
}

// cross_entropy = log(sum(exp(x - max))) - (x_target - max) = log 2 here
// (torch.nn.functional.cross_entropy(torch.tensor([[1e16, 1e16]],
// dtype=torch.float64), torch.tensor([0])) = 0.6931).
TEST_CASE("cross_entropy of two equal huge logits is log 2") {
  Tensor logits = from_vector({1e16, 1e16}, {1, 2}, DType::float64).requires_grad_();
  Tensor loss = cross_entropy(logits, {0});
  CHECK(loss.item() == doctest::Approx(std::log(2.0)).epsilon(1e-12));
  loss.backward();
  check_tensor(logits.grad(), {1, 2}, {-0.5, 0.5}, 1e-12);  // softmax - onehot
}

// ---- pow at 0^0 ----------------------------------------------------------------

// a^0 is the constant 1, so its gradient is 0 everywhere, also at a = 0
// where b a^(b-1) is 0 * inf. torch: torch.pow(torch.tensor([0., -1., 2.],
// requires_grad=True), 0.0).sum().backward() gives grad [0, 0, 0].
TEST_CASE("pow(x, 0) has gradient 0, also at x = 0") {
  Tensor x = from_vector({0, -1, 2}, {3}, DType::float64).requires_grad_();
  Tensor y = pow(x, 0.0);
  check_tensor(y, {3}, {1, 1, 1}, 0);
  sum(y).backward();
  check_tensor(x.grad(), {3}, {0, 0, 0}, 0);
}

// torch: a = [0, 0, 2], b = [0, 2, 3]; torch.pow(a, b).sum().backward():
//   a.grad = [0, 0, 12]           (b a^(b-1); 0 where b == 0; 2 * 0 = 0; 3 * 4)
//   b.grad = [0, 0, 8 ln 2]       (a^b ln a; 0 where a == 0 and b >= 0)
TEST_CASE("pow(a, b) at a = b = 0: both gradients 0, as in PyTorch") {
  Tensor a = from_vector({0, 0, 2}, {3}, DType::float64).requires_grad_();
  Tensor b = from_vector({0, 2, 3}, {3}, DType::float64).requires_grad_();
  Tensor y = pow(a, b);
  check_tensor(y, {3}, {1, 0, 8}, 0);
  sum(y).backward();
  check_tensor(a.grad(), {3}, {0, 0, 12}, 1e-12);
  check_tensor(b.grad(), {3}, {0, 0, 8 * std::log(2.0)}, 1e-12);
}

// ---- NaN propagates through max and relu ----------------------------------------

// np.max([1, nan, 3]) and np.max([nan, 1, 3]) are both nan; torch.amax's
// backward then gives the whole row NaN (torch.amax(torch.tensor([1., nan,
// 3.], requires_grad=True), 0).backward(): grad [nan, nan, nan]).
TEST_CASE("max propagates NaN wherever it sits, and its row's gradient is NaN") {
  for (std::vector<double> row :
       {std::vector<double>{1, kNaN, 3}, {kNaN, 1, 3}, {1, 3, kNaN}}) {
    Tensor x = from_vector(row, {3}, DType::float64).requires_grad_();
    Tensor m = max(x);
    CHECK(std::isnan(m.item()));
    m.backward();
    CHECK(all_nan(x.grad()));
  }
  // A row without NaN is untouched by its neighbour's: [[1, nan, 3], [1, 2, 3]].
  Tensor x = from_vector({1, kNaN, 3, 1, 2, 3}, {2, 3}, DType::float32).requires_grad_();
  Tensor m = max(x, 1);
  CHECK(std::isnan(m.at({0})));
  CHECK(m.at({1}) == 3);
  sum(m).backward();
  std::vector<double> g = x.grad().to_vector();
  for (int j = 0; j < 3; ++j) CHECK(std::isnan(g[j]));
  CHECK(g[3] == 0);
  CHECK(g[4] == 0);
  CHECK(g[5] == 1);
}

// torch.relu(torch.tensor([nan, -1., 2.], requires_grad=True)): values
// [nan, 0, 2]; .sum().backward() gives [1, 0, 1] (threshold_backward passes
// dout where x <= 0 is false, and NaN <= 0 is false).
TEST_CASE("relu(NaN) is NaN and passes its gradient as PyTorch does") {
  Tensor x = from_vector({kNaN, -1, 2}, {3}, DType::float32).requires_grad_();
  Tensor y = relu(x);
  std::vector<double> v = y.to_vector();
  CHECK(std::isnan(v[0]));
  CHECK(v[1] == 0);
  CHECK(v[2] == 2);
  sum(y).backward();
  check_tensor(x.grad(), {3}, {1, 0, 1}, 0);
  // An infinite upstream gradient does not become NaN where relu is flat.
  Tensor z = from_vector({-1, 1}, {2}, DType::float64).requires_grad_();
  relu(z).backward(from_vector({kInf, kInf}, {2}, DType::float64));
  check_tensor(z.grad(), {2}, {0, kInf}, 0);
}

// ---- causal_softmax on a row with nothing finite to see --------------------------

// Row 0 sees key 0 only; with that score -inf, softmax(masked_fill(x, hidden,
// -inf)) has max -inf and every entry exp(nan) / nan: the whole row NaN.
// torch: torch.softmax(torch.tensor([-inf, -inf, 1.]).masked_fill(torch.tensor(
// [False, True, True]), -inf), -1) = [nan, nan, nan]. Row 1 is an ordinary row.
TEST_CASE("causal_softmax: a row whose visible keys are all -kInf is NaN everywhere") {
  Tensor x = from_vector({-kInf, 5, 1, 0, 0, 7}, {2, 3}, DType::float64).requires_grad_();
  Tensor p = causal_softmax(x, 0);
  std::vector<double> v = p.to_vector();
  for (int j = 0; j < 3; ++j) CHECK(std::isnan(v[j]));
  CHECK(v[3] == doctest::Approx(0.5));
  CHECK(v[4] == doctest::Approx(0.5));
  CHECK(v[5] == 0);
  // The reference, composed: whole row NaN as well.
  Tensor hidden = from_vector({0, 1, 1, 0, 0, 1}, {2, 3}, DType::float64);
  Tensor ref = softmax(masked_fill(x.detach(), hidden, -kInf), -1);
  for (int j = 0; j < 3; ++j) CHECK(std::isnan(ref.to_vector()[j]));
  // Gradient: NaN on the visible entry, 0 where masked_fill cut the hidden
  // ones off (torch on the composed form: [nan, 0, 0]).
  p.backward(ones({2, 3}, DType::float64));
  std::vector<double> g = x.grad().to_vector();
  CHECK(std::isnan(g[0]));
  CHECK(g[1] == 0);
  CHECK(g[2] == 0);
}

// ---- size-0 and 0-d shapes --------------------------------------------------------

// torch has no rope; the formula x * cos + rotate_half(x) * sin on a [2, 0]
// tensor is an empty [2, 0] tensor, and so is its gradient.
TEST_CASE("rope on a head dim or a sequence of length 0 returns an empty tensor") {
  for (Shape shape : {Shape{2, 0}, Shape{0, 4}, Shape{3, 0, 2}}) {
    CAPTURE(shape_str(shape));
    Tensor x = zeros(shape, DType::float64).requires_grad_();
    Tensor y = rope(x, 0);
    CHECK(y.shape() == shape);
    y.backward(zeros(shape, DType::float64));
    CHECK(x.grad().shape() == shape);
  }
}

// ---- which results require grad -----------------------------------------------------

// The condition of torch.where is a bool tensor and cannot require grad; a
// result computed from a constant a and b is a constant.
TEST_CASE("where and masked_fill require grad only through their values") {
  Tensor cond = from_vector({1, 0}, {2}).requires_grad_();
  Tensor a = ones({2}), b = zeros({2});
  Tensor w = where(cond, a, b);
  CHECK_FALSE(w.requires_grad());
  CHECK(w.parents().empty());
  CHECK(where(cond, a.detach().requires_grad_(), b).requires_grad());

  Tensor filled = masked_fill(a, cond, 5);
  CHECK_FALSE(filled.requires_grad());
  check_tensor(filled, {2}, {5, 1}, 0);
  CHECK(masked_fill(ones({2}).requires_grad_(), cond, 5).requires_grad());
}

TEST_CASE("sum_to_shape under no_grad returns a tensor that does not require grad") {
  Tensor g = ones({2, 3}).requires_grad_();
  no_grad guard;
  Tensor same = sum_to_shape(g, {2, 3});
  CHECK_FALSE(same.requires_grad());
  Tensor summed = sum_to_shape(g, {1, 3});
  CHECK_FALSE(summed.requires_grad());
  check_tensor(summed, {1, 3}, {2, 2, 2}, 0);
}
