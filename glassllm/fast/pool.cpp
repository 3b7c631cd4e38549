// pool.cpp: the threads behind pool::parallel_for (pool.h says how loops use
// them).
//
// Why our own pool: OpenBLAS's threads split each product in equal shares
// fixed in advance and wait for one another by spinning. On a machine where
// another program keeps one core busy, every product then waits for the
// share of the thread that lost its core, while the spinning threads take
// time from everyone: a training step beside a single busy loop took more
// than twice as long (docs/bench-notes.md, "The thread pool"). Here OpenBLAS
// runs one thread inside each task, tasks are taken one by one from a
// counter, and a waiting thread sleeps after a spin of a few microseconds.
#include "glassllm/fast/pool.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "glassllm/fast/blas_internal.h"  // default_blas_threads

// WebAssembly built without -pthread, or the page's engine
// (GLASSLLM_SINGLE_THREAD, web/CMakeLists.txt), has no threads to start.
#if ((defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)) || \
     defined(GLASSLLM_SINGLE_THREAD)) &&                               \
    !defined(GLASSLLM_NO_THREADS)
#define GLASSLLM_NO_THREADS
#endif

#ifndef GLASSLLM_NO_THREADS
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>
#ifdef __linux__
#include <sched.h>   // sched_getcpu, sched_setaffinity
#include <unistd.h>  // sysconf
#endif
#endif

namespace glassllm::pool {

bool detail::all_cores_busy_ticks(const char* line, unsigned long long& ticks) {
  unsigned long long user, nice, system, idle, iowait, irq, softirq, steal;
  if (std::sscanf(line, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &user, &nice,
                  &system, &idle, &iowait, &irq, &softirq, &steal) != 8)
    return false;
  // Steal is time the host gave to other machines: taken from us too.
  ticks = user + nice + system + irq + softirq + steal;
  return true;
}

bool detail::own_ticks(const char* line, unsigned long long& ticks) {
  // The name (field 2, in parentheses) may hold spaces and ')': count from
  // the last ')', after which comes field 3, the state.
  const char* rest = std::strrchr(line, ')');
  unsigned long long utime, stime;
  if (!rest ||
      std::sscanf(rest + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
                  &utime, &stime) != 2)
    return false;
  ticks = utime + stime;
  return true;
}

int detail::free_cores(int cores, double others_cores) {
  return std::max(1, cores - int(std::max(0.0, others_cores) + 0.5));
}

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
// spin this short costs little when nothing comes, and saves a sleep and a
// wake-up between two loops that follow each other closely (the matrix
// products of one decode step).
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
// A worker that has just spent this long on a loop's tasks sleeps at once
// instead of spinning (work() says why).
constexpr std::chrono::microseconds kLongJob{500};
// How often free_cores() looks again: CPU time is counted in ticks of 10 ms,
// so a shorter period would see mostly rounding.
constexpr std::chrono::milliseconds kLoadPeriod{100};

// The cores a worker may run on, and the core a thread runs on (Linux;
// elsewhere: none known, and keep_off does nothing).
struct CpuSet {
#ifdef __linux__
  static int current() {
    return sched_getcpu();
  }  // -1 if unknown
  cpu_set_t cpus;
  bool valid = false;
  static CpuSet of_this_thread() {
    CpuSet s;
    CPU_ZERO(&s.cpus);
    s.valid = sched_getaffinity(0, sizeof s.cpus, &s.cpus) == 0;
    return s;
  }
  // Lets the calling thread run on these cores less `cpu` (moving it now if
  // it is on `cpu`), or on all of them if `cpu` is not one of them or the
  // only one. If the system refuses, the thread stays where it may run.
  void keep_off(int cpu) const {
    if (!valid) return;
    cpu_set_t others = cpus;
    if (cpu >= 0 && cpu < CPU_SETSIZE && CPU_ISSET(cpu, &others) &&
        CPU_COUNT(&others) > 1)
      CPU_CLR(cpu, &others);
    sched_setaffinity(0, sizeof others, &others);
  }
#else
  static int current() {
    return -1;
  }
  static CpuSet of_this_thread() {
    return {};
  }
  void keep_off(int) const {}
#endif
};

class Pool {
 public:
  explicit Pool(int n) { resize(n); }
  ~Pool() { resize(1); }

  int threads() const { return int(workers_.size()) + 1; }

