// numbers.cpp: parsing numeric command-line values (numbers.h).
#include "cli/numbers.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace glassllm::cli {

namespace {

// The value as the user typed it, quoted, cut short and with control
// characters shown as '?', so the message stays one printable line.
std::string quoted(std::string_view text) {
  std::string out = "'";
  for (std::size_t i = 0; i < text.size() && i < 40; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    out += c < 0x20 || c == 0x7f ? '?' : char(c);
  }
  return out + (text.size() > 40 ? "...'" : "'");
}

std::string real_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

std::string whole_text(std::uint64_t v) {
  if (v == std::numeric_limits<std::uint64_t>::max()) return "2^64 - 1";
  if (v == std::uint64_t(1) << 31) return "2^31";
  return std::to_string(v);
}

std::uint64_t parse_whole(std::string_view text, const std::string& option,
                          std::uint64_t min, std::uint64_t max) {
  const std::string allowed =
      "expected a whole number from " + whole_text(min) + " to " + whole_text(max);
  auto fail = [&](const std::string& why) {
    return std::invalid_argument(option + ": " + quoted(text) + " " + why + "; " +
                                 allowed);
  };
  std::string_view digits = text;
  if (!digits.empty() && digits[0] == '+') digits.remove_prefix(1);
  if (text.empty()) throw fail("is empty");
  if (text[0] == '-') throw fail("is negative");
  for (char c : digits)
    if (c < '0' || c > '9') throw fail("is not a whole number");
  if (digits.empty()) throw fail("is not a whole number");
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec == std::errc::result_out_of_range) throw fail("is too large");
  if (ec != std::errc() || end != digits.data() + digits.size())
    throw fail("is not a whole number");
  if (v < min) throw fail("is too small");
  if (v > max) throw fail("is too large");
  return v;
}

std::string RealRange::describe() const {
  if (min_excluded) return "a number > " + real_text(min) + " and <= " + real_text(max);
  return "a number from " + real_text(min) + " to " + real_text(max);
}

double parse_real(std::string_view text, const std::string& option, RealRange range) {
  auto fail = [&](const std::string& why) {
    return std::invalid_argument(option + ": " + quoted(text) + " " + why +
                                 "; expected " + range.describe());
  };
  if (text.empty()) throw fail("is empty");
  std::string_view body = text;
  if (body[0] == '+') body.remove_prefix(1);  // from_chars takes '-' but not '+'
  double v = 0;
  auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), v);
  if (ec == std::errc::result_out_of_range) throw fail("is out of range");
  if (ec != std::errc() || end != body.data() + body.size() || body.empty() ||
      body[0] == '+' || body[0] == ' ')
    throw fail("is not a number");
  if (!std::isfinite(v)) throw fail("is not a finite number");
  if (v < 0 && range.min >= 0) throw fail("is negative");
  if (v < range.min || (range.min_excluded && v == range.min) || v > range.max)
    throw fail("is out of range");
  return v;
}

}  // namespace glassllm::cli
