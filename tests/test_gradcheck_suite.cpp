// Every built-in gradient check (gradcheck_suite.cpp, the table that
// `glassllm gradcheck` prints) must pass: every op's backward agrees with
// central finite differences in float64, including broadcasting cases and
// tensors used twice.
#include "check.h"

using namespace glassllm;

TEST_CASE("every op's backward passes the float64 gradient check") {
  const auto& cases = builtin_gradchecks();
  // Every op of ops.h has at least one case.
  std::set<std::string> ops;
  for (const auto& c : cases) ops.insert(c.op);
  for (const char* op :
       {"add",          "sub",         "mul",         "div",           "pow",
        "neg",          "exp",         "log",         "sqrt",          "rsqrt",
        "tanh",         "sigmoid",     "silu",        "relu",          "sum",
        "mean",         "max",         "reshape",     "permute",       "transpose",
        "squeeze",      "unsqueeze",   "concat",      "slice",         "matmul",
        "linear",       "softmax",     "log_softmax", "cross_entropy", "embedding",
        "where",        "masked_fill", "repeat_kv",   "rmsnorm",       "rope",
        "sum_to_shape", "astype",      "matmul_t",    "causal_softmax"}) {
    CAPTURE(op);
    CHECK(ops.count(op) == 1);
  }
  for (const auto& c : cases) {
    SUBCASE((c.op + ": " + c.case_name).c_str()) {
      GradCheckResult r = c.run(GradCheckOptions{});
      INFO(r.message());
      CHECK(r.passed);
    }
  }
}
