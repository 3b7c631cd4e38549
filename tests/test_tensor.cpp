// Tests for tensor.h: creation, accessors, dtypes, printing and grad mode.
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "check.h"

using namespace glassllm;
using glassllm::test::check_tensor;

TEST_CASE("a tour of the public API: make tensors, compute, differentiate") {
  // The first test a newcomer reads: y = sum(w * x + b), so dy/dw = x, dy/db = 3.
  Tensor x = tensor({1, 2, 3});
  Tensor w = tensor({0.5, -1, 2}).requires_grad_();
  Tensor b = scalar(0.25).requires_grad_();
  Tensor y = sum(w * x + b);
  // 0.5*1 - 1*2 + 2*3 + 3*0.25 = 5.25
  CHECK(y.item() == doctest::Approx(5.25));
  y.backward();
  check_tensor(w.grad(), {3}, {1, 2, 3});
  check_tensor(b.grad(), {}, {3});
  CHECK_FALSE(x.grad().defined());  // x never asked for a gradient
  CHECK(y.op() == "sum");
}

TEST_CASE("creation functions give the shapes, dtypes and values NumPy would") {
  SUBCASE("zeros, ones, full") {
    check_tensor(zeros({2, 3}), {2, 3}, {0, 0, 0, 0, 0, 0});
    check_tensor(ones({2}, DType::float64), {2}, {1, 1});
    check_tensor(full({1, 2}, 7.5), {1, 2}, {7.5, 7.5});
    CHECK(ones({2}, DType::float64).dtype() == DType::float64);
    CHECK(zeros({2, 3}).dtype() == DType::float32);
  }
  SUBCASE("arange follows np.arange") {
    check_tensor(arange(4), {4}, {0, 1, 2, 3});
    check_tensor(arange(1.0, 2.0, 0.25), {4}, {1, 1.25, 1.5, 1.75});
    check_tensor(arange(5.0, 1.0, -2.0), {2}, {5, 3});
    CHECK(arange(3.0, 1.0).size() == 0);
  }
  SUBCASE("nested values give the nested shape") {
    check_tensor(tensor({{1, 2, 3}, {4, 5, 6}}), {2, 3}, {1, 2, 3, 4, 5, 6});
    check_tensor(tensor({{{1, 2}, {3, 4}}}), {1, 2, 2}, {1, 2, 3, 4});
    CHECK_THROWS_WITH_AS(tensor({{1, 2}, {3}}), doctest::Contains("ragged"),
                         std::invalid_argument);
  }
  SUBCASE("from_vector checks the count against the shape") {
    check_tensor(from_vector({1, 2, 3, 4}, {2, 2}), {2, 2}, {1, 2, 3, 4});
    CHECK_THROWS_WITH_AS(from_vector({1, 2, 3}, {2, 2}),
                         doctest::Contains("3 values do not fill shape (2,2)"),
                         std::invalid_argument);
  }
  SUBCASE("float32 rounds values, float64 keeps them") {
    // 0.1 is not exact in binary; float32 keeps about 7 digits.
    CHECK(scalar(0.1, DType::float32).item() == double(0.1f));
    CHECK(scalar(0.1, DType::float64).item() == 0.1);
  }
}

TEST_CASE("accessors report shape, ndim, size, nbytes and dims") {
  Tensor t = zeros({2, 3, 4}, DType::float64);
  CHECK(t.ndim() == 3);
  CHECK(t.size() == 24);
  CHECK(t.nbytes() == 24 * 8);
  CHECK(t.dim(-1) == 4);
  CHECK(t.dim(0) == 2);
  CHECK(zeros({2, 3}).nbytes() == 24);
  CHECK_THROWS_WITH_AS(t.dim(3),
                       doctest::Contains("dim: axis 3 is out of range for shape (2,3,4)"),
                       std::invalid_argument);
  CHECK(scalar(2).ndim() == 0);
  CHECK(scalar(2).size() == 1);
}

