// bench.cpp: what GlassLM's ops cost on this machine, in one table.
//
// Prints the BLAS library in use (file, kernel family, build, threads), the
// fixed cost of one tiny op with and without the autograd tape, and the
// GFLOP/s of the model's matrix products through matmul and linear, each next
// to a plain loop of raw GEMMs on the same shapes (the ceiling the op could
// reach) and their ratio. Every figure is a median of repeated runs: the
// machine is shared and noisy. `--json` prints the same figures as one flat
// JSON object instead.
//   ./build/glassllm_bench [--json]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "glassllm/blas.h"
#include "glassllm/blas_internal.h"
#include "glassllm/ops.h"

using namespace glassllm;
using Clock = std::chrono::steady_clock;

namespace {

// Median over `runs` of the seconds one call of f takes, each run timing
// `inner` calls back to back (so a call shorter than the clock's resolution
// is still measured). One untimed run first warms caches and BLAS buffers.
double median_seconds(const std::function<void()>& f, int runs, int inner = 1) {
  for (int i = 0; i < inner; ++i) f();
  std::vector<double> t(std::size_t(runs), 0.0);
  for (double& s : t) {
    auto start = Clock::now();
    for (int i = 0; i < inner; ++i) f();
    s = std::chrono::duration<double>(Clock::now() - start).count() / inner;
  }
  std::nth_element(t.begin(), t.begin() + runs / 2, t.end());
  return t[std::size_t(runs / 2)];
}

struct Row {
  std::string key, label, dtype;
  int threads;
  double op_gflops, gemm_gflops;
};

// One matrix product case: the op through the engine and the same GEMMs raw.
template <class T>
Row measure(const std::string& key, const std::string& label, int threads, double flops,
            const std::function<void()>& op, const std::function<void()>& raw, int runs) {
  set_blas_threads(threads);
  Row r{key, label, sizeof(T) == 4 ? "float32" : "float64", threads, 0, 0};
  r.op_gflops = flops / median_seconds(op, runs) / 1e9;
  r.gemm_gflops = flops / median_seconds(raw, runs) / 1e9;
  set_blas_threads(1);
  return r;
}

template <class T>
void matmul_cases(std::vector<Row>& rows, DType dt, int runs) {
  const char* d = sizeof(T) == 4 ? "f32" : "f64";
  {
    // Attention scores' shape: [B, H, T, hd] @ [B, H, hd, T], 64 GEMMs of 128x128x32.
    const std::size_t B = 16, H = 4, T_ = 128, hd = 32;
    Tensor q = randn({B, H, T_, hd}, 1, dt), k = randn({B, H, hd, T_}, 2, dt);
    Tensor c = zeros({B, H, T_, T_}, dt);
    double flops = 2.0 * B * H * T_ * T_ * hd;
    const T* qa = q.data<T>();
    const T* ka = k.data<T>();
    T* ca = c.mutable_data<T>();
    auto raw = [&] {
      for (std::size_t i = 0; i < B * H; ++i)
        gemm<T>(false, false, T_, T_, hd, T(1), qa + i * T_ * hd, hd, ka + i * hd * T_,
                T_, T(0), ca + i * T_ * T_, T_);
    };
    rows.push_back(measure<T>(
        std::string("matmul_16x4x128x32_") + d, "matmul (16,4,128,32)@(16,4,32,128)", 1,
        flops, [&] { matmul(q, k); }, raw, runs));
  }
  {
    // The MLP's up projection over B*T = 2048 rows: [2048, 128] -> [2048, 384].
    const std::size_t R = 2048, in = 128, out = 384;
    Tensor x = randn({R, in}, 3, dt), w = randn({out, in}, 4, dt),
           wt = randn({in, out}, 5, dt);
    Tensor y = zeros({R, out}, dt);
    double flops = 2.0 * R * in * out;
    const T* xa = x.data<T>();
    const T* wa = w.data<T>();
    const T* wta = wt.data<T>();
    T* ya = y.mutable_data<T>();
    auto raw_nt = [&] {
      gemm<T>(false, true, R, out, in, T(1), xa, in, wa, in, T(0), ya, out);
    };
    auto raw_nn = [&] {
      gemm<T>(false, false, R, out, in, T(1), xa, in, wta, out, T(0), ya, out);
    };
    for (int threads : {1, 2}) {
      std::string t = threads == 1 ? "" : "_2threads";
      rows.push_back(measure<T>(
          std::string("linear_2048x128x384_") + d + t, "linear (2048,128) w (384,128)",
          threads, flops, [&] { linear(x, w); }, raw_nt, runs));
      rows.push_back(measure<T>(
          std::string("matmul_2048x128x384_") + d + t, "matmul (2048,128)@(128,384)",
          threads, flops, [&] { matmul(x, wt); }, raw_nn, runs));
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool json = argc > 1 && std::strcmp(argv[1], "--json") == 0;
  if (argc > 1 && !json) {
    std::cerr << "usage: " << argv[0] << " [--json]\n";
    return 2;
  }
  BlasInfo info = blas_info();

  // (b) per-op overhead: add on a decode-sized tensor, [1, 4, 1, 32].
  const int overhead_runs = 201, overhead_inner = 1000;
  Tensor a = randn({1, 4, 1, 32}, 6), b = randn({1, 4, 1, 32}, 7);
  double add_no_grad_us, add_tape_us;
  {
    no_grad guard;
    add_no_grad_us =
        1e6 * median_seconds([&] { add(a, b); }, overhead_runs, overhead_inner);
  }
  Tensor ag = a.detach().requires_grad_(), bg = b.detach().requires_grad_();
  add_tape_us = 1e6 * median_seconds([&] { add(ag, bg); }, overhead_runs, overhead_inner);

  // (c) matrix products.
  const int gemm_runs = 31;
  std::vector<Row> rows;
  {
    no_grad guard;  // forward cost only; no inputs require grad anyway
    matmul_cases<float>(rows, DType::float32, gemm_runs);
    matmul_cases<double>(rows, DType::float64, gemm_runs);
  }

  if (json) {
    nlohmann::json j;
    j["blas_library"] = info.library;
    j["blas_core"] = info.core;
    j["blas_config"] = info.config;
    j["blas_threads"] = info.threads;
    j["add_1x4x1x32_no_grad_us"] = add_no_grad_us;
    j["add_1x4x1x32_tape_us"] = add_tape_us;
    for (const Row& r : rows) {
      j[r.key + "_gflops"] = r.op_gflops;
      j[r.key + "_gemm_gflops"] = r.gemm_gflops;
      j[r.key + "_ratio"] = r.op_gflops / r.gemm_gflops;
    }
    std::cout << j.dump(2) << "\n";
    return 0;
  }

  std::printf("BLAS library  %s\n", info.library.c_str());
  std::printf("BLAS core     %s\n", info.core.c_str());
  std::printf("BLAS config   %s\n", info.config.c_str());
  std::printf("BLAS threads  %d (default)\n\n", info.threads);

  std::printf("Per-op overhead: add on (1,4,1,32), median of %d runs of %d calls\n",
              overhead_runs, overhead_inner);
  std::printf("  under no_grad          %7.3f us\n", add_no_grad_us);
  std::printf("  recording the tape     %7.3f us\n\n", add_tape_us);

  std::printf("Matrix products, forward, GFLOP/s, median of %d runs\n", gemm_runs);
  std::printf("  %-38s %-8s %7s %8s %8s %6s\n", "case", "dtype", "threads", "op", "gemm",
              "op/gemm");
  for (const Row& r : rows)
    std::printf("  %-38s %-8s %7d %8.1f %8.1f %6.2f\n", r.label.c_str(), r.dtype.c_str(),
                r.threads, r.op_gflops, r.gemm_gflops, r.op_gflops / r.gemm_gflops);
  std::printf(
      "\n'gemm' is a plain loop of raw GEMMs on the same shapes and buffers:\n"
      "the ceiling for the op, which also allocates its output.\n");
  return 0;
}
