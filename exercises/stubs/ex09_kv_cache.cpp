// ex09_kv_cache.cpp: Exercise 9, the K/V cache's append.
// Task, shapes and hints: docs/exercises/ex09-kv-cache.md. Grade it with
//   ctest --test-dir build -L ex09      (or build/exercises/glassllm_exercises 9)
// The grader installs your function as every layer's KVCache::append_fn
// (model.h) and decodes with the real model.
#include <algorithm>

#include "exercises/exercises.h"

namespace glassllm::exercises {

// doc:begin task
Tensor my_cache_append(const Tensor& held, const Tensor& fresh) {
  // TODO(exercise 9): held [B, Hkv, m, hd] (undefined while the cache is
  // empty), fresh [B, Hkv, T, hd] -> a new tensor [B, Hkv, m+T, hd]:
  // positions 0..m-1 from held, m..m+T-1 from fresh. Do not write into held,
  // and return a tensor detached from the graph. Write the copy yourself:
  // make zeros(...) and copy blocks with data<double>() / mutable_data<double>()
  // (float for float32 tensors); which numbers are contiguous in row-major
  // [B, Hkv, m, hd]?
  throw NotImplemented(9);
}
// doc:end task

}  // namespace glassllm::exercises
