// test_threads.cpp: the pool that spreads matrix products and loops over the
// cores (glassllm/fast/pool.h): every task runs exactly once, a loop inside a
// task runs on that thread, and a training step computes the same bits on
// one thread as on three (the work is cut by sizes, never by thread count).
#include <atomic>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <thread>
#include <vector>
#ifdef __linux__
#include <sched.h>
#endif

#include "glassllm/engine/ops.h"
#include "glassllm/fast/blas.h"
#include "glassllm/fast/pool.h"
#include "glassllm/io/tokenizer.h"
#include "glassllm/model/model.h"
#include "tests/check.h"

using namespace glassllm;

TEST_CASE("parallel_for runs every task exactly once, on any number of threads") {
  const int previous = blas_info().threads;
  for (int threads : {1, 2, 4}) {
    CAPTURE(threads);
    set_blas_threads(threads);
    for (std::size_t n : {0u, 1u, 2u, 7u, 1000u}) {
      std::vector<std::atomic<int>> runs(n);
      pool::parallel_for(n, [&](std::size_t i) { runs[i]++; });
      int total = 0;
      for (auto& r : runs) {
        CHECK(r.load() == 1);
        total += r.load();
      }
      CHECK(total == int(n));
    }
    // ranges of 3 over 10 items: [0,3) [3,6) [6,9) [9,10)
    std::vector<int> owner(10, -1);
    pool::parallel_ranges(10, 3, [&](std::size_t first, std::size_t last) {
      for (std::size_t i = first; i < last; ++i) owner[i] = int(first);
    });
    CHECK(owner == std::vector<int>{0, 0, 0, 3, 3, 3, 6, 6, 6, 9});
    // A loop inside a task runs on the task's own thread, in order.
    std::vector<std::vector<std::size_t>> order(4);
    pool::parallel_for(4, [&](std::size_t t) {
      CHECK(pool::inside_task());
      pool::parallel_for(5, [&](std::size_t i) { order[t].push_back(i); });
    });
    for (const auto& o : order) CHECK(o == std::vector<std::size_t>{0, 1, 2, 3, 4});
    CHECK_FALSE(pool::inside_task());
    // A task's exception reaches the caller, and the pool keeps working.
    CHECK_THROWS_WITH_AS(pool::parallel_for(100,
                                            [](std::size_t i) {
                                              if (i == 5)
                                                throw std::runtime_error("task 5");
                                            }),
                         "task 5", std::runtime_error);
    CHECK_FALSE(pool::inside_task());
    std::atomic<int> after{0};
    pool::parallel_for(50, [&](std::size_t) { after++; });
    CHECK(after.load() == 50);
  }
  set_blas_threads(previous);
}

TEST_CASE(
    "loops in quick succession, and after the workers fell asleep, run every task once") {
  // The hand-over between the caller and the workers has no lock while the
  // workers spin (pool.cpp): run many short loops back to back, where a
  // worker may join a loop just as the next one is being posted, and a few
  // after a pause in which the workers go to sleep.
  const int previous = blas_info().threads;
  for (int threads : {2, 3}) {
    CAPTURE(threads);
    set_blas_threads(threads);
    for (int loop = 0; loop < 20000; ++loop) {
      const std::size_t n = 1 + std::size_t(loop % 5);
      if (loop % 5000 == 4999) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      std::atomic<int> runs[5] = {};
      pool::parallel_for(n, [&](std::size_t i) { runs[i]++; });
      int wrong = 0;
      for (std::size_t i = 0; i < 5; ++i) wrong += runs[i].load() != (i < n ? 1 : 0);
      REQUIRE(wrong == 0);
    }
  }
  set_blas_threads(previous);
}

TEST_CASE("a training step's loss and gradients are the same bits on 1 and 3 threads") {
  // The bench's shapes (d_model 128, d_ff 384, 4 layers) at batch 4: large
  // enough that products and loops are cut into several tasks.
  Config cfg;
  cfg.vocab_size = Tokenizer().vocab_size();
  GlassLM model(cfg, 3);
  for (auto& [name, w] : model.named_parameters()) w.requires_grad_();
  Rng rng(11);
  TokenBatch tokens(4, std::vector<std::int64_t>(cfg.max_len)), targets = tokens;
  for (auto* batch : {&tokens, &targets})
    for (auto& row : *batch)
      for (auto& id : row) id = std::int64_t(rng.randint(cfg.vocab_size));
  auto step = [&](int threads) {
    set_blas_threads(threads);
    for (auto& [name, w] : model.named_parameters()) w.zero_grad();
    Tensor loss = model.loss(tokens, targets);
    loss.backward();
    std::vector<std::vector<double>> out{loss.to_vector()};
    for (auto& [name, w] : model.named_parameters()) out.push_back(w.grad().to_vector());
    return out;
  };
  const int previous = blas_info().threads;
  auto one = step(1), three = step(3);
  set_blas_threads(previous);
  REQUIRE(one.size() == three.size());
  for (std::size_t i = 0; i < one.size(); ++i) {
    CAPTURE(i);
    CHECK(one[i] == three[i]);  // exact, not approximately
  }
  CHECK(std::isfinite(one[0][0]));
}

