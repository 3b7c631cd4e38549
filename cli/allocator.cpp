// allocator.cpp: the memory allocator the glassllm tool runs on.
//
// Every op makes new tensors: one decoded token of the default model
// allocates about a thousand blocks (nodes, shapes, arrays, 480 KB in all)
// and frees them again. With mimalloc (Debian's libmimalloc-dev) in place of
// the C library's malloc, decoding is faster and training no slower
// (docs/bench-notes.md has the figures). Even the matrix products get
// faster, for the same reads: we read that as less of the model's weights
// pushed out of the cache, since mimalloc reuses the blocks just freed first.
//
// CMakeLists.txt links it into this tool only, when it is installed and the
// build is not instrumented (sanitizers, fuzzing); without it the tool runs
// on the C library's malloc. Linked in, mimalloc serves every malloc of the
// process, OpenBLAS's and the C++ library's too.
#include <string>

#include "cli/cli.h"

#ifdef GLASSLLM_HAVE_MIMALLOC
#include <mimalloc.h>

#include <new>

// mimalloc's own operator new, built as C, aborts when memory runs out. These
// replace it (the program's own definitions come before any library's), so
// that running out of memory still throws std::bad_alloc and the tool says
// "out of memory" with exit status 4 (tests/cli_out_of_memory.sh).
void* operator new(std::size_t size) {
  if (void* p = mi_malloc(size ? size : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) {
  return ::operator new(size);
}
void* operator new(std::size_t size, std::align_val_t align) {
  if (void* p = mi_malloc_aligned(size ? size : 1, std::size_t(align))) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size, std::align_val_t align) {
  return ::operator new(size, align);
}
void operator delete(void* p) noexcept {
  mi_free(p);
}
void operator delete[](void* p) noexcept {
  mi_free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  mi_free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  mi_free(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  mi_free(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  mi_free(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  mi_free(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  mi_free(p);
}
#endif

namespace glassllm::cli {

void tune_allocator() {
#ifdef GLASSLLM_HAVE_MIMALLOC
  // Keep freed memory for the next allocations instead of handing it back
  // to the system after a short delay: a training step frees and reallocates
  // the same megabytes every step, and giving them back costs hundreds of
  // page faults a step (the engine asks the same of the C library's malloc: tensor.cpp,
  // keep_freed_memory). The option has this name up to mimalloc 2.0
  // (Debian 12 has 2.0.9); later versions call it purge_decommits.
#if MI_MALLOC_VERSION < 210
  mi_option_set(mi_option_allow_decommit, 0);
#endif
  // Back the heap with 2 MiB pages where the system gives them (transparent
  // huge pages, asked for with madvise; nothing happens where they are off).
  // A training step reads and writes arrays of 1-4 MiB, many passes each:
  // with 4 KiB pages each array spans up to a thousand TLB entries, and the
  // hardware prefetchers stop at every page boundary.
  mi_option_set(mi_option_large_os_pages, 1);
#endif
}

std::string allocator_name() {
#ifdef GLASSLLM_HAVE_MIMALLOC
  const int v = mi_version();  // major * 100 + minor * 10 + patch
  return "mimalloc " + std::to_string(v / 100) + "." + std::to_string(v / 10 % 10) + "." +
         std::to_string(v % 10);
#else
  return "the C library's malloc";
#endif
}

}  // namespace glassllm::cli
