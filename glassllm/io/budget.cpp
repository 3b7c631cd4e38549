// budget.cpp: memory estimates from sizes (budget.h). Every count is a double:
// sizes given on a command line can be large enough for their products to
// overflow 64-bit integers, and an estimate needs no more than 15 digits.
#include "glassllm/io/budget.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>

namespace glassllm {

std::uint64_t machine_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  std::uint64_t bytes =
      pages > 0 && page > 0 ? std::uint64_t(pages) * std::uint64_t(page) : 0;
#if !defined(__EMSCRIPTEN__)  // the page's engine has no file system to read
  // A container's limit (cgroup v2): a number of bytes, or "max".
  std::ifstream limit("/sys/fs/cgroup/memory.max");
  std::uint64_t cgroup = 0;
  if (limit >> cgroup && cgroup > 0 && (bytes == 0 || cgroup < bytes)) bytes = cgroup;
#endif
  return bytes ? bytes : std::uint64_t(1) << 32;  // unknown: assume 4 GiB
}

std::string human_bytes(double bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024 && u < 6) {
    bytes /= 1024;
    ++u;
  }
  char buf[64];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%.0f bytes", bytes);
  else
    std::snprintf(buf, sizeof buf, "%.3g %s", bytes, units[u]);
  return buf;
}

double parameter_bytes(const Config& c, DType dtype) {
  const double V = double(c.vocab_size), D = double(c.d_model), F = double(c.d_ff);
  const double q_out = double(c.n_heads) * double(c.head_dim());
  const double kv_out = double(c.n_kv_heads) * double(c.head_dim());
  // embed_tokens and lm_head [V, D]; per layer two norms [D], q_proj and o_proj
  // [H*hd, D], k_proj and v_proj [Hkv*hd, D], three MLP matrices [F, D]; the
  // final norm [D].
  const double per_layer = 2 * D + 2 * q_out * D + 2 * kv_out * D + 3 * F * D;
  const double count = 2 * V * D + double(c.n_layers) * per_layer + D;
  return count * double(dtype_size(dtype));
}

double preallocated_cache_bytes(const Config& c, DType dtype, std::size_t batch) {
  return 2.0 * double(c.n_layers) * double(batch) * double(c.n_kv_heads) *
         double(c.max_len) * double(c.head_dim()) * double(dtype_size(dtype));
}

double training_step_bytes(const Config& c, DType dtype, std::size_t batch_size) {
  const double BT = double(batch_size) * double(c.max_len);
  const double D = double(c.d_model), F = double(c.d_ff), H = double(c.n_heads);
  const double hd = double(c.head_dim()), T = double(c.max_len);
  // Kept per layer, per token: the residual and normed inputs (~6 x D), q, k,
  // v, their RoPE'd and repeated copies (~6 x H*hd), the MLP's three [F]
  // vectors; per row and head: scores and probabilities [T, T].
  const double per_layer = BT * (6 * D + 6 * H * hd + 3 * F) + 2 * BT * H * T;
  // The logits [B, T, V], the softmax inside the loss, its gradient.
  const double head = 3 * BT * double(c.vocab_size);
  const double activations = double(c.n_layers) * per_layer + head;
  // Weights, gradients and two moments; activations and their gradients.
  return 4 * parameter_bytes(c, dtype) + 2 * activations * double(dtype_size(dtype));
}

void check_fits_in_memory(const std::string& what, double bytes,
                          const std::string& hint) {
  const double have = double(machine_memory_bytes());
  if (bytes > have)
    throw TooLarge(what + " needs about " + human_bytes(bytes) + ", more than the " +
                   human_bytes(have) + " of memory here; " + hint);
}

}  // namespace glassllm