  // Stops the workers and starts n - 1 new ones.
  void resize(int n) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_.store(true);
    }
    wake_.notify_all();
    for (std::thread& w : workers_) w.join();
    workers_.clear();
    stopping_.store(false);
    for (int i = 1; i < n; ++i)
      workers_.emplace_back([this, i, seen = generation_.load()] { work(i - 1, seen); });
  }

  // How a loop reaches the workers without a lock in the common case. A
  // mutex taken by the caller and then by each worker, on their way in and
  // out, passed between the cores several times per loop, which made every
  // short loop longer (docs/bench-notes.md).
  // generation_ is even while a job is posted and odd while the caller
  // writes the next one. A worker joins by raising active_ and then checking
  // that generation_ has not moved; the caller makes generation_ odd and then
  // waits for active_ to be 0 before it writes job_. Both steps are
  // sequentially consistent, so one of the two always sees the other: job_
  // is never read while it is written.
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
    generation_.fetch_add(1);  // odd: the job is being written
    // A worker that joined the previous loop too late to get a task may
    // still hold its job: let it go before the job changes.
    wait_for_workers();
    job_ = {task, context, n, helpers, CpuSet::current()};
    failed_.store(false, std::memory_order_relaxed);
    next_.store(0, std::memory_order_relaxed);
    generation_.fetch_add(1);  // even: posted
    if (sleepers_.load() > 0) {
      std::lock_guard<std::mutex> lock(mutex_);  // so that no sleeper misses it
      wake_.notify_all();
    }
    take_tasks(job_);
    wait_for_workers();  // the workers still running a task they took
    if (failed_.load()) {
      std::lock_guard<std::mutex> lock(mutex_);
      std::rethrow_exception(error_);
    }
  }

 private:
  struct Job {
    void (*task)(void*, std::size_t) = nullptr;
    void* context = nullptr;
    std::size_t n = 0;
    int helpers = 0;      // workers 0..helpers-1 take part
    int caller_cpu = -1;  // the core the calling thread ran on, -1 if unknown
  };

  // Cores that other programs leave free: the number of cores, less the CPU
  // time everyone else used over the last kLoadPeriod or more, in cores
  // (rounded). On a machine where every core is taken, a helper would only
  // wait for a core, and the loop would wait for it; the loop then runs on
  // the calling thread alone. CPU time, not /proc/loadavg's count of running
  // threads: on a virtual machine that count included a thread that used no
  // CPU at all, and a quiet training step then ran on one core.
  int free_cores() {
#ifdef __linux__
    auto now = std::chrono::steady_clock::now();
    if (now - load_checked_ >= kLoadPeriod) {
      CpuTicks ticks = cpu_ticks();
      if (ticks.valid && last_ticks_.valid) {
        double seconds = std::chrono::duration<double>(now - load_checked_).count();
        // Both counts only grow, but they are sampled apart: the difference
        // can dip below 0 (detail::free_cores reads that as 0).
        double others =
            (double(ticks.all - last_ticks_.all) - double(ticks.own - last_ticks_.own)) /
            ticks_per_second_ / seconds;  // in cores
        free_cores_ = detail::free_cores(cores_, others);
      }
      last_ticks_ = ticks;
      load_checked_ = now;
    }
    return free_cores_;
#else
    return cores_;
#endif
  }

#ifdef __linux__
  struct CpuTicks {
    unsigned long long all = 0, own = 0;
    bool valid = false;
  };
  static CpuTicks cpu_ticks() {
    CpuTicks t;
    char line[1024];
    bool all = false, own = false;
    if (std::FILE* f = std::fopen("/proc/stat", "r")) {
      all = std::fgets(line, sizeof line, f) && detail::all_cores_busy_ticks(line, t.all);
      std::fclose(f);
    }
    if (std::FILE* f = std::fopen("/proc/self/stat", "r")) {
      own = std::fgets(line, sizeof line, f) && detail::own_ticks(line, t.own);
      std::fclose(f);
    }
    t.valid = all && own;
    return t;
  }
