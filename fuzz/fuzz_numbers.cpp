// fuzz_numbers.cpp: a libFuzzer target for the command line's number parsing
// (cli/numbers.h) and for printable() (files.h), which every error message
// goes through. parse_whole and parse_real may reject a value only with
// std::invalid_argument, whose message must be one line naming the option;
// a value they accept must lie in the range asked for (and, for whole
// numbers, read back as the same digits). Run with fuzz/run.sh; corpus:
// tests/data/fuzz/numbers/.
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "cli/numbers.h"
#include "glassllm/io/files.h"

using namespace glassllm;

namespace {

void check_message(const std::invalid_argument& e, const std::string& option) {
  const std::string m = e.what();
  if (m.rfind(option + ": ", 0) != 0) __builtin_trap();
  for (char c : m)
    if (c == '\n' || c == '\r' || c == '\x1b') __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);

  // Whole numbers, over the ranges the command line uses.
  const std::uint64_t ranges[][2] = {{0, std::numeric_limits<std::uint64_t>::max()},
                                     {1, std::uint64_t(1) << 31},
                                     {0, 17},
                                     {1, 1024}};
  for (const auto& r : ranges) {
    try {
      const std::uint64_t v = cli::parse_whole(text, "--n", r[0], r[1]);
      if (v < r[0] || v > r[1]) __builtin_trap();
      // The digits typed, without a '+' and leading zeros, are the value.
      std::string digits = text.substr(text[0] == '+' ? 1 : 0);
      digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size() - 1));
      if (digits != std::to_string(v)) __builtin_trap();
    } catch (const std::invalid_argument& e) {
      check_message(e, "--n");
    }
  }

  // Real numbers, with and without an excluded minimum.
  const cli::RealRange real_ranges[] = {{0, 1000, true}, {0, 1}, {-1e30, 1e30}};
  for (const auto& r : real_ranges) {
    try {
      const double v = cli::parse_real(text, "--x", r);
      if (!std::isfinite(v) || v < r.min || v > r.max || (r.min_excluded && v == r.min))
        __builtin_trap();
    } catch (const std::invalid_argument& e) {
      check_message(e, "--x");
    }
  }

  // printable(): no control character survives, nothing is lost (every byte
  // is kept or becomes a 4-character escape), and its output is UTF-8.
  const std::string shown = printable(text);
  for (std::size_t i = 0; i < shown.size();) {
    const std::size_t len = utf8_length(shown, i);
    if (len == 0) __builtin_trap();
    const auto c = static_cast<unsigned char>(shown[i]);
    if (c < 0x20 || c == 0x7f) __builtin_trap();
    i += len;
  }
  if (shown.size() < size || shown.size() > 4 * size) __builtin_trap();
  return 0;
}
