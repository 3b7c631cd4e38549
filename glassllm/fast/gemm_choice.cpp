// gemm_choice.cpp: for each kind of product (its dtype and its transposes),
// whether the backend's library or GlassLM's own GEMM (gemm_builtin.cpp)
// computes it, chosen by timing both.
//
// Which one is faster depends on the CPU, on the kernels the library picks
// for it and on the shapes: a library release older than the CPU may run
// kernels made for an older one, and the built-in GEMM, compiled with
// -march=native, may then beat it on the model's shapes, or lose on
// another CPU. So nothing is assumed: on the first product that reaches
// the choice, both are timed on one thread on the default model's training
// shapes of each kind (blas.cpp hands each task of a product to the backend
// on one thread, so that is what runs), in pairs, one run of each right
// after the other, and the one faster in the median pair wins. Each kind
// and size (small products, such as attention's per head, and large ones)
// is chosen on its own, so that a kind or size where the library is faster
// does not lose because another favoured the built-in code.
//
// The result is kept in a small text file ($XDG_CACHE_HOME/glassllm/
// gemm-choice.txt, else ~/.cache/glassllm/), keyed by what it depends on:
// the CPU's model name, family, model and stepping (a virtual machine may
// name two generations alike), the library, its kernels and build, how the
// built-in GEMM was compiled and GlassLM's version. A later process reads it
// instead of measuring, which also keeps a machine's results the same from
// one run to the next (the two codes round differently). A missing file,
// one written under another key or a damaged one means measuring again;
// a folder that cannot be written means measuring in every process. None of
// this ever fails a product. GLASSLLM_GEMM=library|builtin|measure
// overrides it.
//
// Nothing is measured where there is nothing to choose: with the builtin
// backend (WebAssembly, CI's portable build) both paths are the same code,
// and the system backend spreads each product over its library's own
// threads, which a one-thread timing of the built-in GEMM would not compare
// fairly; its products stay with the library.
#include "glassllm/fast/gemm_choice.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <type_traits>

#include "glassllm/fast/blas_backend.h"
#include "glassllm/fast/blas_internal.h"

#ifndef GLASSLLM_VERSION
#define GLASSLLM_VERSION "unknown"
#endif