TEST_CASE("item and at read single elements and reject bad indices") {
  Tensor t = tensor({{1, 2, 3}, {4, 5, 6}});
  CHECK(t.at({1, 2}) == 6);
  CHECK(t.at({0, 1}) == 2);
  CHECK(scalar(3.5).item() == 3.5);
  CHECK_THROWS_WITH_AS(t.at({2, 0}),
                       doctest::Contains("index (2,0) is out of range for shape (2,3)"),
                       std::out_of_range);
  CHECK_THROWS_WITH_AS(t.item(), doctest::Contains("has 6 elements"),
                       std::invalid_argument);
}

TEST_CASE("data<T> gives the raw buffer only for the matching dtype") {
  Tensor t = tensor({1, 2}, DType::float64);
  CHECK(t.data<double>()[1] == 2.0);
  CHECK_THROWS_WITH_AS(t.data<float>(),
                       doctest::Contains("tensor is float64, not float32"),
                       std::invalid_argument);
}

TEST_CASE("parse_dtype accepts the two names and rejects others") {
  CHECK(parse_dtype("float32") == DType::float32);
  CHECK(parse_dtype("f64") == DType::float64);
  CHECK_THROWS_WITH_AS(parse_dtype("float16"),
                       doctest::Contains("unknown dtype 'float16'"),
                       std::invalid_argument);
}

TEST_CASE("shape_str spells shapes as NumPy does") {
  CHECK(shape_str({2, 3}) == "(2,3)");
  CHECK(shape_str({3}) == "(3,)");
  CHECK(shape_str({}) == "()");
}

TEST_CASE("the same seed gives the same random numbers, another seed others") {
  Tensor a = randn({4, 5}, 42), b = randn({4, 5}, 42), c = randn({4, 5}, 43);
  CHECK(a.to_vector() == b.to_vector());
  CHECK(a.to_vector() != c.to_vector());
  Tensor u = rand({1000}, 7, DType::float64);
  std::vector<double> v = u.to_vector();
  double lo = *std::min_element(v.begin(), v.end()),
         hi = *std::max_element(v.begin(), v.end());
  CHECK(lo >= 0.0);
  CHECK(hi < 1.0);
  // The mean of 1000 uniform samples is 0.5 within a few standard errors (0.009).
  double m = 0;
  for (double x : v) m += x / 1000;
  CHECK(std::fabs(m - 0.5) < 0.05);
}

TEST_CASE("printing follows NumPy's str and repr") {
  CHECK(tensor({{1, 2}, {3, 4}}).str() == "[[1. 2.]\n [3. 4.]]");
  CHECK(tensor({{1, 2}, {3, 4}}).repr() ==
        "array([[1., 2.],\n       [3., 4.]], dtype=float32)");
  // Shared format: padded to the longest fraction, right-aligned.
  CHECK(tensor({1.5, 2.25, -3}).str() == "[ 1.5   2.25 -3.  ]");
  // float32 0.1 prints as 0.1 (the shortest decimal that identifies it).
  CHECK(tensor({0.1, 0.2}).str() == "[0.1 0.2]");
  CHECK(tensor({1.0 / 3}, DType::float64).str() == "[0.33333333]");
  // Spanning more than 1e3: scientific, mantissas padded alike.
  CHECK(tensor({1e-5, 1}).str() == "[1.e-05 1.e+00]");
  CHECK(scalar(3).str() == "3.0");
  // Over 1000 elements: first and last three.
  CHECK(arange(2000).str() ==
        "[0.000e+00 1.000e+00 2.000e+00 ... 1.997e+03 1.998e+03 1.999e+03]");
  CHECK(reshape(arange(8), {2, 2, 2}).str() ==
        "[[[0. 1.]\n  [2. 3.]]\n\n [[4. 5.]\n  [6. 7.]]]");
}

TEST_CASE("no_grad turns graph recording off for its scope only") {
  Tensor w = ones({2}).requires_grad_();
  CHECK(grad_enabled());
  {
    no_grad guard;
    CHECK_FALSE(grad_enabled());
    Tensor y = w * 2.0;
    CHECK_FALSE(y.requires_grad());
    CHECK(y.parents().empty());
    {
      no_grad nested;
      CHECK_FALSE(grad_enabled());
    }
    CHECK_FALSE(grad_enabled());  // the inner guard restores "off", not "on"
  }
  CHECK(grad_enabled());
  Tensor z = w * 2.0;
  CHECK(z.requires_grad());
  CHECK(z.parents().size() == 2);
}

