// decimal.cpp: round_to_digits (kernels.h, "decimal rounding"). Speed only:
// the tracer's rounding means "print with %.*g, read back"; this gets the
// same double without the text.
//
// v * 10^shift puts the digits to keep before the decimal point; nearbyint
// drops the rest (to nearest, ties to even, as printf rounds); dividing by
// 10^shift again is one correctly rounded operation on two exact numbers,
// which is what strtod does with the printed text. The powers of ten up to
// 10^22 are exact doubles, so only the first product can round: it moves the
// result only when v sits within one unit of its last bit of a halfway
// point. Beyond 10^22 (values below about 1e-22 or above 1e22 at common
// digit counts) the text route is taken.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "glassllm/fast/kernels.h"

namespace glassllm::fast {

namespace {

constexpr int kMaxExactPower = 22, kMaxFastDigits = 12;

constexpr double kPowersOfTen[kMaxExactPower + 1] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

double round_as_text(double v, int digits) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.*e", digits - 1, v);
  return std::strtod(buf, nullptr);
}

}  // namespace

double round_to_digits(double v, int digits) {
  // 17 significant digits give back every double: nothing to round.
  if (!std::isfinite(v) || v == 0 || digits >= 17) return v;
  digits = std::max(digits, 1);
  // With more digits the scaled value's own rounding error (up to half a
  // unit of its last bit) comes close to the digit kept, and more values
  // near a halfway point would land on the wrong side: printed instead.
  if (digits > kMaxFastDigits) return round_as_text(v, digits);
  const double a = std::fabs(v);
  // The exponent of v's leading digit. log10 may land one off next to a
  // power of ten (999.99... or 1000.0...01), so the scaled value is checked
  // to have `digits` digits before the point, and the exponent corrected.
  int lead = int(std::floor(std::log10(a)));
  for (int attempt = 0; attempt < 3; ++attempt) {
    const int shift = digits - 1 - lead;
    if (shift > kMaxExactPower || shift < -kMaxExactPower) break;
    const double scaled = shift >= 0 ? a * kPowersOfTen[shift] : a / kPowersOfTen[-shift];
    if (scaled < kPowersOfTen[digits - 1]) {
      --lead;
      continue;
    }
    if (scaled >= kPowersOfTen[digits]) {
      ++lead;
      continue;
    }
    // 9.996 to 3 digits: 999.6 rounds to 1000, and 1000 / 100 = 10, as printed.
    const double kept = std::copysign(std::nearbyint(scaled), v);
    return shift >= 0 ? kept / kPowersOfTen[shift] : kept * kPowersOfTen[-shift];
  }
  return round_as_text(v, digits);
}

}  // namespace glassllm::fast
