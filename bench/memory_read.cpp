// memory_read.cpp: the loop with which `glassllm bench` times reading memory,
// for its memory floors (the K/V cache read once in bench_attention.cpp, the
// read bandwidth in bench_decode.cpp).
//
// It is the one loop of the benchmark whose own speed is a figure, so this
// file is compiled on its own at -O2 (CMakeLists.txt), while the rest of the
// tool is built at -O1. At -O1 GCC does not vectorise it, and reading 480 MiB
// took 130 ms instead of 62 ms (2-core AMD EPYC, Zen 3): every floor would
// have looked twice as slow as the memory is.
#include <cstddef>

namespace glassllm::cli {

// 16 independent sums, so that the loop runs at the memory's speed, not at
// one add's latency.
float read_all(const float* p, std::size_t n) {
  float acc[16] = {};
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int k = 0; k < 16; ++k) acc[k] += p[i + k];
  for (; i < n; ++i) acc[0] += p[i];
  float total = 0;
  for (float a : acc) total += a;
  return total;
}

}  // namespace glassllm::cli