namespace glassllm::gemm_choice {

namespace {

// Bumped when the file's lines change meaning, or when the measurement
// changes enough that old results should be measured again.
constexpr int kFormat = 2;
constexpr const char* kHeader = "glassllm-gemm-choice";
constexpr const char* kDtypes[2] = {"float32", "float64"};
constexpr Kind kAllKinds[kKinds] = {Kind::nn, Kind::nt, Kind::tn};
constexpr Size kAllSizes[kSizes] = {Size::small, Size::large};

// Timed pairs of runs per kind and size: enough for a median that one
// interruption by another program does not move.
constexpr int kRuns = 9;

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// ---- measuring -------------------------------------------------------------------

// One product shape, `count` times per run, product i on the i-th A, B and C.
struct Shape {
  std::size_t M, N, K, count;
};

// The default model's training step (d_model 128, d_ff 384, 16 x 128
// tokens, head_dim 32) as blas.cpp hands it to the backend. A linear layer
// over 2048 rows is cut into 4 tasks (512 rows each, or a quarter of the
// sum for a weight's gradient): the large products, those of the MLP's
// projections into d_ff and out of it, which may favour different codes,
// so both are timed, back to back. Attention runs one 128 x
// 128 x 32 product per head: the small ones, 16 per run, each on operands
// of its own as the heads are (timed on the same ones again and again,
// kept in the cache, the two codes can rank the other way round).
//   NT  y = x W^T: [512, 128] x [384, 128]^T and [512, 384] x [128, 384]^T;
//       scores q k^T: [128, 32] x [128, 32]^T
//   NN  dx = dy W: [512, 384] x [384, 128] and [512, 128] x [128, 384];
//       probs v: [128, 128] x [128, 32]
//   TN  dW = dy^T x: [512, 384]^T x [512, 128] and [512, 128]^T x [512, 384];
//       dk = dscores^T q: [128, 128]^T x [128, 32]
std::vector<Shape> shapes_of(Kind kind, Size size) {
  const bool large = size == Size::large;
  switch (kind) {
    case Kind::nt:
      return large ? std::vector<Shape>{{512, 384, 128, 1}, {512, 128, 384, 1}}
                   : std::vector<Shape>{{128, 128, 32, 16}};
    case Kind::nn:
      return large ? std::vector<Shape>{{512, 128, 384, 1}, {512, 384, 128, 1}}
                   : std::vector<Shape>{{128, 32, 128, 16}};
    case Kind::tn:
      return large ? std::vector<Shape>{{384, 128, 512, 1}, {128, 384, 512, 1}}
                   : std::vector<Shape>{{128, 32, 128, 16}};
  }
  return {};
}

template <class T>
void run_path(Path path, Kind kind, const std::vector<Shape>& shapes, const T* A,
              const T* B, T* C) {
  const bool ta = kind == Kind::tn, tb = kind == Kind::nt;
  for (const Shape& s : shapes) {
    // A stored [K, M] when transposed, else [M, K]; B [N, K] or [K, N].
    const std::size_t lda = ta ? s.M : s.K, ldb = tb ? s.K : s.N;
    for (std::size_t i = 0; i < s.count; ++i) {
      const T* a = A + i * s.M * s.K;
      const T* b = B + i * s.K * s.N;
      T* c = C + i * s.M * s.N;
      if (path == Path::builtin)
        builtin_gemm<T>(ta, tb, s.M, s.N, s.K, T(1), a, lda, b, ldb, T(0), c, s.N, 1);
      else
        backend::gemm<T>(ta, tb, s.M, s.N, s.K, T(1), a, lda, b, ldb, T(0), c, s.N);
    }
  }
}

// Both paths on each kind's shapes, on the calling thread:
// [kind][size].
template <class T>
std::array<std::array<KindChoice, kSizes>, kKinds> measure_kinds() {
  std::size_t a_size = 0, b_size = 0, c_size = 0;
  for (Kind kind : kAllKinds)
    for (Size size : kAllSizes)
      for (const Shape& s : shapes_of(kind, size)) {
        a_size = std::max(a_size, s.count * s.M * s.K);
        b_size = std::max(b_size, s.count * s.K * s.N);
        c_size = std::max(c_size, s.count * s.M * s.N);
      }
  // Numbers in [-1, 1): a GEMM's speed does not depend on which they are,
  // as long as they are ordinary (no subnormals).
  std::vector<T> a(a_size), b(b_size), c(c_size);
  for (std::size_t i = 0; i < a_size; ++i) a[i] = T(double(i * 7919 % 1000) / 500 - 1);
  for (std::size_t i = 0; i < b_size; ++i) b[i] = T(double(i * 104729 % 1000) / 500 - 1);
  using Clock = std::chrono::steady_clock;
  std::array<std::array<KindChoice, kSizes>, kKinds> out{};
  for (Kind kind : kAllKinds)
    for (Size size : kAllSizes) {
      const std::vector<Shape> shapes = shapes_of(kind, size);
      auto seconds = [&](Path path) {
        const auto start = Clock::now();
        run_path<T>(path, kind, shapes, a.data(), b.data(), c.data());
        return std::chrono::duration<double>(Clock::now() - start).count();
      };
      seconds(Path::library);  // warm the caches and each path's buffers
      seconds(Path::builtin);
      std::vector<double> library, builtin;
      for (int r = 0; r < kRuns; ++r) {  // in pairs, and which goes first alternates
        if (r % 2 == 0) library.push_back(seconds(Path::library));
        builtin.push_back(seconds(Path::builtin));
        if (r % 2 == 1) library.push_back(seconds(Path::library));
      }
      KindChoice& k = out[std::size_t(kind)][std::size_t(size)];
      k.path = decide(library, builtin);
      k.library_ms = 1e3 * median_of(library);
      k.builtin_ms = 1e3 * median_of(builtin);
    }
  return out;
}

Choice measure() {
  const auto start = std::chrono::steady_clock::now();
  Choice c;
  c.kinds[0] = measure_kinds<float>();
  c.kinds[1] = measure_kinds<double>();
  c.source = "measured";
  c.measure_ms =
      1e3 *
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return c;
}

Choice everything(Path path, std::string source) {
  Choice c;
  for (auto& dtype : c.kinds)
    for (auto& kind : dtype)
      for (KindChoice& k : kind) k.path = path;
  c.source = std::move(source);
  return c;
}

// ---- the key ---------------------------------------------------------------------

}  // namespace

std::string cpu_identity(const std::string& cpuinfo) {
  // The first processor's block: its lines up to the first empty one.
  std::istringstream in(cpuinfo);
  std::string line, name, family, model, stepping;
  while (std::getline(in, line) && !line.empty()) {
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    key.erase(key.find_last_not_of(" \t") + 1);  // npos + 1 == 0: all blank
    const std::size_t first = line.find_first_not_of(" \t", colon + 1);
    const std::string value = first == std::string::npos ? "" : line.substr(first);
    if (key == "model name")
      name = value;
    else if (key == "cpu family")
      family = value;
    else if (key == "model")
      model = value;
    else if (key == "stepping")
      stepping = value;
  }
  std::string id = name.empty() ? "unknown" : name;
  if (!family.empty() || !model.empty() || !stepping.empty())
    id += " (family " + (family.empty() ? "?" : family) + " model " +
          (model.empty() ? "?" : model) + " stepping " +
          (stepping.empty() ? "?" : stepping) + ")";
  return id;
}

namespace {

// This machine's cpu_identity (Linux), else "unknown".
std::string cpu_model() {
  // Only the first processor's block: a machine with many cores repeats it
  // for each one.
  std::ifstream in("/proc/cpuinfo");
  std::string text, line;
  while (std::getline(in, line) && !line.empty()) text += line + '\n';
  return cpu_identity(text);
}

// The vector instructions the built-in GEMM was compiled for.
const char* builtin_target() {
#if defined(__AVX512F__)
  return "AVX-512";
#elif defined(__AVX2__) && defined(__FMA__)
  return "AVX2+FMA";
#elif defined(__AVX__)
  return "AVX";
#elif defined(__SSE2__)
  return "SSE2";
#elif defined(__ARM_NEON)
  return "NEON";
#else
  return "scalar";
#endif
}

// One line: any line break inside a field becomes a space.
std::string one_line(std::string s) {
  for (char& ch : s)
    if (ch == '\n' || ch == '\r') ch = ' ';
  return s;
}

std::optional<std::string> read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// mkdir that accepts a folder that is already there.
bool make_folder(const std::string& path) {
  return ::mkdir(path.c_str(), 0700) == 0 || errno == EEXIST;
}

// ---- the choice in use ---------------------------------------------------------

std::once_flag once;
Choice chosen;
std::atomic<bool> made{false};
std::atomic<int> forced_path{-1};  // -1: none, else a Path

// The cached choice, or measured and cached.
Choice cached_or_measured(Mode mode) {
  const std::string path = cache_path(), key = cache_key();
  bool replace = mode == Mode::measure;
  if (!path.empty() && mode == Mode::automatic)
    if (std::optional<std::string> text = read_text(path)) {
      bool damaged = false;
      if (std::optional<Choice> c = parse_cache(*text, key, damaged)) {
        c->source = "cached in " + path;
        return *c;
      }
      if (damaged)
        std::cerr << "glassllm: " << path
                  << " is damaged; measuring the GEMM choice again to replace it\n";
      replace = true;  // damaged, or made for another machine or build
    }
  Choice c = measure();
  if (path.empty()) return c;
  if (write_cache(path, format_cache(key, c), replace)) {
    c.source = "measured, cached in " + path;
  } else if (!replace) {
    // Another process cached its choice first: take it, so that both use
    // the same code (and round the same way).
    bool damaged = false;
    if (std::optional<std::string> text = read_text(path))
      if (std::optional<Choice> theirs = parse_cache(*text, key, damaged)) {
        theirs->source = "cached in " + path;
        theirs->measure_ms = c.measure_ms;
        return *theirs;
      }
  }
  return c;
}

void make_choice() {
  const Mode mode = parse_mode(std::getenv("GLASSLLM_GEMM"));
  const BlasInfo info = backend::info();
  if (info.backend == "builtin")
    chosen = everything(Path::library, "the backend is the built-in GEMM");
  else if (backend::threads_itself())
    chosen = everything(Path::library, "the library threads products itself");
  else if (mode == Mode::library)
    chosen = everything(Path::library, "GLASSLLM_GEMM=library");
  else if (mode == Mode::builtin)
    chosen = everything(Path::builtin, "GLASSLLM_GEMM=builtin");
  else
    chosen = cached_or_measured(mode);
  made.store(true, std::memory_order_release);
}

}  // namespace

Kind kind_of(bool trans_a, bool trans_b) {
  if (trans_a && !trans_b) return Kind::tn;
  if (!trans_a && trans_b) return Kind::nt;
  return Kind::nn;
}

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::nn:
      return "NN";
    case Kind::nt:
      return "NT";
    case Kind::tn:
      return "TN";
  }
  return "?";
}

