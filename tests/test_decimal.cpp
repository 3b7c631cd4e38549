// Tests for fast::round_to_digits (kernels.h, "decimal rounding"): values
// worked out by hand, then random values of every magnitude against the
// route it replaces, printing with "%.*e" and reading back with strtod.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>

#include "check.h"
#include "glassllm/fast/kernels.h"

using glassllm::fast::round_to_digits;

namespace {

double through_text(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*e", digits - 1, v);
  return std::strtod(buf, nullptr);
}

}  // namespace

TEST_CASE("round_to_digits: by hand") {
  CHECK(round_to_digits(1234.5678, 3) == 1230.0);
  CHECK(round_to_digits(1234.5678, 6) == 1234.57);
  CHECK(round_to_digits(-1234.5678, 1) == -1000.0);
  CHECK(round_to_digits(0.00012345, 2) == 0.00012);
  CHECK(round_to_digits(6.02214076e23, 4) == 6.022e23);  // beyond 10^22: the text route
  CHECK(round_to_digits(1.6021e-30, 2) == 1.6e-30);
  // Rounding up into the next power of ten: 999.6 -> 1000, so 9.996 -> 10.
  CHECK(round_to_digits(9.996, 3) == 10.0);
  CHECK(round_to_digits(-999.96, 4) == -1000.0);
  // Exact halves (0.125 and 0.375 are exact doubles): ties go to even, as printf does.
  CHECK(round_to_digits(0.125, 2) == 0.12);
  CHECK(round_to_digits(0.375, 2) == 0.38);
  CHECK(round_to_digits(2.5, 1) == 2.0);
  CHECK(round_to_digits(3.5, 1) == 4.0);
  // Right next to a power of ten, where log10 alone could be one off.
  CHECK(round_to_digits(std::nextafter(1000.0, 0.0), 3) == 1000.0);
  CHECK(round_to_digits(std::nextafter(1000.0, 2000.0), 3) == 1000.0);
  CHECK(round_to_digits(std::nextafter(0.001, 0.0), 2) == 0.001);
  // 17 digits give back every double; nothing to round.
  CHECK(round_to_digits(0.1 + 0.2, 17) == 0.1 + 0.2);
  CHECK(round_to_digits(0.1 + 0.2, 16) == 0.3);
  // Left as they are.
  CHECK(std::isnan(round_to_digits(std::nan(""), 4)));
  CHECK(round_to_digits(-std::numeric_limits<double>::infinity(), 4) ==
        -std::numeric_limits<double>::infinity());
  CHECK(round_to_digits(0.0, 4) == 0.0);
  CHECK(std::signbit(round_to_digits(-0.0, 4)));
  CHECK(round_to_digits(std::numeric_limits<double>::denorm_min(), 3) ==
        through_text(std::numeric_limits<double>::denorm_min(), 3));
}

TEST_CASE("round_to_digits: random values against printing and reading back") {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> mantissa(-10.0, 10.0);
  std::uniform_int_distribution<int> exponent(-30, 30), digit_count(1, 16);
  const int n = 200000;
  int differ = 0;
  for (int i = 0; i < n; ++i) {
    const double v = mantissa(rng) * std::pow(10.0, exponent(rng));
    const int digits = digit_count(rng);
    const double got = round_to_digits(v, digits), want = through_text(v, digits);
    if (got == want) continue;
    ++differ;
    // Where they differ, v must sit on a halfway point to within a few of
    // its last bits, and the two answers be neighbouring decimals.
    const double unit = std::fabs(want - got);
    const double halfway = (want + got) / 2;
    CHECK(std::fabs(v - halfway) <=
          4 * std::numeric_limits<double>::epsilon() * std::fabs(v));
    const double smaller = std::min(std::fabs(want), std::fabs(got));
    CHECK(unit <= 1.01 * std::pow(10.0, std::floor(std::log10(smaller)) - digits + 1));
  }
  // Random values hit a halfway point to within a few bits very seldom.
  CHECK(differ <= n / 10000);
}

TEST_CASE("round_to_digits: float32 trace values give the same float32 as the text") {
  // The tracer stores float32 traces' values rounded and then as float32.
  std::mt19937 rng(11);
  std::normal_distribution<float> value(0.0f, 3.0f);
  int differ = 0;
  for (int i = 0; i < 100000; ++i) {
    const double v = value(rng);
    for (int digits : {3, 4, 6, 8})
      differ += float(round_to_digits(v, digits)) != float(through_text(v, digits));
  }
  CHECK(differ <= 4);
}
