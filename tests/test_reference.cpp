// The engine's GlassLM against the NumPy-style reference
// (glassllm/reference/reference.cpp): two computations of the same logits
// that share no code (the reference uses xtensor arrays and xtensor-blas's
// dot; the engine its own Tensor, ops and kernels). Both run in float64 and
// must agree to 1e-12, for both ways of sharing K/V heads, for the full
// forward and for decoding token by token through each one's own K/V cache.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "glassllm/engine/ops.h"
#include "glassllm/io/checkpoint.h"
#include "glassllm/io/files.h"
#include "glassllm/reference/reference.h"
#include "model_fixtures.h"

using namespace glassllm;
using glassllm::test::model::kPaths;

namespace {

constexpr double kTolerance = 1e-12;  // float64: about 1e4 ulps of logits near 1

// A small float64 model whose weights are big enough that the logits are of
// order 1 (the default initialisation, N(0, 0.02), gives logits near 0, where
// an absolute tolerance would prove little). Norm weights vary around 1.
GlassLM random_model_of(const Config& cfg) {
  GlassLM model(cfg, /*seed=*/7, DType::float64);
  Rng rng(2026);
  for (auto& [name, weight] : model.named_parameters()) {
    bool is_norm = name.find("norm") != std::string::npos;
    model.parameter(name) = is_norm
                                ? rng.normal(weight.shape(), 1.0, 0.2, DType::float64)
                                : rng.normal(weight.shape(), 0.0, 0.5, DType::float64);
  }
  return model;
}

GlassLM random_model(std::size_t n_heads = 4, std::size_t n_kv_heads = 2) {
  Config cfg;
  cfg.vocab_size = 19;
  cfg.d_model = 16;
  cfg.n_layers = 2;
  cfg.n_heads = n_heads;
  cfg.n_kv_heads = n_kv_heads;
  cfg.d_ff = 24;
  cfg.max_len = 12;
  return random_model_of(cfg);
}

// A published model's config.json (tests/data/real_configs/) with its
// options kept (rope_theta, rope_scaling, q/k/v biases) and its sizes made
// small: head_dim 8, so that RoPE has four frequencies, which for Llama 3's
// scaling fall one in each of its bands (kept, blended, slowed).
Config small_config_like(const std::string& file) {
  Config cfg =
      config_from_json(read_regular_file(std::string(GLASSLLM_TEST_DATA) + "/" + file))
          .first;
  cfg.vocab_size = 19;
  cfg.d_model = 16;
  cfg.n_layers = 2;
  cfg.n_heads = 4;
  cfg.n_kv_heads = 2;
  cfg.explicit_head_dim = 8;
  cfg.d_ff = 24;
  cfg.max_len = 12;
  return cfg;
}

// max |engine - reference| over logits of one shape.
double max_diff(const Tensor& engine, const ReferenceLogits& reference) {
  REQUIRE(engine.shape() == reference.shape);
  std::vector<double> e = engine.to_vector();
  double m = 0;
  for (std::size_t i = 0; i < e.size(); ++i)
    m = std::max(m, std::fabs(e[i] - reference.values[i]));
  return m;
}

double max_abs(const ReferenceLogits& r) {
  double m = 0;
  for (double v : r.values) m = std::max(m, std::fabs(v));
  return m;
}

// Full forward of `tokens` by both, then the same tokens one at a time
// through each one's cache (after a prefill of `prefill` tokens): every row
// of the engine's logits must match the reference's.
void compare_full_and_incremental(const GlassLM& model, const TokenBatch& tokens,
                                  std::size_t prefill) {
  const std::size_t T = tokens[0].size();
  ReferenceModel ref(model, model.attention);
  no_grad guard;

  // Full forward.
  Tensor engine_full = model.forward(tokens);
  ReferenceLogits ref_full = ref.forward(tokens);
  CHECK(max_abs(ref_full) > 0.5);  // logits of order 1: the tolerance means something
  CHECK(max_diff(engine_full, ref_full) <= kTolerance);

  // Incremental: prefill, then one token per step, each through its own cache.
  auto columns = [&](std::size_t from, std::size_t to) {
    TokenBatch part;
    for (const auto& row : tokens)
      part.emplace_back(row.begin() + from, row.begin() + to);
    return part;
  };
  Cache engine_cache = model.new_cache();
  ReferenceCache ref_cache = ref.new_cache();
  for (std::size_t start = 0; start < T;) {
    std::size_t stop = start == 0 ? prefill : start + 1;
    CAPTURE(start);
    Tensor engine_step = model.forward(columns(start, stop), &engine_cache, start);
    ReferenceLogits ref_step = ref.forward(columns(start, stop), &ref_cache, start);
    CHECK(ref_cache.length() == stop);
    CHECK(max_diff(engine_step, ref_step) <= kTolerance);
    // ... and equal to the rows start .. stop-1 of the full forward.
    for (std::size_t b = 0; b < tokens.size(); ++b)
      for (std::size_t t = start; t < stop; ++t)
        for (std::size_t c = 0; c < ref_full.shape[2]; ++c)
          REQUIRE(std::fabs(ref_step.at(b, t - start, c) - ref_full.at(b, t, c)) <=
                  kTolerance);
    start = stop;
  }
}

}  // namespace

