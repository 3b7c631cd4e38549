// huge_pages.cpp: see huge_pages.h.
//
// Why: a 1B-parameter checkpoint converted to float32 is 5 GB of new arrays,
// and `glassllm check` in float64 allocates gigabytes of short-lived large
// gradients. Faulted in 4 KiB at a time, that is over a million page faults.
// On the 2-core Zen 5 virtual machine a fault cost about 8 us (zeroing the
// page included): `glassllm check` on a 2-layer SmolLM2-135M-shaped model
// spent 12 of its 20 s in the kernel. Transparent huge pages, which Debian's
// kernel gives to memory that asks for them ("madvise" mode), fault 512
// times fewer and map 512 times fewer TLB entries.
#include "glassllm/fast/huge_pages.h"

#include <cstdint>

#if defined(__linux__) && !defined(__EMSCRIPTEN__)
#include <sys/mman.h>
#endif

namespace glassllm::fast {

void ask_for_huge_pages(void* data, std::size_t bytes) {
#if defined(__linux__) && !defined(__EMSCRIPTEN__) && defined(MADV_HUGEPAGE)
  if (bytes < kHugePagesFrom) return;
  constexpr std::uintptr_t huge = std::uintptr_t(2) << 20;
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t first = (begin + huge - 1) & ~(huge - 1);  // round up
  const std::uintptr_t last = (begin + bytes) & ~(huge - 1);      // round down
  if (last > first)
    (void)madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

}  // namespace glassllm::fast
