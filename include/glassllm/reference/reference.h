// reference.h: the same model written the way the NumPy GlassLM wrote it,
// with xtensor arrays and xtensor-blas's dot, in float64.
//
// The engine (glassllm/engine/, glassllm/model/) computes GlassLM with its
// own Tensor, autograd and hand-written kernels. This layer computes the same
// logits a second, independent way: every step is an xtensor expression that
// reads line by line like the NumPy original (np.repeat, np.where, np.dot,
// x.transpose(0, 2, 1, 3), ...), and every matrix product goes through
// xt::linalg::dot. It implements every option of Config (q/k/v biases, RoPE
// scaling none/linear/llama3) and refuses, with a one-line error, a RoPE
// scaling it does not know. It has no autograd and is not fast: it exists to be read
// beside the engine and to check it (tests/test_reference.cpp compares the
// two to 1e-12). The code is glassllm/reference/reference.cpp; the page is
// docs/13-reference-in-numpy-style.md.
//
// Standard headers only: the xtensor arrays live in the .cpp.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "glassllm/model/model.h"

namespace glassllm {

/// Logits from the reference: values in row-major order and their shape,
/// [B, T, vocab_size].
struct ReferenceLogits {
  std::vector<double> values;
  Shape shape;
  /// The element at (b, t, token).
  double at(std::size_t b, std::size_t t, std::size_t token) const {
    return values[(b * shape[1] + t) * shape[2] + token];
  }
};

/// The reference's own K/V cache: one pair of arrays [B, Hkv, m, hd] per
/// layer, grown by concatenation. Make it with ReferenceModel::new_cache().
class ReferenceCache {
 public:
  ReferenceCache();
  ~ReferenceCache();
  ReferenceCache(ReferenceCache&&) noexcept;
  ReferenceCache& operator=(ReferenceCache&&) noexcept;
  /// Positions stored (m); 0 while empty.
  std::size_t length() const;

 private:
  friend class ReferenceModel;
  struct Layers;  // xt::xarray<double> k, v per layer (reference.cpp)
  std::unique_ptr<Layers> layers_;
};

/// A GlassLM's weights copied into float64 xtensor arrays, and the forward
/// pass written over them in NumPy style.
///   ReferenceModel ref(model);
///   ReferenceLogits full = ref.forward({{4, 5, 6, 7}});
///   ReferenceCache cache = ref.new_cache();
///   ref.forward({{4, 5, 6}}, &cache, 0);
///   ReferenceLogits next = ref.forward({{7}}, &cache, 3);  // == full's last row
class ReferenceModel {
 public:
  /// Copies every weight of `model` (float32 or float64) into float64 arrays.
  /// `path` chooses how query heads share K/V heads, as GlassLM::attention
  /// does: Attention::repeat_kv or Attention::grouped (custom throws).
  explicit ReferenceModel(const GlassLM& model, Attention path = Attention::repeat_kv);
  ~ReferenceModel();
  ReferenceModel(ReferenceModel&&) noexcept;
  ReferenceModel& operator=(ReferenceModel&&) noexcept;

  const Config& config() const;

  /// An empty cache for this model.
  ReferenceCache new_cache() const;

  /// Logits [B, T, vocab_size] for token ids [B][T] at positions start ..
  /// start+T-1. With a cache, start must equal cache->length() and the new
  /// keys and values are appended to it. Throws std::invalid_argument for
  /// ragged rows, an id outside the vocabulary, a wrong start, or start + T >
  /// max_len, as GlassLM::forward does.
  ReferenceLogits forward(const TokenBatch& tokens, ReferenceCache* cache = nullptr,
                          std::size_t start = 0) const;

 private:
  struct Weights;  // xt::xarray<double> per weight (reference.cpp)
  std::unique_ptr<Weights> w_;
};

}  // namespace glassllm
