// weights16.cpp: a model's projections kept in 16 bits (weights16.h), and
// linear16, the product that GlassLM::forward calls for them. The kernel is
// glassllm/fast/weights16.cpp; this file says what it computes.
#include "glassllm/model/weights16.h"

#include <stdexcept>

#include "glassllm/engine/ops.h"
#include "glassllm/fast/kernels.h"
#include "glassllm/model/model.h"

namespace glassllm {

namespace {

fast::Half half_of(WeightType type) {
  if (type == WeightType::f32)
    throw std::invalid_argument("weights16: f32 is not a 16-bit type");
  return type == WeightType::bf16 ? fast::Half::bf16 : fast::Half::f16;
}

}  // namespace

const char* weight_type_name(WeightType type) {
  if (type == WeightType::bf16) return "bf16";
  return type == WeightType::f16 ? "f16" : "f32";
}

WeightType parse_weight_type(const std::string& name) {
  if (name == "bf16") return WeightType::bf16;
  if (name == "f16") return WeightType::f16;
  if (name == "f32") return WeightType::f32;
  throw std::invalid_argument("--weights: unknown type '" + name +
                              "'; expected bf16, f16 or f32");
}

std::uint16_t to_16_bits(WeightType type, float value) {
  return fast::float_to_half(half_of(type), value);
}

float from_16_bits(WeightType type, std::uint16_t bits) {
  return fast::half_to_float(half_of(type), bits);
}

Weight16 Weight16::from_tensor(const Tensor& weight, WeightType type) {
  if (weight.ndim() != 2)
    throw std::invalid_argument("Weight16: a weight must be 2-D [out, in], got " +
                                shape_str(weight.shape()));
  // float64 is rounded to float32 first, then to 16 bits: the two roundings
  // can differ from one (a tie made by the first), never by more than that.
  Tensor w = weight.dtype() == DType::float32 ? weight : astype(weight, DType::float32);
  Weight16 out;
  out.type = type;
  out.rows = w.dim(0);
  out.cols = w.dim(1);
  out.bits.resize(w.size());
  fast::floats_to_halves(half_of(type), w.data<float>(), out.bits.data(), w.size());
  return out;
}

Tensor Weight16::to_tensor() const {
  Tensor t = empty({rows, cols});
  fast::halves_to_floats(half_of(type), bits.data(), t.mutable_data<float>(),
                         bits.size());
  return t;
}

Weight16* Weights16::find(const std::string& name) {
  if (name == "lm_head.weight") return &lm_head;
  const std::string prefix = "model.layers.";
  if (!name.starts_with(prefix)) return nullptr;
  std::size_t used = 0, l = 0;
  try {
    l = std::stoul(name.substr(prefix.size()), &used);
  } catch (const std::exception&) {
    return nullptr;
  }
  if (l >= layers.size()) return nullptr;
  const std::string rest = name.substr(prefix.size() + used);
  Layer& w = layers[l];
  if (rest == ".self_attn.q_proj.weight") return &w.q_proj;
  if (rest == ".self_attn.k_proj.weight") return &w.k_proj;
  if (rest == ".self_attn.v_proj.weight") return &w.v_proj;
  if (rest == ".self_attn.o_proj.weight") return &w.o_proj;
  if (rest == ".mlp.gate_proj.weight") return &w.gate_proj;
  if (rest == ".mlp.up_proj.weight") return &w.up_proj;
  if (rest == ".mlp.down_proj.weight") return &w.down_proj;
  return nullptr;
}

const Weight16* Weights16::find(const std::string& name) const {
  return const_cast<Weights16*>(this)->find(name);
}

std::size_t Weights16::nbytes() const {
  std::size_t n = lm_head.nbytes();
  for (const Layer& w : layers)
    for (const Weight16* p : {&w.q_proj, &w.k_proj, &w.v_proj, &w.o_proj, &w.gate_proj,
                              &w.up_proj, &w.down_proj})
      n += p->nbytes();
  return n;
}

bool kept_in_16_bits(const std::string& name) {
  if (name == "lm_head.weight") return true;
  if (!name.starts_with("model.layers.")) return false;
  for (const char* end :
       {".q_proj.weight", ".k_proj.weight", ".v_proj.weight", ".o_proj.weight",
        ".gate_proj.weight", ".up_proj.weight", ".down_proj.weight"})
    if (name.ends_with(end)) return true;
  return false;
}

GlassLM keep_in_16_bits(const GlassLM& model, WeightType type) {
  if (model.dtype() != DType::float32 || model.weights16)
    throw std::invalid_argument(
        "keep_in_16_bits: the model must have float32 weights, none in 16 bits yet");
  auto w16 = std::make_shared<Weights16>();
  w16->type = type;
  w16->layers.resize(model.config().n_layers);
  for (const auto& [name, t] : model.named_parameters())
    if (Weight16* w = w16->find(name)) *w = Weight16::from_tensor(t, type);
  GlassLM out = GlassLM::from_weights(
      model.config(), DType::float32,
      [&](const std::string& name, const Shape&) {
        return w16->find(name) ? Tensor() : model.parameter(name);
      },
      w16);
  out.attention = model.attention;
  out.custom_attention = model.custom_attention;
  return out;
}

// [..., in] float32 -> [..., out] float32: every row of x against every row
// of W (fast::linear16).
Tensor linear16(const Tensor& x, const Weight16& w) {
  if (x.dtype() != DType::float32)
    throw std::invalid_argument(std::string("linear16: x is ") + dtype_name(x.dtype()) +
                                "; 16-bit weights multiply float32 activations");
  if (x.ndim() == 0 || x.shape().back() != w.cols)
    throw std::invalid_argument("linear16: x of shape " + shape_str(x.shape()) +
                                " does not end in the weight's in-features (" +
                                std::to_string(w.cols) + ")");
  if (grad_enabled() && x.requires_grad())
    throw std::invalid_argument(
        "linear16: 16-bit weights are for inference; run under no_grad, or load "
        "float32 weights (--weights f32) for gradients");
  const std::size_t rows = x.size() / w.cols;
  Shape out_shape = x.shape();
  out_shape.back() = w.rows;
  Tensor y = empty(std::move(out_shape));
  fast::linear16(half_of(w.type), rows, w.rows, w.cols, x.data<float>(), w.bits.data(),
                 y.mutable_data<float>());
  return y;
}

}  // namespace glassllm