TEST_CASE("reference: a random float64 model, full and incremental, both K/V paths") {
  for (Attention path : kPaths) {
    CAPTURE(attention_name(path));
    GlassLM model = random_model();
    model.attention = path;
    compare_full_and_incremental(model, TokenBatch{{3, 1, 4, 1, 5, 9, 2, 6, 5, 3}},
                                 /*prefill=*/3);
    // A batch of two sequences, and a prefill of a single token.
    compare_full_and_incremental(model, TokenBatch{{0, 18, 7, 7, 2}, {11, 4, 4, 16, 8}},
                                 /*prefill=*/1);
  }
}

TEST_CASE("reference: multi-head (Hkv = H) and multi-query (Hkv = 1) attention") {
  for (auto [heads, kv_heads] : {std::pair<std::size_t, std::size_t>{2, 2}, {4, 1}}) {
    CAPTURE(heads);
    CAPTURE(kv_heads);
    for (Attention path : kPaths) {
      CAPTURE(attention_name(path));
      GlassLM model = random_model(heads, kv_heads);
      model.attention = path;
      compare_full_and_incremental(model, TokenBatch{{5, 6, 7, 8, 9, 10}}, 2);
    }
  }
}

TEST_CASE("reference: a full forward at later positions (start > 0, no cache)") {
  GlassLM model = random_model();
  ReferenceModel ref(model);
  no_grad guard;
  TokenBatch tokens{{2, 7, 1, 8}};
  ReferenceLogits at5 = ref.forward(tokens, nullptr, 5);
  CHECK(max_diff(model.forward(tokens, nullptr, 5), at5) <= kTolerance);
  // RoPE turns q and k by their absolute positions, but a score q . k depends
  // only on the difference of the two: the same tokens at 0..3 and at 5..8,
  // with no cache, give the same logits.
  CHECK(max_diff(model.forward(tokens), at5) <= kTolerance);
}

TEST_CASE("reference: the comparison notices a change of 1e-9 in one weight") {
  // If the reference ignored a weight, or the tolerance were loose, the tests
  // above could not fail: change one element of one layer's k_proj by 1e-9 in
  // the engine's copy only, and the logits must move by more than 1e-12.
  GlassLM model = random_model();
  ReferenceModel ref(model);
  GlassLM nudged = model.to(DType::float64);
  std::vector<double> w = nudged.layers[1].k_proj.to_vector();
  w[5] += 1e-9;
  nudged.layers[1].k_proj =
      from_vector(w, nudged.layers[1].k_proj.shape(), DType::float64);
  no_grad guard;
  TokenBatch tokens{{1, 2, 3, 4, 5, 6}};
  CHECK(max_diff(model.forward(tokens), ref.forward(tokens)) <= kTolerance);
  CHECK(max_diff(nudged.forward(tokens), ref.forward(tokens)) > kTolerance);
}

