// Tests for the choice between the library's GEMM and the built-in one
// (glassllm/fast/gemm_choice.cpp): the decision rule on hand-made timings,
// GLASSLLM_GEMM's values, the cache file (written, read back, ignored when
// made under another key or damaged, written atomically), and products
// through gemm() on either path against sums computed here in long double.
// Which path is faster is measured, never asserted.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "glassllm/fast/blas.h"
#include "glassllm/fast/blas_internal.h"
#include "glassllm/fast/gemm_choice.h"

using namespace glassllm;
using gemm_choice::Choice;
using gemm_choice::Kind;
using gemm_choice::Mode;
using gemm_choice::Path;
using gemm_choice::Size;

namespace {

#ifdef GLASSLLM_TEST_CACHE
// The test programs cache their choice in the build folder, never in the
// user's own cache, however they are started (CTest or by hand). Set before
// main(), so before any product.
const bool gemm_cache_in_build_folder = [] {
  setenv("XDG_CACHE_HOME", GLASSLLM_TEST_CACHE, 1);
  return true;
}();
#endif

// Sets an environment variable (nullptr: unsets it) until the end of the scope.
struct EnvForScope {
  std::string name;
  std::optional<std::string> previous;
  EnvForScope(const char* n, const char* value) : name(n) {
    if (const char* old = std::getenv(n)) previous = old;
    if (value)
      setenv(n, value, 1);
    else
      unsetenv(n);
  }
  ~EnvForScope() {
    if (previous)
      setenv(name.c_str(), previous->c_str(), 1);
    else
      unsetenv(name.c_str());
  }
};

// Forces every product onto one path until the end of the scope.
struct ForcedForScope {
  explicit ForcedForScope(std::optional<Path> p) { gemm_choice::force(p); }
  ~ForcedForScope() { gemm_choice::force(std::nullopt); }
};

// A new empty folder under /tmp, removed (with what the tests put in it) at
// the end of the scope.
struct TempFolder {
  std::string path;
  TempFolder() {
    char name[] = "/tmp/glassllm-gemm-choice-XXXXXX";
    REQUIRE(mkdtemp(name) != nullptr);
    path = name;
  }
  ~TempFolder() { std::filesystem::remove_all(path); }
};

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// A choice with every kind's path and figures written out: [dtype][kind]
// {small, large}.
Choice sample_choice() {
  Choice c;
  c.kinds[0] = {{{{{Path::library, 0.5, 0.75}, {Path::builtin, 2.5, 2.0}}},
                 {{{Path::library, 0.25, 0.5}, {Path::builtin, 1.25, 1.0}}},
                 {{{Path::builtin, 0.75, 0.5}, {Path::library, 3.0, 3.5}}}}};
  c.kinds[1] = {{{{{Path::library, 1.0, 1.5}, {Path::library, 4.0, 4.5}}},
                 {{{Path::builtin, 1.5, 1.25}, {Path::builtin, 5.0, 4.0}}},
                 {{{Path::library, 1.75, 2.0}, {Path::library, 6.0, 6.25}}}}};
  c.source = "measured";
  return c;
}

const char* const kSampleText =
    "glassllm-gemm-choice\n"
    "key format 2; a test machine\n"
    "float32 NN small library 0.5000 0.7500\n"
    "float32 NN large builtin 2.5000 2.0000\n"
    "float32 NT small library 0.2500 0.5000\n"
    "float32 NT large builtin 1.2500 1.0000\n"
    "float32 TN small builtin 0.7500 0.5000\n"
    "float32 TN large library 3.0000 3.5000\n"
    "float64 NN small library 1.0000 1.5000\n"
    "float64 NN large library 4.0000 4.5000\n"
    "float64 NT small builtin 1.5000 1.2500\n"
    "float64 NT large builtin 5.0000 4.0000\n"
    "float64 TN small library 1.7500 2.0000\n"
    "float64 TN large library 6.0000 6.2500\n";

}  // namespace

