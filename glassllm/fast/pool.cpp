// pool.cpp: the threads behind pool::parallel_for (pool.h says how loops use
// them).
//
// Why our own pool: OpenBLAS's threads split each product in equal shares
// fixed in advance and wait for one another by spinning. On a machine where
// another program keeps one core busy, every product then waits for the
// share of the thread that lost its core, while the spinning threads take
// time from everyone: one training step went from 122 ms to over 300 ms
// beside a single busy loop, and to seconds beside a build. Here OpenBLAS
// runs one thread inside each task, tasks are taken one by one from a
// counter, and a waiting thread sleeps after a spin of a few microseconds.
#include "glassllm/fast/pool.h"

#include "glassllm/fast/blas_internal.h"  // default_blas_threads

// WebAssembly built without -pthread has no threads to start.
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__) && \
    !defined(GLASSLLM_NO_THREADS)
#define GLASSLLM_NO_THREADS
#endif

#ifndef GLASSLLM_NO_THREADS
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>
#endif

namespace glassllm::pool {

#ifdef GLASSLLM_NO_THREADS

int threads() {
  return 1;
}

void set_threads(int) {}

void run(std::size_t n, void (*task)(void*, std::size_t), void* context) {
  detail::InTask mark;
  for (std::size_t i = 0; i < n; ++i) task(context, i);
}

#else

namespace {

// Spins until ready() or until about `spin` has passed; true if ready. A
// spin this short costs little when nothing comes, and saves the ~5-20 us of
// a sleep and a wake-up between two loops that follow each other closely
// (the matrix products of one decode step).
template <class Ready>
bool spin_until(Ready ready, std::chrono::microseconds spin) {
  auto until = std::chrono::steady_clock::now() + spin;
  for (int i = 1;; ++i) {
    if (ready()) return true;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    if (i % 64 == 0 && std::chrono::steady_clock::now() > until) return ready();
  }
}

constexpr std::chrono::microseconds kSpin{50};
constexpr std::chrono::milliseconds kLoadPeriod{20};

class Pool {
 public:
  explicit Pool(int n) { resize(n); }
  ~Pool() { resize(1); }

  int threads() const { return int(workers_.size()) + 1; }

  // Stops the workers and starts n - 1 new ones.
  void resize(int n) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (std::thread& w : workers_) w.join();
    workers_.clear();
    stopping_ = false;
    for (int i = 1; i < n; ++i)
      workers_.emplace_back([this, i, seen = generation_.load()] { work(i - 1, seen); });
  }

  void run(std::size_t n, void (*task)(void*, std::size_t), void* context) {
    std::unique_lock<std::mutex> one_loop(run_mutex_, std::try_to_lock);
    if (!one_loop.owns_lock()) {  // another thread's loop is running: do it here
      detail::InTask mark;
      for (std::size_t i = 0; i < n; ++i) task(context, i);
      return;
    }
    const int helpers = std::min(int(workers_.size()), free_cores() - 1);
    if (helpers <= 0) {  // the other cores are busy: no one would help
      detail::InTask mark;
      for (std::size_t i = 0; i < n; ++i) task(context, i);
      return;
    }
    {
      std::unique_lock<std::mutex> lock(mutex_);
      // A worker that joined the previous loop too late to get a task may
      // still hold its job: let it go before the job changes.
      done_.wait(lock, [&] { return active_.load() == 0; });
      job_ = {task, context, n, helpers};
      next_.store(0);
      error_ = nullptr;
      generation_.fetch_add(1, std::memory_order_release);
    }
    if (sleepers_.load() > 0) wake_.notify_all();
    take_tasks(job_);
    // Wait for the workers still running a task they took.
    if (!spin_until([&] { return active_.load() == 0; }, kSpin)) {
      std::unique_lock<std::mutex> lock(mutex_);
      done_.wait(lock, [&] { return active_.load() == 0; });
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (error_) std::rethrow_exception(error_);
  }

 private:
  struct Job {
    void (*task)(void*, std::size_t) = nullptr;
    void* context = nullptr;
    std::size_t n = 0;
    int helpers = 0;  // workers 0..helpers-1 take part
  };

  // Cores not kept busy by other threads, ours excepted, as /proc/loadavg's
  // count of running threads said at most kLoadPeriod ago. On a machine
  // where every core is taken, a helper would only wait for a core, and the
  // loop would wait for it; the loop then runs on the calling thread alone.
  int free_cores() {
#ifdef __linux__
    auto now = std::chrono::steady_clock::now();
    if (now - load_checked_ > kLoadPeriod) {
      load_checked_ = now;
      int running = 0;
      if (std::FILE* f = std::fopen("/proc/loadavg", "r")) {
        if (std::fscanf(f, "%*f %*f %*f %d", &running) != 1) running = 0;
        std::fclose(f);
      }
      // Running now: this thread, the workers not asleep, and the others.
      int ours = 1 + int(workers_.size()) - sleepers_.load();
      int others = std::max(0, running - ours);
      free_cores_ = std::max(1, cores_ - others);
    }
    return free_cores_;
#else
    return cores_;
#endif
  }

  // Runs tasks until none is left. A task that throws stops the loop: the
  // others are skipped, and run() rethrows the first exception.
  void take_tasks(const Job& job) {
    detail::InTask mark;
    try {
      for (std::size_t i; (i = next_.fetch_add(1)) < job.n;) job.task(job.context, i);
    } catch (...) {
      next_.store(job.n);
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
  }

  void work(int index, unsigned seen) {
    for (;;) {
      auto new_job = [&] { return generation_.load(std::memory_order_acquire) != seen; };
      std::unique_lock<std::mutex> lock(mutex_, std::defer_lock);
      if (spin_until(new_job, kSpin)) {
        lock.lock();
      } else {
        lock.lock();
        ++sleepers_;
        wake_.wait(lock, [&] { return new_job() || stopping_; });
        --sleepers_;
      }
      if (stopping_) return;
      seen = generation_.load();
      if (index >= job_.helpers || next_.load() >= job_.n) continue;
      ++active_;
      Job job = job_;
      lock.unlock();
      take_tasks(job);
      lock.lock();
      if (--active_ == 0) done_.notify_all();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex run_mutex_;  // one loop at a time
  std::mutex mutex_;      // guards job_, stopping_ and changes of active_
  std::condition_variable wake_, done_;
  Job job_;
  std::atomic<std::size_t> next_{0};  // the next task number to take
  std::atomic<unsigned> generation_{0};
  std::atomic<int> active_{0};    // workers holding the current job
  std::atomic<int> sleepers_{0};  // workers asleep on wake_
  bool stopping_ = false;
  std::exception_ptr error_;  // the first exception a task threw (guarded by mutex_)
  const int cores_ = int(std::max(1u, std::thread::hardware_concurrency()));
  std::chrono::steady_clock::time_point load_checked_{};
  int free_cores_ = cores_;
};

Pool& the_pool() {
  static Pool pool(default_blas_threads());
  return pool;
}

}  // namespace

int threads() {
  return the_pool().threads();
}

void set_threads(int n) {
  if (n != the_pool().threads()) the_pool().resize(n);
}

void run(std::size_t n, void (*task)(void*, std::size_t), void* context) {
  the_pool().run(n, task, context);
}

#endif

}  // namespace glassllm::pool