TEST_CASE("reference: the bundled model (models/demo) in float64, both K/V paths") {
  Checkpoint ckpt =
      load_checkpoint(std::string(GLASSLLM_SOURCE_DIR) + "/models/demo", DType::float64);
  REQUIRE(ckpt.model.dtype() == DType::float64);
  REQUIRE(ckpt.tokenizer);
  std::vector<std::int64_t> ids = ckpt.tokenizer->encode("copy: glass box|");
  for (Attention path : kPaths) {
    CAPTURE(attention_name(path));
    ckpt.model.attention = path;
    compare_full_and_incremental(ckpt.model, TokenBatch{ids}, /*prefill=*/6);
  }
}

TEST_CASE("reference: Llama 3-style RoPE scaling and Qwen2-style q/k/v biases") {
  Config llama3 = small_config_like("real_configs/llama-3.2-1b.json");
  REQUIRE(llama3.rope_scaling.type == RopeScaling::Type::llama3);
  Config qwen2 = small_config_like("real_configs/qwen2.5-0.5b.json");
  REQUIRE(qwen2.qkv_bias);
  Config linear = llama3;  // "linear": every frequency divided by the factor
  linear.rope_scaling.type = RopeScaling::Type::linear;
  for (const Config& cfg : {llama3, qwen2, linear}) {
    for (Attention path : kPaths) {
      CAPTURE(attention_name(path));
      GlassLM model = random_model_of(cfg);
      model.attention = path;
      compare_full_and_incremental(model,
                                   TokenBatch{{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8}},
                                   /*prefill=*/4);
    }
  }
}

namespace {

// EXAONE 4.0's family (norms after each half, QK-norm) from its published
// config.json, made small as above: every layer full, with RoPE.
Config small_exaone() {
  Config cfg = small_config_like("exaone-4.0-1.2b/config.json");
  REQUIRE(cfg.norm_placement == NormPlacement::post);
  REQUIRE(cfg.qk_norm);
  cfg.window.assign(cfg.n_layers, 0);
  cfg.rope.assign(cfg.n_layers, true);
  return cfg;
}

// A hybrid one as EXAONE 4.0 32B lays its layers out (sliding, sliding,
// sliding, global), with a window of 3: the global layer has no RoPE.
Config small_exaone_hybrid() {
  Config cfg = small_exaone();
  cfg.n_layers = 4;
  cfg.window = {3, 3, 3, 0};
  cfg.rope = {true, true, true, false};
  return cfg;
}

}  // namespace

TEST_CASE("reference: EXAONE 4.0 (norms after, QK-norm) and a hybrid with windows") {
  for (const Config& cfg : {small_exaone(), small_exaone_hybrid()}) {
    for (Attention path : kPaths) {
      CAPTURE(attention_name(path));
      CAPTURE(cfg.n_layers);
      GlassLM model = random_model_of(cfg);
      model.attention = path;
      // 12 tokens: the later queries of a sliding layer lose their first keys.
      compare_full_and_incremental(model,
                                   TokenBatch{{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8}},
                                   /*prefill=*/4);
      compare_full_and_incremental(model, TokenBatch{{0, 18, 7, 7, 2}, {11, 4, 4, 16, 8}},
                                   /*prefill=*/1);
    }
  }
}