TEST_CASE("gemm choice: the faster in the median pair wins, the library on a tie") {
  // Ratios builtin / library: 0.5, 1.6, 4.5; the median pair favours the library,
  // although the builtin's median time (1.6) is below the library's (2).
  CHECK(gemm_choice::decide({3, 1, 2}, {1.5, 1.6, 9}) == Path::library);
  // Ratios 2, 0.625, 0.222: the builtin.
  CHECK(gemm_choice::decide({1.5, 1.6, 9}, {3, 1, 2}) == Path::builtin);
  // The load moved between pairs (times 10 in the middle): each pair still
  // sees the builtin 20 % faster.
  CHECK(gemm_choice::decide({1, 10, 1}, {0.8, 8, 0.8}) == Path::builtin);
  // One slow run (another program took the core) does not decide: ratios
  // 0.5, 0.5, 50, 0.5, 50.
  CHECK(gemm_choice::decide({2, 2, 2, 2, 2}, {1, 1, 100, 1, 100}) == Path::builtin);
  // Ratios 1.5, 0.03, 1.5, 0.03, 1.5: the library.
  CHECK(gemm_choice::decide({2, 100, 2, 100, 2}, {3, 3, 3, 3, 3}) == Path::library);
  // A median ratio of exactly 1: the library stays.
  CHECK(gemm_choice::decide({1, 2, 3}, {2, 2, 2}) == Path::library);
  // An even count: the upper of the two middle ratios (0.5, 0.6, 0.9, 1.2 -> 0.9).
  CHECK(gemm_choice::decide({2, 1, 1, 1}, {1, 0.6, 0.9, 1.2}) == Path::builtin);
  CHECK_THROWS_AS(gemm_choice::decide({}, {}), std::invalid_argument);
  CHECK_THROWS_AS(gemm_choice::decide({1, 2}, {1}), std::invalid_argument);
}

TEST_CASE("gemm choice: small and large products") {
  // Attention's per-head product at the default model's size, and a linear
  // layer's task: 2^19 and 25,165,824 multiply-adds either side of 2^21.
  CHECK(gemm_choice::size_of(128, 128, 32) == Size::small);
  CHECK(gemm_choice::size_of(512, 384, 128) == Size::large);
  CHECK(gemm_choice::size_of(128, 128, 127) == Size::small);  // 2,080,768
  CHECK(gemm_choice::size_of(128, 128, 128) == Size::large);  // 2^21 exactly
  // No overflow: sizes whose product does not fit in 64 bits.
  CHECK(gemm_choice::size_of(std::size_t(1) << 40, std::size_t(1) << 40, 2) ==
        Size::large);
  CHECK(std::string(gemm_choice::size_name(Size::small)) == "small");
  CHECK(std::string(gemm_choice::size_name(Size::large)) == "large");
}

TEST_CASE("gemm choice: kinds by transposes") {
  CHECK(gemm_choice::kind_of(false, false) == Kind::nn);
  CHECK(gemm_choice::kind_of(false, true) == Kind::nt);
  CHECK(gemm_choice::kind_of(true, false) == Kind::tn);
  CHECK(gemm_choice::kind_of(true, true) == Kind::nn);  // rare: goes with NN
  CHECK(std::string(gemm_choice::kind_name(Kind::tn)) == "TN");
}

TEST_CASE("GLASSLLM_GEMM: library, builtin, measure, or a one-line error") {
  CHECK(gemm_choice::parse_mode(nullptr) == Mode::automatic);
  CHECK(gemm_choice::parse_mode("library") == Mode::library);
  CHECK(gemm_choice::parse_mode("builtin") == Mode::builtin);
  CHECK(gemm_choice::parse_mode("measure") == Mode::measure);
  for (const char* bad : {"fast", "", "Library", "builtin ", "openblas"}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH_AS(gemm_choice::parse_mode(bad),
                         (std::string("blas: GLASSLLM_GEMM='") + bad +
                          "' is not a GEMM choice (library, builtin or measure)")
                             .c_str(),
                         std::invalid_argument);
  }
}

TEST_CASE("gemm choice cache: the file's text, read back under its key only") {
  const std::string key = "format 2; a test machine";
  CHECK(gemm_choice::format_cache(key, sample_choice()) == kSampleText);
  bool damaged = true;
  std::optional<Choice> back = gemm_choice::parse_cache(kSampleText, key, damaged);
  REQUIRE(back);
  CHECK_FALSE(damaged);
  // [dtype][kind][small, large], as in kSampleText.
  const Path L = Path::library, B = Path::builtin;
  const Path expected[2][3][2] = {{{L, B}, {L, B}, {B, L}}, {{L, L}, {B, B}, {L, L}}};
  for (std::size_t d = 0; d < 2; ++d)
    for (std::size_t k = 0; k < 3; ++k)
      for (std::size_t z = 0; z < 2; ++z) {
        CAPTURE(d);
        CAPTURE(k);
        CAPTURE(z);
        CHECK(back->kinds[d][k][z].path == expected[d][k][z]);
      }
  CHECK(back->kinds[1][2][1].builtin_ms == 6.25);
  CHECK(back->kinds[0][1][1].library_ms == 1.25);
  CHECK(back->kinds[0][2][0].builtin_ms == 0.5);

  // Another machine or build: ignored, but not damaged.
  CHECK_FALSE(
      gemm_choice::parse_cache(kSampleText, "format 2; another machine", damaged));
  CHECK_FALSE(damaged);

  // Damaged: each of these is refused, and said to be damaged.
  const std::string good = kSampleText;
  const std::string damaged_texts[] = {
      "",
      "not a cache file\n",
      good.substr(0, good.size() - 10),                   // cut short
      good.substr(0, good.find("float64 TN")),            // a kind missing
      good.substr(0, good.rfind("float64 TN large")),     // a size missing
      good + "float64 TN large library 6.0000 6.2500\n",  // a kind and size twice
      std::string(good).replace(good.find("NT large builtin"), 16, "NT large fastest"),
      std::string(good).replace(good.find("NT large"), 8, "NT huge "),
      std::string(good).replace(good.find("float32 NN"), 10, "float16 NN"),
      std::string(good).replace(good.find("2.0000"), 6, "-2.000"),
      std::string(good).replace(good.find("2.0000"), 6, "nan   "),
      good + "float32 NN large builtin 1 2 extra\n",
      // The format before sizes: a line without one.
      good + "float32 NN builtin 2.5000 2.0000\n",
      "glassllm-gemm-choice\nno key line\n",
  };
  for (const std::string& text : damaged_texts) {
    CAPTURE(text);
    damaged = false;
    CHECK_FALSE(gemm_choice::parse_cache(text, key, damaged));
    CHECK(damaged);
  }
}