Size size_of(std::size_t M, std::size_t N, std::size_t K) {
  return double(M) * double(N) * double(K) < kSmallProduct ? Size::small : Size::large;
}

const char* size_name(Size size) {
  return size == Size::small ? "small" : "large";
}

const char* path_name(Path path) {
  return path == Path::builtin ? "builtin" : "library";
}

Mode parse_mode(const char* value) {
  if (!value) return Mode::automatic;
  const std::string v = value;
  if (v == "library") return Mode::library;
  if (v == "builtin") return Mode::builtin;
  if (v == "measure") return Mode::measure;
  throw std::invalid_argument("blas: GLASSLLM_GEMM='" + v +
                              "' is not a GEMM choice (library, builtin or measure)");
}

Path decide(const std::vector<double>& library_seconds,
            const std::vector<double>& builtin_seconds) {
  if (library_seconds.empty() || library_seconds.size() != builtin_seconds.size())
    throw std::invalid_argument("gemm_choice::decide: need as many timings of each path");
  std::vector<double> ratios;  // builtin over library, pair by pair
  for (std::size_t i = 0; i < library_seconds.size(); ++i)
    ratios.push_back(builtin_seconds[i] / library_seconds[i]);
  return median_of(std::move(ratios)) < 1.0 ? Path::builtin : Path::library;
}

