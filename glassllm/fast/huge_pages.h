// huge_pages.h (private): asking Linux to back a large block with 2 MiB
// pages. Speed only: the engine calls it for each new tensor's array
// (tensor.cpp, empty()), and nothing computed depends on it.
#pragma once

#include <cstddef>

namespace glassllm::fast {

/// Blocks from this size on are ones that the allocators hand out fresh from
/// the system and give back when freed: glibc above 32 MiB (with the engine's
/// mallopt, tensor.cpp) and mimalloc above 16 MiB. Each new one is faulted in
/// page by page, as it is first written.
inline constexpr std::size_t kHugePagesFrom = std::size_t(16) << 20;

/// For a block of `bytes` at `data` of at least kHugePagesFrom bytes, not yet
/// written: madvise(MADV_HUGEPAGE) on the 2 MiB-aligned part inside it, so
/// that it is faulted in 2 MiB at a time. Does nothing elsewhere (smaller
/// blocks, other systems, WebAssembly), and ignores the system's refusal
/// (transparent huge pages turned off).
void ask_for_huge_pages(void* data, std::size_t bytes);

}  // namespace glassllm::fast
