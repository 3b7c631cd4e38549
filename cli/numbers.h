// numbers.h (private): the one place the command line turns text into
// numbers. Every numeric option goes through these (cli/options.h registers
// them with CLI11), so each rejects, when it is parsed and before any work,
// what a careless or hostile user may type: "-1" for a count (which a plain
// conversion to an unsigned type wraps to 2^64 - 1), "nan", "inf", "1e999",
// "12abc", " 5", "0x10", and values outside the option's range. The errors
// name the option, the value and what is allowed, on one line:
//   --max-new-tokens: '-1' is negative; expected a whole number from 0 to 1000000
//   --lr: 'nan' is not a finite number; expected a number > 0 and <= 1000
// Standard headers only, so the fuzz target fuzz/fuzz_numbers.cpp links it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace glassllm::cli {

/// A whole number in [min, max], written in decimal digits (an optional
/// leading '+'; no sign, spaces, exponent or other base). Throws
/// std::invalid_argument as above.
std::uint64_t parse_whole(std::string_view text, const std::string& option,
                          std::uint64_t min, std::uint64_t max);

/// The allowed values of a real-valued option: [min, max], with min itself
/// excluded when min_excluded (e.g. a learning rate: > 0).
struct RealRange {
  double min, max;
  bool min_excluded = false;
  /// "a number > 0 and <= 1000", "a number from 0 to 1"
  std::string describe() const;
};

/// A finite decimal number (std::from_chars syntax: 1, 0.5, 1e-3, -2) inside
/// `range`. Throws std::invalid_argument as above.
double parse_real(std::string_view text, const std::string& option, RealRange range);

/// "1000000" -> "1,000,000"-free plain text for messages: 2^64 - 1 prints as
/// "2^64 - 1", 2^31 as "2^31", others in decimal.
std::string whole_text(std::uint64_t v);

}  // namespace glassllm::cli