std::string describe(const Choice& choice) {
  std::string s;
  for (std::size_t d = 0; d < 2; ++d) {
    auto kinds = [&](Size size) {
      std::string list;
      for (Kind kind : kAllKinds)
        list += std::string(kind == Kind::nn ? "" : ", ") + kind_name(kind) + " " +
                path_name(choice.kinds[d][std::size_t(kind)][std::size_t(size)].path);
      return list;
    };
    s += std::string(d ? "; " : "") + kDtypes[d] + ": " + kinds(Size::large) +
         " (small: " + kinds(Size::small) + ")";
  }
  return s + " (" + choice.source + ")";
}

std::string cache_key() {
  const BlasInfo info = backend::info();
  return one_line("format " + std::to_string(kFormat) + "; glassllm " + GLASSLLM_VERSION +
                  "; cpu " + cpu_model() + "; " + info.backend + " " + info.library +
                  ", " + info.core + ", " + info.config + "; builtin " +
                  builtin_target());
}

std::string cache_path() {
  // The XDG base directory rules: a relative XDG_CACHE_HOME is ignored.
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && xdg[0] == '/') return std::string(xdg) + "/glassllm/gemm-choice.txt";
  const char* home = std::getenv("HOME");
  if (home && home[0] != '\0')
    return std::string(home) + "/.cache/glassllm/gemm-choice.txt";
  return "";
}

std::string format_cache(const std::string& key, const Choice& choice) {
  std::string text = std::string(kHeader) + "\nkey " + one_line(key) + "\n";
  char line[128];
  for (std::size_t d = 0; d < 2; ++d)
    for (Kind kind : kAllKinds)
      for (Size size : kAllSizes) {
        const KindChoice& k = choice.kinds[d][std::size_t(kind)][std::size_t(size)];
        std::snprintf(line, sizeof line, "%s %s %s %s %.4f %.4f\n", kDtypes[d],
                      kind_name(kind), size_name(size), path_name(k.path), k.library_ms,
                      k.builtin_ms);
        text += line;
      }
  return text;
}

