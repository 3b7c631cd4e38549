// allocation.cpp: how the engine's arrays get their memory
// (apply_allocation_policy, include/glassllm/fast/kernels.h). Speed only:
// nothing computed depends on it. docs/bench-notes.md ("Memory") has the
// measurements behind both choices.
//
// Freed memory stays in the heap. A training step allocates and frees
// hundreds of arrays of 100 KiB - 4 MiB. By default glibc serves each one
// with a fresh mmap and returns it to the system on free, so every step pays
// page faults to zero the same memory again. Keeping freed blocks in the
// heap makes the next step reuse them; the cost is that the process keeps
// its peak heap.
//
// Large arrays ask for 2 MiB pages. A 1B-parameter checkpoint converted to
// float32 is 5 GB of new arrays, and `glassllm check` in float64 allocates
// gigabytes of short-lived large gradients: faulted in 4 KiB at a time, that
// is over a million page faults. Transparent huge pages, which Debian's
// kernel gives to memory that asks for them ("madvise" mode), fault 512
// times fewer and map 512 times fewer TLB entries.
#include <malloc.h>

#include <cstdint>

#include "glassllm/fast/kernels.h"

#if defined(__linux__) && !defined(__EMSCRIPTEN__)
#include <sys/mman.h>
#endif

namespace glassllm::fast {

namespace {

bool keep_freed_memory() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's maximum: mmap only above 32 MiB
  mallopt(M_TRIM_THRESHOLD, 1 << 30);   // give heap back to the OS only above 1 GiB
  return true;
}

// Blocks from this size on are ones that the allocators hand out fresh from
// the system and give back when freed: glibc above 32 MiB (with the
// thresholds above) and mimalloc above 16 MiB. Each new one is faulted in
// page by page, as it is first written.
[[maybe_unused]] constexpr std::size_t kHugePagesFrom = std::size_t(16) << 20;

// madvise(MADV_HUGEPAGE) on the 2 MiB-aligned part of a large block, so that
// it is faulted in 2 MiB at a time. Does nothing elsewhere (smaller blocks,
// other systems, WebAssembly), and ignores the system's refusal
// (transparent huge pages turned off).
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

}  // namespace

void apply_allocation_policy(void* data, std::size_t bytes) {
  static const bool tuned = keep_freed_memory();
  (void)tuned;
  ask_for_huge_pages(data, bytes);
}

}  // namespace glassllm::fast