#endif

  // Runs tasks until none is left. A task that throws stops the loop: the
  // others are skipped, and run() rethrows the first exception.
  void take_tasks(const Job& job) {
    detail::InTask mark;
    try {
      for (std::size_t i; (i = next_.fetch_add(1)) < job.n;) job.task(job.context, i);
    } catch (...) {
      next_.store(job.n);
      std::lock_guard<std::mutex> lock(mutex_);
      if (!failed_.load()) error_ = std::current_exception();
      failed_.store(true);
    }
  }

  // Returns once no worker holds the job: spins for kSpin, then sleeps until
  // the last one leaves (leave() wakes it).
  void wait_for_workers() {
    if (spin_until([&] { return active_.load() == 0; }, kSpin)) return;
    std::unique_lock<std::mutex> lock(mutex_);
    caller_asleep_.store(true);
    done_.wait(lock, [&] { return active_.load() == 0; });
    caller_asleep_.store(false);
  }

  // A worker lets go of the job; the last one out wakes a sleeping caller.
  void leave() {
    if (active_.fetch_sub(1) == 1 && caller_asleep_.load()) {
      std::lock_guard<std::mutex> lock(mutex_);
      done_.notify_all();
    }
  }

  // A worker's life: wait for a job, take tasks, and again. Two rules keep a
  // worker out of the calling thread's way while another program keeps a
  // core busy. Without them, beside one busy thread on a 2-core machine, the
  // caller and the worker shared one core more than half of the time (the
  // system, finding no idle core, wakes a thread up on the core of the
  // thread that woke it), and a training step took as long as on one
  // thread.
  // - A worker keeps off the core the caller ran on when it started the
  //   loop (CpuSet::keep_off; a system call only when that core changes).
  // - After a job of kLongJob or more a worker sleeps at once instead of
  //   spinning. Such loops gain little from a worker already awake, and
  //   beside a busy thread the spinning kept the step slow even with the
  //   first rule. Decoding, whose loops are short, keeps the spin, which it
  //   needs. So do loops of a few hundred microseconds, such as a large
  //   decode step's attention loops: with a shorter kLongJob the worker
  //   slept after each of them and was woken again for the next.
  // docs/bench-notes.md ("The thread pool") has the measurements.
  void work(int index, unsigned seen) {
    const CpuSet allowed = CpuSet::of_this_thread();
    int kept_off = -1;  // the caller's core this worker keeps off (-1: none yet)
    bool long_job = false;
    for (;;) {
      auto new_job = [&] {
        unsigned g = generation_.load();
        return (g != seen && g % 2 == 0) || stopping_.load();
      };
      if (!spin_until(new_job, long_job ? std::chrono::microseconds(0) : kSpin)) {
        std::unique_lock<std::mutex> lock(mutex_);
        ++sleepers_;
        wake_.wait(lock, new_job);
        --sleepers_;
      }
      if (stopping_.load()) return;
      seen = generation_.load();
      if (seen % 2 != 0) continue;  // the next job is already being written
      active_.fetch_add(1);
      // The caller may have begun the next job before this worker joined:
      // then it will wait for this worker to leave, and the job is not read.
      if (generation_.load() != seen || index >= job_.helpers || next_.load() >= job_.n) {
        leave();
        continue;
      }
      Job job = job_;
      if (job.caller_cpu != kept_off) {  // a system call only when the caller moved
        allowed.keep_off(job.caller_cpu);
        kept_off = job.caller_cpu;
      }
      auto start = std::chrono::steady_clock::now();
      take_tasks(job);
      long_job = std::chrono::steady_clock::now() - start >= kLongJob;
      leave();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex run_mutex_;  // one loop at a time
  std::mutex mutex_;      // guards error_, and the sleeps on wake_ and done_
  std::condition_variable wake_, done_;
  Job job_;
  std::atomic<std::size_t> next_{0};  // the next task number to take
  std::atomic<unsigned> generation_{0};
  std::atomic<int> active_{0};              // workers holding the current job
  std::atomic<int> sleepers_{0};            // workers asleep on wake_
  std::atomic<bool> caller_asleep_{false};  // the caller sleeps on done_
  std::atomic<bool> stopping_{false};
  std::atomic<bool> failed_{false};  // a task threw: error_ holds the first exception
  std::exception_ptr error_;         // guarded by mutex_
  const int cores_ = int(std::max(1u, std::thread::hardware_concurrency()));
  std::chrono::steady_clock::time_point load_checked_{};
  int free_cores_ = cores_;
#ifdef __linux__
  CpuTicks last_ticks_;
  const double ticks_per_second_ = double(std::max(1L, sysconf(_SC_CLK_TCK)));
#endif
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
