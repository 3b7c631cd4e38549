// gradcheck_suite.cpp: the built-in gradient checks that `glassllm gradcheck`
// runs and the tests repeat: every op of ops.h on small random float64
// inputs, with broadcasting cases and a tensor used twice (whose gradient is
// the sum of both uses).
#include "glassllm/engine/gradcheck.h"
#include "glassllm/engine/ops.h"

namespace glassllm {

namespace {

constexpr DType f64 = DType::float64;
using Inputs = std::vector<Tensor>;

// Inputs are drawn from a seed derived from the case's position, so a failing
// case can be re-run alone with the same numbers.
Tensor normal(const Shape& s, std::uint64_t seed) {
  return Rng(seed).normal(s, 0, 1, f64);
}
Tensor positive(const Shape& s, std::uint64_t seed) {
  return Rng(seed).uniform(s, 0.5, 2.0, f64);
}
// Values at least 0.1 away from 0, for ops with a kink there (relu).
Tensor away_from_zero(const Shape& s, std::uint64_t seed) {
  Tensor u = Rng(seed).uniform(s, 0.1, 1.0, f64);
  Tensor sign = Rng(seed + 1).uniform(s, -1.0, 1.0, f64);
  std::vector<double> v = u.to_vector(), sg = sign.to_vector();
  for (std::size_t i = 0; i < v.size(); ++i) v[i] *= sg[i] < 0 ? -1 : 1;
  return from_vector(v, s, f64);
}

OpCheckCase make(std::string op, std::string name, Inputs inputs, TensorFn f) {
  return {op, name, [op, inputs, f](const GradCheckOptions& o) {
            return gradcheck(f, inputs, o, op);
          }};
}

// long-function: a table, one entry per case, grouped by op family; read it
// as data rather than as code.
std::vector<OpCheckCase> build() {
  std::vector<OpCheckCase> c;
  std::uint64_t s = 1;  // seeds

  // ---- elementwise, binary -------------------------------------------------
  c.push_back(make("add", "same shape", {normal({3, 4}, s++), normal({3, 4}, s++)},
                   [](const Inputs& x) { return add(x[0], x[1]); }));
  c.push_back(make("add", "broadcast (2,3,4)+(4,)",
                   {normal({2, 3, 4}, s++), normal({4}, s++)},
                   [](const Inputs& x) { return add(x[0], x[1]); }));
  c.push_back(make("add", "broadcast (3,1)+(1,4)",
                   {normal({3, 1}, s++), normal({1, 4}, s++)},
                   [](const Inputs& x) { return add(x[0], x[1]); }));
  c.push_back(make("add", "x + x (used twice)", {normal({2, 3}, s++)},
                   [](const Inputs& x) { return add(x[0], x[0]); }));
  c.push_back(make("sub", "broadcast (2,3)-(2,1)",
                   {normal({2, 3}, s++), normal({2, 1}, s++)},
                   [](const Inputs& x) { return sub(x[0], x[1]); }));
  c.push_back(make("mul", "broadcast (2,3,4)*(3,1)",
                   {normal({2, 3, 4}, s++), normal({3, 1}, s++)},
                   [](const Inputs& x) { return mul(x[0], x[1]); }));
  c.push_back(make("mul", "x * x (used twice)", {normal({4}, s++)},
                   [](const Inputs& x) { return mul(x[0], x[0]); }));
  c.push_back(make("div", "broadcast (2,3)/(3,)",
                   {normal({2, 3}, s++), positive({3}, s++)},
                   [](const Inputs& x) { return div(x[0], x[1]); }));
  c.push_back(make("pow", "tensor exponent (2,3)**(3,)",
                   {positive({2, 3}, s++), normal({3}, s++)},
                   [](const Inputs& x) { return pow(x[0], x[1]); }));
  c.push_back(make("pow", "scalar exponent x**3", {normal({2, 3}, s++)},
                   [](const Inputs& x) { return pow(x[0], 3.0); }));

  // ---- elementwise, unary --------------------------------------------------
  auto unary = [&](const char* op, Tensor (*fn)(const Tensor&), Tensor input) {
    c.push_back(make(op, "(2,3)", {input}, [fn](const Inputs& x) { return fn(x[0]); }));
  };
  unary("neg", neg, normal({2, 3}, s++));
  unary("exp", exp, normal({2, 3}, s++));
  unary("log", log, positive({2, 3}, s++));
  unary("sqrt", sqrt, positive({2, 3}, s++));
  unary("rsqrt", rsqrt, positive({2, 3}, s++));
  unary("tanh", tanh, normal({2, 3}, s++));
  unary("sigmoid", sigmoid, normal({2, 3}, s++));
  unary("silu", silu, normal({2, 3}, s++));
  unary("relu", relu, away_from_zero({2, 3}, s++));
  // Only float64 -> float64 can be finite-differenced: a float32 step would
  // round eps = 1e-6 away. The float32 case is checked by hand in the tests.
  c.push_back(make("astype", "float64 -> float64", {normal({2, 3}, s++)},
                   [](const Inputs& x) { return astype(x[0], DType::float64); }));
  c.push_back(make("exp", "x * exp(x) (used twice)", {normal({5}, s++)},
                   [](const Inputs& x) { return mul(x[0], exp(x[0])); }));
  c.push_back(make("sum_to_shape", "(2,3,4) -> (3,1)", {normal({2, 3, 4}, s++)},
                   [](const Inputs& x) {
                     return sum_to_shape(x[0], {3, 1});
                   }));

  // ---- reductions ------------------------------------------------------------
  c.push_back(make("sum", "axis 1, keepdims", {normal({2, 3, 4}, s++)},
                   [](const Inputs& x) { return sum(x[0], {1}, true); }));
  c.push_back(make("sum", "axes (0,2)", {normal({2, 3, 4}, s++)}, [](const Inputs& x) {
    return sum(x[0], {0, 2});
  }));
  c.push_back(make("sum", "all", {normal({2, 3}, s++)},
                   [](const Inputs& x) { return sum(x[0]); }));
  c.push_back(make("mean", "axis -1", {normal({2, 3, 4}, s++)},
                   [](const Inputs& x) { return mean(x[0], {-1}); }));
  c.push_back(make("mean", "all, keepdims", {normal({2, 3}, s++)},
                   [](const Inputs& x) { return mean(x[0], {}, true); }));
  c.push_back(make("max", "axis 1", {normal({3, 5}, s++)},
                   [](const Inputs& x) { return max(x[0], 1); }));
  c.push_back(make("max", "all", {normal({3, 4}, s++)},
                   [](const Inputs& x) { return max(x[0]); }));

  // ---- shape ops -------------------------------------------------------------
  c.push_back(
      make("reshape", "(2,3,4) -> (4,-1)", {normal({2, 3, 4}, s++)}, [](const Inputs& x) {
        return reshape(x[0], {4, -1});
      }));
  c.push_back(make("permute", "(2,3,4) axes (2,0,1)", {normal({2, 3, 4}, s++)},
                   [](const Inputs& x) {
                     return permute(x[0], {2, 0, 1});
                   }));
  c.push_back(make("transpose", "(2,3,4) axes 0,2", {normal({2, 3, 4}, s++)},
                   [](const Inputs& x) { return transpose(x[0], 0, 2); }));
  c.push_back(make("squeeze", "(2,1,3) axis 1", {normal({2, 1, 3}, s++)},
                   [](const Inputs& x) { return squeeze(x[0], 1); }));
  c.push_back(make("unsqueeze", "(2,3) axis -1", {normal({2, 3}, s++)},
                   [](const Inputs& x) { return unsqueeze(x[0], -1); }));
  c.push_back(
      make("concat", "three inputs, axis 1",
           {normal({2, 1, 3}, s++), normal({2, 2, 3}, s++), normal({2, 3, 3}, s++)},
           [](const Inputs& x) {
             return concat({x[0], x[1], x[2]}, 1);
           }));
  c.push_back(make("concat", "x with itself (used twice)", {normal({2, 3}, s++)},
                   [](const Inputs& x) {
                     return concat({x[0], x[0]}, 0);
                   }));
  c.push_back(make("slice", "axis 1 [1:3]", {normal({2, 4, 3}, s++)},
                   [](const Inputs& x) { return slice(x[0], 1, 1, 3); }));

  // ---- matmul ----------------------------------------------------------------
  c.push_back(make("matmul", "(3,4)@(4,5)", {normal({3, 4}, s++), normal({4, 5}, s++)},
                   [](const Inputs& x) { return matmul(x[0], x[1]); }));
  c.push_back(make("matmul", "broadcast batch (2,3,4)@(4,5)",
                   {normal({2, 3, 4}, s++), normal({4, 5}, s++)},
                   [](const Inputs& x) { return matmul(x[0], x[1]); }));
  c.push_back(make("matmul", "broadcast batch (2,1,3,4)@(3,4,2)",
                   {normal({2, 1, 3, 4}, s++), normal({3, 4, 2}, s++)},
                   [](const Inputs& x) { return matmul(x[0], x[1]); }));
  c.push_back(make("matmul", "1-D (4,)@(4,3)", {normal({4}, s++), normal({4, 3}, s++)},
                   [](const Inputs& x) { return matmul(x[0], x[1]); }));
  c.push_back(make("matmul", "a @ a (used twice)", {normal({3, 3}, s++)},
                   [](const Inputs& x) { return matmul(x[0], x[0]); }));
  c.push_back(make("matmul_t", "broadcast batch (2,1,3,4)@(3,5,4)^T",
                   {normal({2, 1, 3, 4}, s++), normal({3, 5, 4}, s++)},
                   [](const Inputs& x) { return matmul_t(x[0], x[1]); }));
  c.push_back(make("matmul_t", "a @ a^T (used twice)", {normal({3, 4}, s++)},
                   [](const Inputs& x) { return matmul_t(x[0], x[0]); }));
  c.push_back(make("linear", "(2,3,4) with weight (5,4)",
                   {normal({2, 3, 4}, s++), normal({5, 4}, s++)},
                   [](const Inputs& x) { return linear(x[0], x[1]); }));

  // ---- neural-network ops ------------------------------------------------------
  c.push_back(make("softmax", "(2,3,5) axis -1", {normal({2, 3, 5}, s++)},
                   [](const Inputs& x) { return softmax(x[0], -1); }));
  c.push_back(make("softmax", "(4,3) axis 0", {normal({4, 3}, s++)},
                   [](const Inputs& x) { return softmax(x[0], 0); }));
  c.push_back(make("log_softmax", "(3,5) axis -1", {normal({3, 5}, s++)},
                   [](const Inputs& x) { return log_softmax(x[0], -1); }));
  c.push_back(make("cross_entropy", "(2,3,5), one target ignored",
                   {normal({2, 3, 5}, s++)}, [](const Inputs& x) {
                     return cross_entropy(x[0], {0, 4, -100, 2, 1, 3});
                   }));
  c.push_back(make("embedding", "(6,4) rows, ids with repeats", {normal({6, 4}, s++)},
                   [](const Inputs& x) {
                     return embedding(x[0], {1, 5, 1, 0}, {2, 2});
                   }));
  {
    Tensor cond = tensor({{1, 0, 1}, {0, 0, 1}}, f64);
    c.push_back(make("where", "broadcast cond (2,3), a (2,3), b (3,)",
                     {normal({2, 3}, s++), normal({3}, s++)},
                     [cond](const Inputs& x) { return where(cond, x[0], x[1]); }));
    Tensor mask = tensor({0, 1, 0}, f64);
    c.push_back(make("masked_fill", "(2,3) with mask (3,)", {normal({2, 3}, s++)},
                     [mask](const Inputs& x) { return masked_fill(x[0], mask, -5.0); }));
  }

  // ---- attention pieces ----------------------------------------------------------
  c.push_back(make("repeat_kv", "(2,2,3,4) n_rep 2", {normal({2, 2, 3, 4}, s++)},
                   [](const Inputs& x) { return repeat_kv(x[0], 2); }));
  c.push_back(make("rmsnorm", "(2,3,8)", {normal({2, 3, 8}, s++)},
                   [](const Inputs& x) { return rmsnorm(x[0], 1e-5); }));
  c.push_back(make("rmsnorm", "x * rmsnorm(x) (used twice)", {normal({2, 4}, s++)},
                   [](const Inputs& x) { return mul(x[0], rmsnorm(x[0], 1e-5)); }));
  c.push_back(make("rope", "(1,2,4,8) start 3", {normal({1, 2, 4, 8}, s++)},
                   [](const Inputs& x) { return rope(x[0], 3, 10000.0); }));
  c.push_back(make("causal_softmax", "(1,2,3,5) queries at 2, keys from 0",
                   {normal({1, 2, 3, 5}, s++)},
                   [](const Inputs& x) { return causal_softmax(x[0], 2, 0); }));
  c.push_back(make("causal_softmax", "grouped rows (1,2,6,4), 3 queries",
                   {normal({1, 2, 6, 4}, s++)},
                   [](const Inputs& x) { return causal_softmax(x[0], 1, 0, 3); }));
  c.push_back(make("causal_softmax", "window 2, (1,2,3,5) queries at 2",
                   {normal({1, 2, 3, 5}, s++)},
                   [](const Inputs& x) { return causal_softmax(x[0], 2, 0, 0, 2); }));
  return c;
}

}  // namespace

const std::vector<OpCheckCase>& builtin_gradchecks() {
  static const std::vector<OpCheckCase> cases = build();
  return cases;
}

}  // namespace glassllm
