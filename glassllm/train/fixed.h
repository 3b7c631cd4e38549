// fixed.h (private): a number as text with a fixed count of decimals, for the
// training loop's log lines (train.cpp) and evaluate's summary (evaluate.cpp).
#pragma once

#include <cstdio>
#include <string>

namespace glassllm {

/// v with `digits` decimals: fixed(2.71828, 3) is "2.718".
inline std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace glassllm
