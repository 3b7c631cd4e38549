// options.h (private): registering numeric options with CLI11 so that every
// value goes through numbers.h when it is parsed. A bad value stops the
// parse with CLI::ValidationError carrying numbers.h's one-line message;
// main.cpp prints it and exits with status 2.
//   add_whole(sub, "--steps", a->steps, "Decode steps", 0, 100000);
//   add_real(sub, "--lr", a->lr, "Peak learning rate", {0, 1000, true});
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <stdexcept>
#include <string>

#include "cli/numbers.h"

namespace glassllm::cli {

/// The largest size GlassLM accepts anywhere (config.json's limit too); real
/// limits come from the memory estimates (budget.h), checked before work.
inline constexpr std::uint64_t kMaxSize = std::uint64_t(1) << 31;
/// Tokens one generate may produce (a window reset every max_len tokens keeps
/// each step's cost bounded; this bounds the time).
inline constexpr std::uint64_t kMaxNewTokens = 1'000'000;
/// Optimizer steps, and the intervals counted in them.
inline constexpr std::uint64_t kMaxSteps = 1'000'000'000;
/// BLAS threads (OpenBLAS itself stops far lower).
inline constexpr std::uint64_t kMaxThreads = 1024;

namespace detail {

template <class T>
T& target(T& value) {
  return value;
}
template <class T>
T& target(std::optional<T>& value) {
  return value.emplace();
}
template <class T>
std::string shown(const T& value) {
  if constexpr (std::is_floating_point_v<T>) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", double(value));
    return buf;
  } else {
    return std::to_string(value);
  }
}
template <class T>
std::string shown(const std::optional<T>&) {
  return "";  // no default: the help text says what happens without it
}

}  // namespace detail

/// A whole-number option in [min, max]; `value` is an unsigned or int field,
/// or a std::optional of one (set only when the option is given).
template <class V>
CLI::Option* add_whole(CLI::App* app, const std::string& name, V& value,
                       const std::string& help, std::uint64_t min, std::uint64_t max) {
  CLI::Option* opt = app->add_option_function<std::string>(
      name,
      [&value, name, min, max](const std::string& text) {
        try {
          auto& out = detail::target(value);
          out = static_cast<std::remove_reference_t<decltype(out)>>(
              parse_whole(text, name, min, max));
        } catch (const std::invalid_argument& e) {
          throw CLI::ValidationError(e.what());
        }
      },
      help);
  opt->type_name("INT");
  if (std::string d = detail::shown(value); !d.empty()) opt->default_str(d);
  return opt;
}

/// A real-valued option inside `range` (finite, never nan).
template <class V>
CLI::Option* add_real(CLI::App* app, const std::string& name, V& value,
                      const std::string& help, RealRange range) {
  CLI::Option* opt = app->add_option_function<std::string>(
      name,
      [&value, name, range](const std::string& text) {
        try {
          detail::target(value) = parse_real(text, name, range);
        } catch (const std::invalid_argument& e) {
          throw CLI::ValidationError(e.what());
        }
      },
      help);
  opt->type_name("NUMBER");
  if (std::string d = detail::shown(value); !d.empty()) opt->default_str(d);
  return opt;
}

}  // namespace glassllm::cli