std::optional<Choice> parse_cache(const std::string& text, const std::string& key,
                                  bool& damaged) {
  damaged = true;
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != kHeader) return std::nullopt;
  if (!std::getline(in, line) || line.rfind("key ", 0) != 0) return std::nullopt;
  if (line.substr(4) != one_line(key)) {
    damaged = false;  // a good file, for another machine or build
    return std::nullopt;
  }
  Choice c;
  bool seen[2][kKinds][kSizes] = {};
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string dtype, kind, size, path, rest;
    double library_ms = -1, builtin_ms = -1;
    if (!(fields >> dtype >> kind >> size >> path >> library_ms >> builtin_ms) ||
        (fields >> rest))
      return std::nullopt;
    const std::size_t d = dtype == kDtypes[0] ? 0 : dtype == kDtypes[1] ? 1 : 2;
    std::size_t k = kKinds, z = kSizes;
    for (Kind each : kAllKinds)
      if (kind == kind_name(each)) k = std::size_t(each);
    for (Size each : kAllSizes)
      if (size == size_name(each)) z = std::size_t(each);
    if (d == 2 || k == kKinds || z == kSizes || seen[d][k][z] ||
        (path != "library" && path != "builtin") || !(library_ms >= 0) ||
        !(builtin_ms >= 0))
      return std::nullopt;
    seen[d][k][z] = true;
    c.kinds[d][k][z] = {path == "builtin" ? Path::builtin : Path::library, library_ms,
                        builtin_ms};
  }
  for (const auto& dtype : seen)
    for (const auto& kind : dtype)
      for (bool s : kind)
        if (!s) return std::nullopt;
  damaged = false;
  return c;
}

bool write_cache(const std::string& path, const std::string& text, bool replace) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos || slash == 0) return false;
  const std::string folder = path.substr(0, slash);
  const std::size_t up = folder.rfind('/');
  if (up != std::string::npos && up > 0) make_folder(folder.substr(0, up));
  if (!make_folder(folder)) return false;
  const std::string temp = path + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
      std::remove(temp.c_str());
      return false;
    }
  }
  bool done = false;
  if (!replace) {
    // Only if no file is there yet: a process that wrote first wins.
    done = ::link(temp.c_str(), path.c_str()) == 0;
    const bool taken = !done && errno == EEXIST;
    if (!done && !taken)  // a file system without hard links
      return std::rename(temp.c_str(), path.c_str()) == 0;
  } else {
    done = std::rename(temp.c_str(), path.c_str()) == 0;
  }
  std::remove(temp.c_str());
  return done;
}

const Choice& current() {
  std::call_once(once, make_choice);
  return chosen;
}

std::string describe_current() {
  if (!made.load(std::memory_order_acquire))
    return "chosen on the first product of more than 8 rows";
  return describe(chosen);
}

template <class T>
Path path(bool trans_a, bool trans_b, std::size_t M, std::size_t N, std::size_t K) {
  const int f = forced_path.load(std::memory_order_relaxed);
  if (f >= 0) return Path(f);
  const std::size_t d = std::is_same_v<T, double> ? 1 : 0;
  return current()
      .kinds[d][std::size_t(kind_of(trans_a, trans_b))][std::size_t(size_of(M, N, K))]
      .path;
}

void force(std::optional<Path> path) {
  forced_path.store(path ? int(*path) : -1, std::memory_order_relaxed);
}

std::optional<Path> forced() {
  const int f = forced_path.load(std::memory_order_relaxed);
  return f >= 0 ? std::optional<Path>(Path(f)) : std::nullopt;
}

template Path path<float>(bool, bool, std::size_t, std::size_t, std::size_t);
template Path path<double>(bool, bool, std::size_t, std::size_t, std::size_t);

}  // namespace glassllm::gemm_choice
