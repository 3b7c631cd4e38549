// blas.h: which backend does GlassLM's matrix products, and with how many
// threads.
//
// Every matrix product (matmul, linear and their gradients) goes through one
// file, glassllm/fast/blas.cpp, and from there to the backend chosen when the
// build was configured (-DGLASSLLM_BLAS=auto|openblas|system|builtin):
// OpenBLAS opened at run time, the system's BLAS linked by CMake, or
// GlassLM's own C++ GEMM. With OpenBLAS, each kind of product (its dtype and
// transposes) goes to whichever of OpenBLAS and the built-in GEMM measured
// faster on this machine: timed once, cached in
// $XDG_CACHE_HOME/glassllm/gemm-choice.txt (else ~/.cache/glassllm/), and
// overridden by the environment variable GLASSLLM_GEMM=library|builtin|measure.
// Nothing here is needed to compute; it is for benchmarks, bug reports and
// for choosing the thread count. Standard headers only.
#pragma once

#include <string>

namespace glassllm {

/// What blas_info() reports.
struct BlasInfo {
  std::string backend;  ///< "openblas", "system" or "builtin"
  std::string library;  ///< the file opened or linked, e.g. ".../libopenblas.so.0"
  std::string core;     ///< kernels: "SkylakeX", "Haswell", "Prescott", ... (OpenBLAS)
  std::string config;   ///< OpenBLAS's build line (version, threading, ...)
  int threads = 1;      ///< GlassLM's threads (at most); 0: the library decides (system)
  /// Which GEMM each kind of product runs and why, e.g. "float32: NN builtin,
  /// NT builtin, TN library; float64: ... (cached in ...)", once a product of
  /// more than 8 rows has made the choice.
  std::string gemm;
};

/// Describes the backend, opening OpenBLAS first if that is the backend.
/// Throws std::runtime_error if libopenblas.so.0 cannot be opened.
///   std::cout << blas_info().backend << "\n";   // "openblas"
BlasInfo blas_info();

/// Checks the environment variable GLASSLLM_GEMM (unset, library, builtin or
/// measure) now, instead of at the first product that reads it: a command
/// calls it before it starts its work. Throws std::invalid_argument naming
/// the value and the choices.
///   check_gemm_variable();
void check_gemm_variable();

/// Sets the number of threads (n >= 1) that matrix products and the large
/// loops of the other ops are spread over (GlassLM's pool,
/// glassllm/fast/pool.h), the caller's included. While other programs keep
/// the other cores busy, fewer are used. With the system backend the
/// library's own settings decide its products' threads. The default is the
/// environment variable GLASSLLM_THREADS if set, else the number of cores.
/// Work is cut into tasks by sizes alone, so with the openblas and builtin
/// backends results are the same bit for bit on any thread count. Throws
/// std::invalid_argument for n < 1.
///   set_blas_threads(1);
void set_blas_threads(int n);

}  // namespace glassllm