TEST_CASE("the pool counts the cores other programs leave it from /proc's CPU times") {
  using namespace pool::detail;
  unsigned long long ticks = 0;
  // /proc/stat's first line: user nice system idle iowait irq softirq steal
  // guest guest_nice; busy = all but idle and iowait = 3162031 + 137966 +
  // 655009 + 0 + 1367 + 2552.
  REQUIRE(all_cores_busy_ticks(
      "cpu  3162031 137966 655009 1439992 6964 0 1367 2552 0 0\n", ticks));
  CHECK(ticks == 3958925ULL);
  CHECK_FALSE(all_cores_busy_ticks("intr 1 2 3\n", ticks));
  CHECK_FALSE(all_cores_busy_ticks("cpu  1 2 3\n", ticks));  // too few fields
  // /proc/self/stat: utime and stime are fields 14 and 15 (here 150 and 23),
  // counted after the name, which may itself hold spaces and ')'.
  const char* self =
      "4242 (my prog) (x) R 1 4242 4242 0 -1 4194560 500 0 0 0 150 23 0 0 20 0 3 0 "
      "100 1000 100\n";
  REQUIRE(own_ticks(self, ticks));
  CHECK(ticks == 173ULL);
  CHECK_FALSE(own_ticks("4242 no parenthesis\n", ticks));
  CHECK_FALSE(own_ticks("4242 (short) R 1 2\n", ticks));
  // 2 cores: others using about a whole core leave one; less than half a
  // core is noise (CPU time comes in 10 ms ticks); never fewer than 1.
  CHECK(free_cores(2, 0.0) == 2);
  CHECK(free_cores(2, 0.3) == 2);
  CHECK(free_cores(2, -0.1) == 2);  // the two counts sampled apart
  CHECK(free_cores(2, 0.9) == 1);
  CHECK(free_cores(2, 1.1) == 1);
  CHECK(free_cores(2, 6.0) == 1);
  CHECK(free_cores(8, 2.6) == 5);
}

#ifdef __linux__
// Each task keeps its thread busy for about a millisecond and notes which
// thread ran it, on which core.
struct TaskPlace {
  std::thread::id thread;
  int cpu;
};
static std::vector<TaskPlace> run_busy_tasks(std::size_t n) {
  std::vector<TaskPlace> places(n);
  pool::parallel_for(n, [&](std::size_t i) {
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1);
    while (std::chrono::steady_clock::now() < until) {
    }
    places[i] = {std::this_thread::get_id(), sched_getcpu()};
  });
  return places;
}

TEST_CASE("a worker keeps off the core of the thread that started the loop") {
  cpu_set_t original;
  REQUIRE(sched_getaffinity(0, sizeof original, &original) == 0);
  if (CPU_COUNT(&original) < 2) {
    MESSAGE("skipped: this process may use only one core");
    return;
  }
  const int previous = blas_info().threads;
  set_blas_threads(2);
  const auto me = std::this_thread::get_id();
  // Find a core the worker runs on (it takes part only if the machine
  // leaves the pool a second core).
  int worker_cpu = -1;
  for (int attempt = 0; attempt < 5 && worker_cpu < 0; ++attempt)
    for (const TaskPlace& p : run_busy_tasks(20))
      if (p.thread != me) worker_cpu = p.cpu;
  if (worker_cpu < 0) {
    MESSAGE("skipped: the worker took no task (the other cores are busy)");
    set_blas_threads(previous);
    return;
  }
  // Move the calling thread onto the worker's core, and keep every other
  // core busy, so that the system has no idle core to wake the worker on:
  // the worker, still there, must leave it before it takes a task.
  cpu_set_t only;
  CPU_ZERO(&only);
  CPU_SET(worker_cpu, &only);
  REQUIRE(sched_setaffinity(0, sizeof only, &only) == 0);
  std::atomic<bool> stop{false};
  std::vector<std::thread> busy;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &original) && cpu != worker_cpu)
      busy.emplace_back([&stop, cpu] {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        sched_setaffinity(0, sizeof one, &one);
        while (!stop.load(std::memory_order_relaxed)) {
        }
      });
  int worker_tasks = 0;
  for (int attempt = 0; attempt < 5 && worker_tasks == 0; ++attempt)
    for (const TaskPlace& p : run_busy_tasks(20)) {
      CHECK(p.cpu >= 0);
      if (p.thread == me) {
        CHECK(p.cpu == worker_cpu);
      } else {
        ++worker_tasks;
        CHECK(p.cpu != worker_cpu);
      }
    }
  stop = true;
  for (std::thread& t : busy) t.join();
  sched_setaffinity(0, sizeof original, &original);
  set_blas_threads(previous);
  if (worker_tasks == 0) MESSAGE("the worker took no task beside the pinned caller");
}
#endif
