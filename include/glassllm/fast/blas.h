// blas.h: which BLAS library does GlassLM's matrix products, and with how
// many threads.
//
// Every matrix product (matmul, linear and their gradients) goes through one
// file, glassllm/fast/blas.cpp, which opens OpenBLAS at run time on first use.
// Nothing here is needed to compute; it is for benchmarks, bug reports and
// for choosing the thread count. Standard headers only.
#pragma once

#include <string>

namespace glassllm {

/// What blas_info() reports.
struct BlasInfo {
  std::string library;  ///< the file opened, e.g. ".../libopenblas.so.0"
  std::string core;     ///< kernel family: "SkylakeX", "Haswell", "Prescott", ...
  std::string config;   ///< OpenBLAS's build line (version, threading, ...)
  int threads;          ///< threads per product
};

/// Opens OpenBLAS if it is not open yet and describes it.
/// Throws std::runtime_error if libopenblas.so.0 cannot be opened.
///   std::cout << blas_info().core << "\n";   // "SkylakeX"
BlasInfo blas_info();

/// Sets the number of threads OpenBLAS uses for each product (n >= 1).
/// The default is the environment variable GLASSLLM_THREADS if set, else the
/// number of cores. Results repeat bit for bit for a given thread count; use
/// 1 to compare runs across machines with different core counts. Throws
/// std::invalid_argument for n < 1.
///   set_blas_threads(1);
void set_blas_threads(int n);

}  // namespace glassllm
