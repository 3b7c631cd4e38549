// weights16.h: keeping a model's matrices in 16 bits for inference, as
// checkpoints store them (bfloat16 or IEEE half) and as llama.cpp and MLX
// run them.
//
// A decode step reads every weight once and does two flops with each: its
// time is the weights' bytes over the memory's bandwidth. Kept in 16 bits
// they are half the bytes of float32. Only the projections are kept so: q,
// k, v and o of each layer, gate, up and down of its MLP, and lm_head, which
// are nearly all of a model's bytes. Each is multiplied with float32
// activations, every weight widened to float32 as it is read, its products
// summed in float32 (linear16). The rest stays float32: the embedding (one
// row per token), the norms, RoPE, softmax, the K/V cache and every
// activation.
//
// For inference only: a forward with 16-bit weights runs under no_grad
// (training, gradients, trace and check use float32 weights).
//   GlassLM model = load_checkpoint(dir, std::nullopt, false, WeightType::bf16).model;
//   no_grad guard;
//   Tensor logits = model.forward({1, 2, 3});
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "glassllm/engine/tensor.h"

namespace glassllm {

class GlassLM;  // model.h

/// How a model keeps its projections' weights: as float32 Tensors (f32, the
/// engine's own), or in 16 bits, bfloat16 or IEEE half.
enum class WeightType { f32, bf16, f16 };
const char* weight_type_name(WeightType type);  ///< "f32", "bf16", "f16"
/// The type named by `name`; throws std::invalid_argument
/// "--weights: unknown type 'x'; expected bf16, f16 or f32" otherwise.
WeightType parse_weight_type(const std::string& name);

/// One float32 number in 16 bits, rounded to the nearest (ties to even; too
/// large: inf), and back, exactly. `type` is bf16 or f16.
std::uint16_t to_16_bits(WeightType type, float value);
float from_16_bits(WeightType type, std::uint16_t bits);

/// One projection's weight [rows, cols] = [out, in], row-major, in 16 bits.
struct Weight16 {
  WeightType type = WeightType::bf16;
  std::size_t rows = 0, cols = 0;
  std::vector<std::uint16_t> bits;

  /// A float32 or float64 weight [out, in] rounded to `type`.
  static Weight16 from_tensor(const Tensor& weight, WeightType type);
  /// The weight as float32 [rows, cols], every element exact.
  Tensor to_tensor() const;
  std::size_t nbytes() const { return bits.size() * sizeof(std::uint16_t); }
};

/// The 16-bit projections of a model (GlassLM::weights16).
struct Weights16 {
  WeightType type = WeightType::bf16;
  struct Layer {
    Weight16 q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj;
  };
  std::vector<Layer> layers;
  Weight16 lm_head;

  /// The weight with this Hugging Face name ("model.layers.0.self_attn.q_proj.weight",
  /// "lm_head.weight"), or nullptr for a name that is not kept in 16 bits.
  Weight16* find(const std::string& name);
  const Weight16* find(const std::string& name) const;
  /// Bytes of all the 16-bit weights.
  std::size_t nbytes() const;
};

/// A copy of a float32 model whose projections and lm_head are rounded to
/// `type` (bf16 or f16) and kept only so (GlassLM::weights16); the other
/// weights are shared with `model`. Throws for a model that is not float32.
GlassLM keep_in_16_bits(const GlassLM& model, WeightType type);

/// Whether the weight with this name is one that Weights16 keeps (a
/// projection or lm_head; not a norm, a bias or the embedding).
bool kept_in_16_bits(const std::string& name);

/// y = x W^T for x [..., in] float32 and W [out, in] in 16 bits:
/// [..., in] -> [..., out] float32, each weight widened to float32 and the
/// sums made in float32. Not recorded for backward: throws
/// std::invalid_argument when grad mode is on and x requires a gradient.
Tensor linear16(const Tensor& x, const Weight16& w);

}  // namespace glassllm