TEST_CASE("nan and inf share the common width when printing, as in NumPy") {
  // NumPy: print(np.array([[7., -np.inf], [7., 7.]], dtype=np.float32))
  CHECK(tensor({{7, -INFINITY}, {7, 7}}).str() == "[[  7. -inf]\n [  7.   7.]]");
  CHECK(tensor({{1, 0}, {NAN, NAN}}).str() == "[[ 1.  0.]\n [nan nan]]");
}

// What /proc/self/smaps says of the mapping that holds `address`: its
// "THPeligible" line (1 when the kernel may back it with 2 MiB pages), or -1
// when this system has no such file or line.
static int huge_pages_eligible(const void* address) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    std::uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> begin >> dash >> end && dash == '-') {
      inside = begin <= at && at < end;  // a mapping's first line: "begin-end perms ..."
    } else if (inside && line.rfind("THPeligible:", 0) == 0) {
      return std::stoi(line.substr(12));
    }
  }
  return -1;
}

TEST_CASE("a new array of 16 MiB or more asks for 2 MiB pages, a smaller one does not") {
  // Only the kernel's "madvise" mode tells the two apart: "always" gives huge
  // pages to every mapping, "never" to none.
  std::ifstream mode_file("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string mode;
  std::getline(mode_file, mode);
  if (mode.find("[madvise]") == std::string::npos) {
    MESSAGE("transparent huge pages are \""
            << mode << "\" here, not madvise: nothing to tell apart");
    return;
  }
  Tensor big = zeros({std::size_t(8) << 20});                    // 32 MiB of float32
  Tensor small = zeros({std::size_t(1) << 20}, DType::float64);  // 8 MiB
  // 4 MiB into the big array is inside its 2 MiB-aligned interior.
  const int big_eligible =
      huge_pages_eligible(big.data<float>() + (std::size_t(1) << 20));
  if (big_eligible == -1) {
    MESSAGE("/proc/self/smaps has no THPeligible line here");
    return;
  }
  CHECK(big_eligible == 1);
  CHECK(huge_pages_eligible(small.data<double>() + (std::size_t(1) << 19)) == 0);
  CHECK(big.data<float>()[(std::size_t(8) << 20) - 1] ==
        0.0f);  // still zeros, to the end
}

TEST_CASE("set_grad replaces the gradient and refuses another shape or dtype") {
  Tensor w = ones({2, 3}).requires_grad_();
  sum(w * 2.0).backward();
  check_tensor(w.grad(), {2, 3}, {2, 2, 2, 2, 2, 2});
  w.set_grad(full({2, 3}, 0.5));
  check_tensor(w.grad(), {2, 3}, {0.5, 0.5, 0.5, 0.5, 0.5, 0.5});
  CHECK_THROWS_WITH_AS(w.set_grad(ones({3, 2})),
                       "set_grad: gradient (3,2) float32 for a tensor (2,3) float32; "
                       "expected the tensor's shape and dtype",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(w.set_grad(ones({2, 3}, DType::float64)),
                       "set_grad: gradient (2,3) float64 for a tensor (2,3) float32; "
                       "expected the tensor's shape and dtype",
                       std::invalid_argument);
  w.set_grad(Tensor());  // forgets it, as zero_grad does
  CHECK_FALSE(w.grad().defined());
}

TEST_CASE("data_owner is shared by views and by nothing else") {
  Tensor a = arange(6);
  Tensor view = reshape(a, {2, 3}), cut = a.detach();
  Tensor copy = a + 0.0;
  CHECK(a.data_owner() == view.data_owner());
  CHECK(a.data_owner() == cut.data_owner());
  CHECK(a.data_owner() != copy.data_owner());
  CHECK_THROWS_WITH_AS(Tensor().data_owner(), "data_owner: tensor is undefined",
                       std::invalid_argument);
}