TEST_CASE("gemm choice cache: the key is one line naming the CPU and the format") {
  const std::string key = gemm_choice::cache_key();
  CHECK(key.find('\n') == std::string::npos);
  CHECK(key.rfind("format ", 0) == 0);
  CHECK(key.find("; cpu ") != std::string::npos);
  CHECK(key.find(blas_info().backend) != std::string::npos);
}

TEST_CASE("gemm choice cache: the CPU named by model name, family, model, stepping") {
  // The first lines of /proc/cpuinfo on two generations of CPU that a
  // virtual machine names alike, the older one with a second processor
  // block that must not count.
  const std::string older =
      "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\n"
      "model\t\t: 1\nmodel name\t: AMD EPYC\nstepping\t: 1\n\n"
      "processor\t: 1\ncpu family\t: 99\nmodel\t\t: 99\n";
  const std::string newer =
      "processor\t: 0\ncpu family\t: 26\nmodel\t\t: 2\n"
      "model name\t: AMD EPYC\nstepping\t: 1\n";
  CHECK(gemm_choice::cpu_identity(older) == "AMD EPYC (family 25 model 1 stepping 1)");
  CHECK(gemm_choice::cpu_identity(newer) == "AMD EPYC (family 26 model 2 stepping 1)");
  // Only a model name (other systems' fields), or nothing at all.
  CHECK(gemm_choice::cpu_identity("model name : Some CPU\n") == "Some CPU");
  CHECK(gemm_choice::cpu_identity("") == "unknown");
  CHECK(gemm_choice::cpu_identity("cpu family : 6\n") ==
        "unknown (family 6 model ? stepping ?)");
}

TEST_CASE("gemm choice cache: where the file goes") {
  {
    EnvForScope xdg("XDG_CACHE_HOME", "/somewhere/cache");
    CHECK(gemm_choice::cache_path() == "/somewhere/cache/glassllm/gemm-choice.txt");
  }
  EnvForScope home("HOME", "/home/someone");
  {
    EnvForScope xdg("XDG_CACHE_HOME", nullptr);
    CHECK(gemm_choice::cache_path() == "/home/someone/.cache/glassllm/gemm-choice.txt");
  }
  {
    // A relative XDG_CACHE_HOME is ignored, as the XDG rules say.
    EnvForScope xdg("XDG_CACHE_HOME", "relative/cache");
    CHECK(gemm_choice::cache_path() == "/home/someone/.cache/glassllm/gemm-choice.txt");
  }
  EnvForScope xdg("XDG_CACHE_HOME", nullptr);
  EnvForScope no_home("HOME", nullptr);
  CHECK(gemm_choice::cache_path().empty());
}

TEST_CASE(
    "gemm choice cache: written atomically, the first writer wins unless replacing") {
  TempFolder tmp;
  // The folder and its parent are made when missing.
  const std::string file = tmp.path + "/cache/glassllm/gemm-choice.txt";
  CHECK(gemm_choice::write_cache(file, "first\n", false));
  CHECK(read(file) == "first\n");
  // Another process wrote first: the file stays as it is.
  CHECK_FALSE(gemm_choice::write_cache(file, "second\n", false));
  CHECK(read(file) == "first\n");
  // Replacing (a damaged file, another key, GLASSLLM_GEMM=measure).
  CHECK(gemm_choice::write_cache(file, "third\n", true));
  CHECK(read(file) == "third\n");
  // No temporary file is left behind.
  const std::string temp = file + ".tmp-" + std::to_string(getpid());
  CHECK_FALSE(exists(temp));
  // A folder that cannot be made: false, nothing thrown.
  CHECK_FALSE(gemm_choice::write_cache("/dev/null/glassllm/gemm-choice.txt", "x", false));
  CHECK_FALSE(gemm_choice::write_cache("/dev/null/glassllm/gemm-choice.txt", "x", true));
  CHECK_FALSE(gemm_choice::write_cache("no-folder.txt", "x", true));
}

