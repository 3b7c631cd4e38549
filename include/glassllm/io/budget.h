// budget.h: how much memory a model, its K/V cache and its training need,
// estimated from the sizes alone, so that a command can refuse sizes this
// machine cannot hold before it allocates anything (a bare std::bad_alloc
// after minutes of work, or the machine swapping, helps no one).
//
// The estimates count the large arrays only (weights, gradients, optimizer
// moments, the activations autograd keeps, the cache); they are meant to be
// right within a small factor, which is all a refusal needs.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "glassllm/model/model.h"

namespace glassllm {

/// Thrown when an estimate exceeds the memory this machine has.
struct TooLarge : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The memory a process here may use: the physical memory, or the cgroup's
/// limit (memory.max) when that is smaller.
std::uint64_t machine_memory_bytes();

/// 1536 -> "1.5 KiB", 3.2e12 -> "2.91 TiB".
std::string human_bytes(double bytes);

/// Bytes of the weights of a model of `cfg` in `dtype` (each weight once).
double parameter_bytes(const Config& cfg, DType dtype);

/// Bytes of a preallocated K/V cache for `batch` rows: every layer's K and V,
/// [batch, Hkv, max_len, hd] each.
double preallocated_cache_bytes(const Config& cfg, DType dtype, std::size_t batch = 1);

/// Bytes one training step of batch_size rows of max_len tokens needs: the
/// weights, their gradients, two AdamW moments, and the activations of the
/// forward that autograd keeps for the backward (with their gradients).
double training_step_bytes(const Config& cfg, DType dtype, std::size_t batch_size);

/// Throws TooLarge, one line, when `bytes` exceed machine_memory_bytes():
///   "<what> needs about 3.64 TiB, more than the 23.4 GiB of memory here; <hint>"
void check_fits_in_memory(const std::string& what, double bytes, const std::string& hint);

}  // namespace glassllm
