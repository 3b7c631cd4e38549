// pool.h (private): GlassLM's own threads, shared by the matrix products
// (blas.cpp splits them) and the loops of the other ops
// (fast::parallel_rows, include/glassllm/fast/kernels.h).
//
// One loop at a time is split into tasks, numbered 0..n-1. The calling thread
// and the pool's workers take the next task number from one counter until
// none is left, so a thread that the system has paused (another program is
// using its core) simply takes fewer tasks and the others do its share. Idle
// workers sleep on a condition variable after a short spin (none after a long
// loop): they cost nothing while the program computes on one thread, and do
// not fight other programs for the cores between loops. On Linux a worker
// keeps off the core of the thread that started the loop, so that the two do
// not end up sharing one core while another program has the other.
//
// How the work is cut into tasks depends only on the sizes, never on the
// thread count, and each task writes only its own outputs: results are the
// same bit for bit on any number of threads and under any load.
//
// Built with GLASSLLM_NO_THREADS (WebAssembly without threads) the tasks run
// one after another on the calling thread.
#pragma once

#include <algorithm>
#include <cstddef>
#include <type_traits>

namespace glassllm::pool {

/// Runs task(i) once for every i in [0, n), spread over the pool's threads
/// (the caller's included), and returns when all have run. Called from inside
/// a task, it runs the tasks in order on that thread (no nesting). If tasks
/// throw, the first exception is rethrown here once all have stopped.
template <class F>
void parallel_for(std::size_t n, F&& task);

/// Calls body(first, last) for consecutive ranges [first, last) that cover
/// [0, n), each `grain` items long (the last one shorter), spread over the
/// pool's threads when there are two or more. The ranges depend only on n and
/// grain, so each item is handled by the same call on any number of threads.
///   pool::parallel_ranges(rows, pool::grain(D), [&](std::size_t first,
///                                                   std::size_t last) {
///     for (std::size_t row = first; row < last; ++row) ...
///   });
template <class F>
void parallel_ranges(std::size_t n, std::size_t grain, F&& body);

/// The grain for items of `width` elements each: ranges of about 32 K
/// elements (tens of microseconds of a simple loop), below which a loop is
/// not worth a second thread.
inline std::size_t grain(std::size_t width = 1) {
  constexpr std::size_t kElementsPerRange = 32 * 1024;
  return width >= kElementsPerRange ? 1 : kElementsPerRange / (width ? width : 1);
}

/// Threads a loop may use, the caller's included (>= 1).
int threads();

/// From now on loops use n threads (n >= 1, checked by the caller).
void set_threads(int n);

/// True while the calling thread runs a task of parallel_for.
bool inside_task();

// ---- implementation ---------------------------------------------------------------

namespace detail {
inline thread_local bool in_task = false;

// Marks the calling thread as running tasks while alive (also if one throws).
struct InTask {
  InTask() { in_task = true; }
  ~InTask() { in_task = false; }
  InTask(const InTask&) = delete;
  InTask& operator=(const InTask&) = delete;
};

// How the pool tells how many cores other programs leave it (pool.cpp),
// split out so that tests can feed it lines of their own. CPU time in clock
// ticks: busy time of all cores from /proc/stat's first line ("cpu  user
// nice system idle iowait irq softirq steal ..."), and this process's own
// from /proc/self/stat (utime + stime, fields 14 and 15). Each returns false
// when the line does not parse.
bool all_cores_busy_ticks(const char* proc_stat_line, unsigned long long& ticks);
bool own_ticks(const char* self_stat_line, unsigned long long& ticks);
// cores, less the cores' worth of CPU time others used (rounded), at least 1.
int free_cores(int cores, double others_cores);
}  // namespace detail

inline bool inside_task() {
  return detail::in_task;
}

/// parallel_for without the template: task(context, i).
void run(std::size_t n, void (*task)(void*, std::size_t), void* context);

template <class F>
void parallel_for(std::size_t n, F&& task) {
  if (n == 0) return;
  if (inside_task()) {
    for (std::size_t i = 0; i < n; ++i) task(i);
    return;
  }
  if (n == 1 || threads() == 1) {
    detail::InTask mark;
    for (std::size_t i = 0; i < n; ++i) task(i);
    return;
  }
  using Task = std::remove_reference_t<F>;
  run(
      n, [](void* c, std::size_t i) { (*static_cast<Task*>(c))(i); },
      const_cast<void*>(static_cast<const void*>(&task)));
}

template <class F>
void parallel_ranges(std::size_t n, std::size_t grain, F&& body) {
  const std::size_t ranges = (n + grain - 1) / grain;
  if (ranges <= 1) {
    if (n > 0) body(std::size_t(0), n);
    return;
  }
  parallel_for(ranges,
               [&](std::size_t r) { body(r * grain, std::min(n, (r + 1) * grain)); });
}

}  // namespace glassllm::pool
