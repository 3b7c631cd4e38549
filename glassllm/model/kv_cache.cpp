// kv_cache.cpp: the K/V cache of model.h, KVCache, in its two modes: a
// concatenating cache (each append copies what it holds into a new, longer
// array) and a preallocated one (one buffer of max_len positions, written in
// place). Either way it holds keys after RoPE and values after their
// projection, for Hkv heads, detached from the graph.
//
// GlassLM::forward (model.cpp) appends to it; tests/test_model.cpp checks
// that both modes give the logits of a full forward.
#include <cstring>
#include <stdexcept>

#include "glassllm/engine/ops.h"
#include "glassllm/model/model.h"

namespace glassllm {

const char* cache_mode_name(CacheMode m) {
  return m == CacheMode::concat ? "concat" : "preallocated";
}

CacheMode parse_cache_mode(const std::string& name) {
  if (name == "concat") return CacheMode::concat;
  if (name == "preallocated") return CacheMode::preallocated;
  throw std::invalid_argument("cache: unknown mode '" + name +
                              "'; expected concat or preallocated");
}

KVCache::KVCache(CacheMode mode, std::size_t capacity)
    : mode_(mode), capacity_(capacity) {
  if (mode == CacheMode::preallocated && capacity == 0)
    throw std::invalid_argument("KVCache: a preallocated cache needs a capacity > 0");
}

std::size_t KVCache::nbytes() const {
  return (k_.defined() ? k_.nbytes() : 0) + (v_.defined() ? v_.nbytes() : 0);
}

void KVCache::clear() {
  // Drop the buffers rather than reuse them: a graph recorded earlier may still
  // read them, and overwriting them in place would change its inputs.
  k_ = Tensor();
  v_ = Tensor();
  length_ = 0;
}

void KVCache::append(const Tensor& k_new, const Tensor& v_new) {
  check_fits(k_new, v_new);
  if (mode_ == CacheMode::concat)
    append_by_concat(k_new, v_new);
  else
    append_in_place(k_new, v_new);
  length_ += k_new.dim(2);
}

void KVCache::check_fits(const Tensor& k_new, const Tensor& v_new) const {
  if (!k_new.defined() || !v_new.defined())
    throw std::invalid_argument("KVCache::append: k or v is undefined");
  if (k_new.ndim() != 4 || k_new.shape() != v_new.shape())
    throw std::invalid_argument(
        "KVCache::append: expected k and v of one shape [B, Hkv, T, hd], got " +
        shape_str(k_new.shape()) + " and " + shape_str(v_new.shape()));
  if (k_new.dtype() != v_new.dtype())
    throw std::invalid_argument("KVCache::append: k is " +
                                std::string(dtype_name(k_new.dtype())) + " but v is " +
                                dtype_name(v_new.dtype()));
  const Shape& s = k_new.shape();
  if (length_ > 0 || k_.defined()) {
    const Shape& held = k_.shape();
    if (s[0] != held[0] || s[1] != held[1] || s[3] != held[3] ||
        k_new.dtype() != k_.dtype())
      throw std::invalid_argument(
          "KVCache::append: new k/v " + shape_str(s) + " " + dtype_name(k_new.dtype()) +
          " do not fit the cache's [B, Hkv, m, hd] = " + shape_str(held) + " " +
          dtype_name(k_.dtype()) + "; B, Hkv, hd and dtype must match");
  }
  const std::size_t T = s[2];
  if (mode_ == CacheMode::preallocated && length_ + T > capacity_)
    throw std::invalid_argument("KVCache::append: " + std::to_string(T) +
                                " new positions do not fit: the cache holds " +
                                std::to_string(length_) + " of " +
                                std::to_string(capacity_));
}

// [B, Hkv, m, hd] + [B, Hkv, T, hd] -> [B, Hkv, m+T, hd]: a new array each
// time (the old one is copied). Detached: no gradient flows into history.
void KVCache::append_by_concat(const Tensor& k_new, const Tensor& v_new) {
  if (append_fn) {
    // An append supplied at run time (model.h): check what it returns.
    const Shape& s = k_new.shape();
    const Shape want{s[0], s[1], length_ + s[2], s[3]};
    auto grow = [&](const Tensor& held, const Tensor& fresh, const char* which) {
      Tensor next = append_fn(held, fresh);
      if (!next.defined() || next.shape() != want || next.dtype() != fresh.dtype())
        throw std::invalid_argument(
            std::string("KVCache::append: append_fn returned ") +
            (next.defined() ? shape_str(next.shape()) + " " + dtype_name(next.dtype())
                            : std::string("an undefined tensor")) +
            " for " + which + "; expected " + shape_str(want) + " " +
            dtype_name(fresh.dtype()) + " (the " + std::to_string(length_) +
            " held positions then the " + std::to_string(s[2]) + " new ones, axis 2)");
      return next;
    };
    Tensor k_next = grow(k_, k_new, "k"), v_next = grow(v_, v_new, "v");
    k_ = k_next;
    v_ = v_next;
  } else if (!k_.defined()) {
    k_ = k_new.detach();
    v_ = v_new.detach();
  } else {
    k_ = concat({k_, k_new.detach()}, 2);
    v_ = concat({v_, v_new.detach()}, 2);
  }
}

// Preallocated: one [B, Hkv, capacity, hd] buffer of zeros, made on the
// first append, and the new positions copied into slots length_ ..
// length_+T-1 in place. The length is stored explicitly, never inferred from
// the contents (a key row may legitimately be all zeros).
void KVCache::append_in_place(const Tensor& k_new, const Tensor& v_new) {
  const Shape& s = k_new.shape();
  if (!k_.defined()) {
    Shape buffer{s[0], s[1], capacity_, s[3]};
    k_ = zeros(buffer, k_new.dtype());
    v_ = zeros(buffer, k_new.dtype());
  }
  const std::size_t rows = s[0] * s[1], T = s[2], hd = s[3];
  const std::size_t bytes = T * hd * dtype_size(k_new.dtype());
  auto write = [&](Tensor& buffer, const Tensor& src, auto zero) {
    using E = decltype(zero);
    const E* from = src.data<E>();
    E* to = buffer.mutable_data<E>();
    for (std::size_t r = 0; r < rows; ++r)  // one contiguous [T, hd] run per (b, head)
      std::memcpy(to + (r * capacity_ + length_) * hd, from + r * T * hd, bytes);
  };
  if (k_new.dtype() == DType::float32) {
    write(k_, k_new, float{});
    write(v_, v_new, float{});
  } else {
    write(k_, k_new, double{});
    write(v_, v_new, double{});
  }
}

Cache GlassLM::new_cache(CacheMode mode) const {
  std::size_t capacity = mode == CacheMode::preallocated ? cfg_.max_len : 0;
  return Cache(cfg_.n_layers, KVCache(mode, capacity));
}

}  // namespace glassllm