TEST_CASE("reference: the comparison notices a missing window, RoPE rule or QK-norm") {
  const TokenBatch tokens{{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8}};
  GlassLM hybrid = random_model_of(small_exaone_hybrid());
  ReferenceLogits expected = ReferenceModel(hybrid).forward(tokens);
  no_grad guard;
  // The same weights under a config without one option each.
  Config no_window = small_exaone_hybrid(), all_rope = no_window, no_qk = no_window;
  no_window.window = {0, 0, 0, 0};
  all_rope.rope = {true, true, true, true};
  for (const Config& cfg : {no_window, all_rope}) {
    GlassLM other = GlassLM::from_weights(
        cfg, DType::float64,
        [&](const std::string& name, const Shape&) { return hybrid.parameter(name); });
    CHECK(max_diff(other.forward(tokens), expected) > 1e-6);
  }
  // Without QK-norm the norms' weights are not there; set them to 1 and the
  // per-head scaling still changes the scores.
  GlassLM unit = hybrid;
  for (LayerWeights& w : unit.layers) {
    w.q_norm = ones(w.q_norm.shape(), DType::float64);
    w.k_norm = ones(w.k_norm.shape(), DType::float64);
  }
  no_qk.qk_norm = false;
  GlassLM other = GlassLM::from_weights(
      no_qk, DType::float64,
      [&](const std::string& name, const Shape&) { return unit.parameter(name); });
  CHECK(max_diff(other.forward(tokens), ReferenceModel(unit).forward(tokens)) > 1e-6);
}

TEST_CASE("reference: the comparison notices a missing bias or RoPE scaling") {
  // The same weights (random_model_of draws them in the same order) under a
  // config without the option: the engine with it must differ from the
  // reference without it by far more than the tolerance, or the test above
  // could pass with the option ignored on both sides.
  TokenBatch tokens{{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8}};
  no_grad guard;
  Config llama3 = small_config_like("real_configs/llama-3.2-1b.json");
  Config unscaled = llama3;
  unscaled.rope_scaling = RopeScaling{};
  CHECK(max_diff(random_model_of(llama3).forward(tokens),
                 ReferenceModel(random_model_of(unscaled)).forward(tokens)) > 1e-6);
  Config qwen2 = small_config_like("real_configs/qwen2.5-0.5b.json");
  GlassLM with_bias = random_model_of(qwen2);
  ReferenceModel ref(with_bias);
  CHECK(max_diff(with_bias.forward(tokens), ref.forward(tokens)) <= kTolerance);
  with_bias.layers[0].k_bias = zeros(with_bias.layers[0].k_bias.shape(), DType::float64);
  CHECK(max_diff(with_bias.forward(tokens), ref.forward(tokens)) > 1e-6);
}

TEST_CASE("reference: bad input gets the engine's messages") {
  GlassLM model = random_model();
  ReferenceModel ref(model);
  ReferenceCache cache = ref.new_cache();
  ref.forward({{1, 2, 3}}, &cache, 0);
  CHECK_THROWS_WITH_AS(
      ref.forward({{4}}, &cache, 2),
      "forward: start is 2 but the cache holds 3 positions; pass start=3",
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(ref.forward({{1, 19}}),
                       "forward: token id 19 is out of range [0, 19)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(ref.forward({{1, 2}, {3}}),
                       doctest::Contains("row 1 has 1 tokens but row 0 has 2"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(ref.forward({{1, 2, 3}}, nullptr, 10),
                       doctest::Contains("positions 10..12 exceed max_len 12"),
                       std::invalid_argument);
  // An option the reference does not implement is refused, not ignored: a
  // RoPE scaling type it does not know (one a newer config could bring).
  Config unknown_scaling = model.config();
  unknown_scaling.rope_scaling.type = RopeScaling::Type(3);
  CHECK_THROWS_WITH_AS(ReferenceModel(random_model_of(unknown_scaling)),
                       "ReferenceModel: rope_scaling type 3 is not implemented (none, "
                       "linear, llama3 are)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(ReferenceModel(model, Attention::custom),
                       doctest::Contains("attention path 'custom' is not one of"),
                       std::invalid_argument);
}