namespace {

template <class T>
std::vector<T> random_values(std::size_t n, unsigned seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<T> v(n);
  for (T& x : v) x = T(dist(engine));
  return v;
}

// gemm() against a long-double loop, with alpha and beta, on the library's
// path, the built-in GEMM's and the chosen one (gemm_choice::force).
template <class T>
void check_product(bool ta, bool tb, std::size_t M, std::size_t N, std::size_t K) {
  CAPTURE(ta);
  CAPTURE(tb);
  CAPTURE(M);
  CAPTURE(N);
  CAPTURE(K);
  const std::size_t lda = (ta ? M : K) + 1, ldb = (tb ? K : N) + 2, ldc = N + 3;
  const auto A = random_values<T>((ta ? K : M) * lda, 1);
  const auto B = random_values<T>((tb ? N : K) * ldb, 2);
  const auto C0 = random_values<T>(M * ldc, 3);
  const T alpha = T(0.75), beta = T(-0.5);
  std::vector<long double> want(M * N);
  for (std::size_t i = 0; i < M; ++i)
    for (std::size_t j = 0; j < N; ++j) {
      long double sum = 0;
      for (std::size_t k = 0; k < K; ++k) {
        const long double a = ta ? A[k * lda + i] : A[i * lda + k];
        const long double b = tb ? B[j * ldb + k] : B[k * ldb + j];
        sum += a * b;
      }
      want[i * N + j] = alpha * sum + beta * (long double)C0[i * ldc + j];
    }
  const double eps = sizeof(T) == 4 ? 1.2e-7 : 2.3e-16;
  const double tol = 4.0 * eps * double(K + 2);
  for (std::optional<Path> p :
       {std::optional<Path>(Path::library), std::optional<Path>(Path::builtin),
        std::optional<Path>()}) {
    CAPTURE(p ? gemm_choice::path_name(*p) : "chosen");
    ForcedForScope force(p);
    CHECK(gemm_choice::forced() == p);
    auto C = C0;
    gemm<T>(ta, tb, M, N, K, alpha, A.data(), lda, B.data(), ldb, beta, C.data(), ldc);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < M; ++i)
      for (std::size_t j = 0; j < N; ++j)
        if (std::fabs(double(C[i * ldc + j] - want[i * N + j])) > tol) ++wrong;
    CHECK(wrong == 0);
  }
  CHECK_FALSE(gemm_choice::forced());
}

}  // namespace

TEST_CASE("gemm(): right on the library's path, the built-in one and the chosen one") {
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (bool dbl : {false, true}) {
        auto check = dbl ? check_product<double> : check_product<float>;
        check(ta, tb, 70, 45, 300);   // one task
        check(ta, tb, 600, 100, 64);  // tasks over C's rows
        check(ta, tb, 20, 2000, 64);  // tasks over C's columns
        check(ta, tb, 40, 36, 2048);  // tasks over the sum
      }
}

TEST_CASE(
    "gemm choice: made once, cached outside the user's folder, shown by blas_info") {
  if (std::getenv("GLASSLLM_GEMM")) return;  // a run with the choice overridden
  const Choice& c = gemm_choice::current();
  const std::string said = blas_info().gemm;
  CAPTURE(said);
  CHECK(said.rfind("float32: NN ", 0) == 0);
  CHECK(said.find(" (small: NN ") != std::string::npos);
  CHECK(said.find("; float64: NN ") != std::string::npos);
  CHECK(&gemm_choice::current() == &c);  // made once
  const BlasInfo info = blas_info();
  if (info.backend != "openblas") {
    // Nothing to choose: every product goes to the backend, nothing measured.
    for (const auto& dtype : c.kinds)
      for (const auto& kind : dtype)
        for (const gemm_choice::KindChoice& k : kind) CHECK(k.path == Path::library);
    CHECK(c.measure_ms == 0);
    return;
  }
#ifdef GLASSLLM_TEST_CACHE
  // The cache this process used is in the build folder, and holds what was chosen.
  const std::string file = std::string(GLASSLLM_TEST_CACHE) + "/glassllm/gemm-choice.txt";
  CHECK(c.source.find(file) != std::string::npos);
  bool damaged = true;
  std::optional<Choice> cached =
      gemm_choice::parse_cache(read(file), gemm_choice::cache_key(), damaged);
  REQUIRE(cached);
  for (std::size_t d = 0; d < 2; ++d)
    for (std::size_t k = 0; k < gemm_choice::kKinds; ++k)
      for (std::size_t z = 0; z < gemm_choice::kSizes; ++z)
        CHECK(cached->kinds[d][k][z].path == c.kinds[d][k][z].path);
#endif
}
