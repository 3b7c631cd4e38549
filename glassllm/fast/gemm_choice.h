// gemm_choice.h (private): which code computes each kind of matrix product,
// the backend's library or GlassLM's built-in GEMM (gemm_builtin.cpp),
// chosen by timing both on the default model's shapes (gemm_choice.cpp says
// how and why). blas.cpp asks path() for every product it passes on (and
// parse_mode() for check_gemm_variable(), which the tool calls before any
// command runs); the benchmark and the tests force one path or the other.
// Standard headers only.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace glassllm::gemm_choice {

/// Who computes a product: backend::gemm (the library) or builtin_gemm.
enum class Path { library, builtin };

/// A product's kind, by its transposes: A B (nn), A B^T (nt), A^T B (tn).
/// A^T B^T, which nothing in GlassLM runs, goes with nn.
enum class Kind { nn, nt, tn };
inline constexpr std::size_t kKinds = 3;
Kind kind_of(bool trans_a, bool trans_b);
const char* kind_name(Kind kind);  // "NN", "NT", "TN"
const char* path_name(Path path);  // "library", "builtin"

/// A product's size: small below kSmallProduct multiply-adds (M * N * K),
/// large from there. At the default model's sizes attention's per-head
/// products (128 x 128 x 32) are small and a linear layer's tasks (512 x
/// 384 x 128) large. Each code has its own fixed cost per product, so the
/// faster one on large products can be the slower on small ones: each size
/// is chosen on its own.
enum class Size { small, large };
inline constexpr std::size_t kSizes = 2;
inline constexpr double kSmallProduct = 2097152;  // 2^21
Size size_of(std::size_t M, std::size_t N, std::size_t K);
const char* size_name(Size size);  // "small", "large"

/// What the environment variable GLASSLLM_GEMM asks for: nothing (unset:
/// the measured choice, cached), library, builtin, or measure (time again,
/// ignoring the cache, and cache the new result).
enum class Mode { automatic, library, builtin, measure };

/// GLASSLLM_GEMM's value (nullptr when unset) as a Mode. Throws
/// std::invalid_argument naming the variable, the value and the allowed
/// values for anything else.
Mode parse_mode(const char* value);

/// The decision rule, on times taken in pairs (run i of each path one right
/// after the other, so that both see the same load of a shared machine):
/// builtin when the median of builtin_seconds[i] / library_seconds[i] is
/// below 1, else the library. Throws std::invalid_argument unless both
/// lists have the same, non-zero length.
Path decide(const std::vector<double>& library_seconds,
            const std::vector<double>& builtin_seconds);

/// One kind's choice, with the medians it was made from (0 when not measured).
struct KindChoice {
  Path path = Path::library;
  double library_ms = 0, builtin_ms = 0;
};

/// Every kind's choice for float32 ([0]) and float64 ([1]), for each size:
/// kinds[dtype][kind][size].
struct Choice {
  std::array<std::array<std::array<KindChoice, kSizes>, kKinds>, 2> kinds{};
  /// Where it came from: "measured", "cached", "GLASSLLM_GEMM=library", ...
  std::string source;
  double measure_ms = 0;  ///< what measuring cost this process (0: not measured)
};

/// "float32: NN builtin, NT builtin, TN library (small: NN library, NT
/// builtin, TN library); float64: ... (measured)".
std::string describe(const Choice& choice);

// ---- the cache file ---------------------------------------------------------------

/// What a cached choice is valid for: this CPU, the backend's library and
/// kernels, how the built-in GEMM was compiled, GlassLM's version and the
/// file's format. One line.
std::string cache_key();

/// The CPU as the key names it, from /proc/cpuinfo's text: the first
/// processor's model name (else "unknown") and, when given, its family,
/// model and stepping ("<model name> (family F model M stepping S)"):
/// virtual machines may give two generations of CPU the same model name.
std::string cpu_identity(const std::string& cpuinfo);

/// $XDG_CACHE_HOME/glassllm/gemm-choice.txt, else
/// $HOME/.cache/glassllm/gemm-choice.txt; empty when neither is set.
std::string cache_path();

/// The file's text for a choice made under `key`.
std::string format_cache(const std::string& key, const Choice& choice);

/// A choice read back from the file's text; nullopt when the text was
/// written under another key (`damaged` false) or cannot be read as the
/// format (`damaged` true).
std::optional<Choice> parse_cache(const std::string& text, const std::string& key,
                                  bool& damaged);

/// Writes `text` to `path` through a temporary file in the same folder,
/// creating the folder (and its parent) when missing. replace: rename over
/// whatever is there; else link, which leaves a file another process wrote
/// in the meantime (then false is returned and that file should be read).
/// False too when the folder cannot be written; never throws.
bool write_cache(const std::string& path, const std::string& text, bool replace);

// ---- the choice in use ---------------------------------------------------------

/// The choice of this process, made on first use (thread-safe): from
/// GLASSLLM_GEMM, else the cache file, else measured (and cached). With the
/// builtin backend, or a backend that spreads products over threads of its
/// own (system), every product goes to the backend and nothing is measured.
/// Throws std::invalid_argument for a bad GLASSLLM_GEMM.
const Choice& current();

/// describe(current()) when the choice has been made, else a line saying it
/// will be made on the first product; measures nothing.
std::string describe_current();

/// The path for a product of T (float or double) of this kind and size
/// (op(A) M x K, op(B) K x N): forced(), if set, else current()'s.
template <class T>
Path path(bool trans_a, bool trans_b, std::size_t M, std::size_t N, std::size_t K);

/// Makes every product take `path` (nullopt: the choice again), for the
/// benchmark and the tests; thread-safe, but meant to be set between
/// products.
void force(std::optional<Path> path);
std::optional<Path> forced();

}  // namespace glassllm::gemm_choice
