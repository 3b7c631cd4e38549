// Tests for weights16.h: bfloat16 and half numbers, the product with weights
// kept in 16 bits (against a float64 product of the same widened weights),
// and models that keep their projections in 16 bits: loaded straight from a
// bfloat16 file, rounded from float32, their logits against float32
// weights' on models of the published configs, and decoding through the
// cache against the full forward.
#include <array>
#include <bit>
#include <cmath>
#include <filesystem>
#include <limits>
#include <random>

#include "check.h"
#include "checkpoint_fixtures.h"
#include "glassllm/fast/kernels.h"
#include "glassllm/io/checkpoint.h"
#include "glassllm/io/files.h"
#include "glassllm/model/weights16.h"

using namespace glassllm;
using namespace glassllm::test::ckpt;

namespace {

float float_bits(std::uint32_t bits) {
  return std::bit_cast<float>(bits);
}

std::uint16_t bf(float v) {
  return to_16_bits(WeightType::bf16, v);
}
std::uint16_t half(float v) {
  return to_16_bits(WeightType::f16, v);
}

}  // namespace

TEST_CASE("weights16: bfloat16 by hand, rounded to nearest even") {
  CHECK(bf(1.0f) == 0x3F80);
  CHECK(bf(-3.0f) == 0xC040);
  CHECK(bf(0.25f) == 0x3E80);
  CHECK(bf(0.0f) == 0x0000);
  CHECK(bf(-0.0f) == 0x8000);
  // 1 + 2^-8 lies halfway between 0x3F80 (1) and 0x3F81 (1 + 2^-7): to the even 0x3F80;
  // 1 + 3 * 2^-8 halfway between 0x3F81 and 0x3F82: to the even 0x3F82; a hair
  // above a tie goes up.
  CHECK(bf(float_bits(0x3F808000)) == 0x3F80);
  CHECK(bf(float_bits(0x3F818000)) == 0x3F82);
  CHECK(bf(float_bits(0x3F808001)) == 0x3F81);
  CHECK(bf(float_bits(0x3F807FFF)) == 0x3F80);
  // inf stays inf; the largest float rounds up to it; nan stays nan.
  CHECK(bf(std::numeric_limits<float>::infinity()) == 0x7F80);
  CHECK(bf(-std::numeric_limits<float>::infinity()) == 0xFF80);
  CHECK(bf(std::numeric_limits<float>::max()) == 0x7F80);
  CHECK(std::isnan(from_16_bits(WeightType::bf16, bf(std::nanf("")))));
  // A nan whose payload is only in the low 16 bits must not become inf.
  CHECK(std::isnan(from_16_bits(WeightType::bf16, bf(float_bits(0x7F800001)))));
  // Denormals: float32's 2^-133 is bfloat16's 0x0001 exactly.
  CHECK(bf(float_bits(0x00010000)) == 0x0001);
  CHECK(from_16_bits(WeightType::bf16, 0x0001) == float_bits(0x00010000));
  CHECK(from_16_bits(WeightType::bf16, 0xC040) == -3.0f);
}

TEST_CASE("weights16: IEEE half by hand, rounded to nearest even") {
  CHECK(half(1.0f) == 0x3C00);
  CHECK(half(-2.0f) == 0xC000);
  CHECK(half(65504.0f) == 0x7BFF);  // the largest half
  CHECK(half(65519.0f) == 0x7BFF);  // below the halfway point to 2^16
  CHECK(half(65520.0f) == 0x7C00);  // halfway: to the even, inf
  CHECK(half(-1e9f) == 0xFC00);
  CHECK(half(-std::numeric_limits<float>::infinity()) == 0xFC00);
  CHECK(std::isnan(from_16_bits(WeightType::f16, half(std::nanf("")))));
  CHECK(std::isnan(from_16_bits(WeightType::f16, half(float_bits(0x7F800001)))));
  // 1 + 2^-11 halfway between 1 and 1 + 2^-10: to the even 0x3C00; 1 + 3 * 2^-11: 0x3C02.
  CHECK(half(1.0f + std::ldexp(1.0f, -11)) == 0x3C00);
  CHECK(half(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3C02);
  // The smallest normal and subnormals, counted in units of 2^-24.
  CHECK(half(std::ldexp(1.0f, -14)) == 0x0400);
  CHECK(half(std::ldexp(1.0f, -24)) == 0x0001);
  CHECK(half(std::ldexp(1.0f, -25)) == 0x0000);         // half a unit: to the even 0
  CHECK(half(1.5f * std::ldexp(1.0f, -25)) == 0x0001);  // 0.75 units
  CHECK(half(3 * std::ldexp(1.0f, -25)) == 0x0002);     // 1.5 units: to the even 2
  CHECK(half(5 * std::ldexp(1.0f, -25)) == 0x0002);     // 2.5 units: to the even 2
  CHECK(half(1023 * std::ldexp(1.0f, -24) + std::ldexp(1.0f, -25)) == 0x0400);  // up
  CHECK(half(std::ldexp(1.0f, -30)) == 0x0000);
  CHECK(half(-std::ldexp(1.0f, -24)) == 0x8001);
  CHECK(from_16_bits(WeightType::f16, 0x0001) == std::ldexp(1.0f, -24));
  CHECK(from_16_bits(WeightType::f16, 0x7BFF) == 65504.0f);
  // 0x3555: exponent 13 (2^-2), mantissa 0x155: 1/3 to half's precision.
  CHECK(from_16_bits(WeightType::f16, 0x3555) == 0.25f + 0x155 * std::ldexp(1.0f, -12));
}

TEST_CASE("weights16: every 16-bit number survives the round trip through float32") {
  for (WeightType type : {WeightType::bf16, WeightType::f16}) {
    CAPTURE(weight_type_name(type));
    int wrong = 0;
    for (std::uint32_t b = 0; b < 65536; ++b) {
      const float v = from_16_bits(type, std::uint16_t(b));
      if (std::isnan(v))
        wrong += !std::isnan(from_16_bits(type, to_16_bits(type, v)));
      else
        wrong += to_16_bits(type, v) != b;
    }
    CHECK(wrong == 0);
  }
}

TEST_CASE("weights16: the product against a float64 product of the widened weights") {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  // K around the vector width (8 or 16 lanes) and its tails; N around the
  // kernels' 4- and 8-row tiles; M from a decode step's 1 to a prompt's 13.
  for (WeightType type : {WeightType::bf16, WeightType::f16})
    for (std::size_t K : {1, 15, 16, 17, 100, 576})
      for (std::size_t N : {1, 7, 9, 33})
        for (std::size_t M : {1, 2, 3, 4, 5, 9, 13}) {
          CAPTURE(weight_type_name(type));
          CAPTURE(K);
          CAPTURE(N);
          CAPTURE(M);
          std::vector<float> x(M * K), wf(N * K);
          for (float& v : x) v = normal(rng);
          for (float& v : wf) v = normal(rng);
          Tensor w_t = from_vector(std::vector<double>(wf.begin(), wf.end()), {N, K});
          Weight16 w = Weight16::from_tensor(w_t, type);
          const fast::Half h =
              type == WeightType::bf16 ? fast::Half::bf16 : fast::Half::f16;
          std::vector<float> y(M * N), y_portable(M * N), y_row(N);
          fast::linear16(h, M, N, K, x.data(), w.bits.data(), y.data());
          fast::detail::linear16_portable(h, M, N, K, x.data(), w.bits.data(),
                                          y_portable.data());
          for (std::size_t m = 0; m < M; ++m) {
            // A row alone gives the same bits as among the others.
            fast::linear16(h, 1, N, K, x.data() + m * K, w.bits.data(), y_row.data());
            for (std::size_t n = 0; n < N; ++n) {
              double exact = 0, size = 0;
              for (std::size_t k = 0; k < K; ++k) {
                const double p =
                    double(x[m * K + k]) * from_16_bits(type, w.bits[n * K + k]);
                exact += p;
                size += std::fabs(p);
              }
              // A float32 sum of K products is off by at most about K units
              // of 2^-24 of the sum of their sizes.
              const double bound = double(K + 2) * std::ldexp(1.0, -24) * size;
              REQUIRE(std::fabs(y[m * N + n] - exact) <= bound);
              REQUIRE(std::fabs(y_portable[m * N + n] - exact) <= bound);
              REQUIRE(std::bit_cast<std::uint32_t>(y_row[n]) ==
                      std::bit_cast<std::uint32_t>(y[m * N + n]));
            }
          }
        }
}

TEST_CASE("weights16: how far ahead W is asked for changes no bit of the product") {
  // 1024 x 576 bfloat16 weights: 1.2 MB, a product large enough to be one
  // of the timed trials; one row of x (a decode step) and a few.
  const std::size_t N = 1024, K = 576;
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(4 * K), wf(N * K);
  for (float& v : x) v = normal(rng);
  for (float& v : wf) v = normal(rng);
  std::vector<std::uint16_t> w(N * K);
  fast::floats_to_halves(fast::Half::bf16, wf.data(), w.data(), w.size());
  for (std::size_t M : {1, 2, 4}) {
    CAPTURE(M);
    std::vector<float> near(M * N), far(M * N), portable(M * N);
    fast::force_linear16_read_ahead(1024);
    fast::linear16(fast::Half::bf16, M, N, K, x.data(), w.data(), near.data());
    fast::force_linear16_read_ahead(8192);
    fast::linear16(fast::Half::bf16, M, N, K, x.data(), w.data(), far.data());
    fast::force_linear16_read_ahead(0);
    CHECK(fast::linear16_read_ahead().forced == false);
    std::size_t differ = 0;
    for (std::size_t i = 0; i < M * N; ++i)
      differ +=
          std::bit_cast<std::uint32_t>(near[i]) != std::bit_cast<std::uint32_t>(far[i]);
    CHECK(differ == 0);
  }
  CHECK_THROWS_WITH_AS(fast::force_linear16_read_ahead(4096),
                       "force_linear16_read_ahead: 4096 bytes is not one of the "
                       "candidates (1024, 8192) or 0",
                       std::invalid_argument);

  // The first 2 x 128 large decode products are trials (fewer if another
  // test made some); after them the faster candidate by the trials' own
  // figures is the one in use.
  std::vector<float> y(N);
  for (int i = 0; i < 2 * 128; ++i)
    fast::linear16(fast::Half::bf16, 1, N, K, x.data(), w.data(), y.data());
  const fast::ReadAheadChoice choice = fast::linear16_read_ahead();
  if (std::string(fast::linear16_path()) == "portable") {
    CHECK(choice.bytes == 0);  // no prefetches to choose between
  } else {
    REQUIRE(choice.candidates == std::array<std::size_t, 2>{1024, 8192});
    CHECK(choice.pairs == 128);
    CHECK(choice.bytes_per_s[0] > 0);
    CHECK(choice.bytes_per_s[1] > 0);
    CHECK(choice.bytes == choice.candidates[choice.second_over_first > 1 ? 1 : 0]);
  }
}

TEST_CASE("weights16: the read-ahead that wins the median pair") {
  // Each ratio: the second candidate's speed over the first's in one pair.
  CHECK(fast::detail::faster_read_ahead({0.9, 1.2, 1.3}) == 8192);  // median 1.2
  CHECK(fast::detail::faster_read_ahead({1.1, 0.8, 0.9}) == 1024);  // median 0.9
  // One pair slowed far more than the others does not decide.
  CHECK(fast::detail::faster_read_ahead({0.5, 0.9, 0.95, 30.0}) == 1024);
  CHECK(fast::detail::faster_read_ahead({1.0}) == 1024);  // a tie: the first
  CHECK(fast::detail::faster_read_ahead({}) == 1024);
}

TEST_CASE("weights16: read-ahead trials pair a first with the next second") {
  fast::detail::ReadAheadPairs pairs;
  pairs.add(0, 10);
  pairs.add(1, 20);  // pair: 20 / 10
  pairs.add(1, 99);  // no first waiting: counted, not paired
  pairs.add(0, 40);
  pairs.add(0, 30);  // the later first replaces the waiting one
  pairs.add(1, 15);  // pair: 15 / 30
  CHECK(pairs.ratios() == std::vector<double>{2.0, 0.5});
  CHECK(pairs.speeds()[0] == std::vector<double>{10, 40, 30});
  CHECK(pairs.speeds()[1] == std::vector<double>{20, 99, 15});
}

TEST_CASE("weights16: linear16 is x W^T, for inference only") {
  Tensor w = from_vector({1, 2, 3, -1, 0.5, 0.25}, {2, 3});
  Weight16 w16 = Weight16::from_tensor(w, WeightType::bf16);
  CHECK(w16.rows == 2);
  CHECK(w16.cols == 3);
  CHECK(w16.bits ==
        std::vector<std::uint16_t>{0x3F80, 0x4000, 0x4040, 0xBF80, 0x3F00, 0x3E80});
  Tensor x = from_vector({1, 1, 2, 0, 4, -4}, {2, 1, 3});  // [2, 1, 3]
  Tensor y = linear16(x, w16);
  // [1, 1, 2] . [1, 2, 3] = 9, . [-1, 0.5, 0.25] = 0; [0, 4, -4] -> -4, 1
  glassllm::test::check_tensor(y, {2, 1, 2}, {9, 0, -4, 1}, 0);
  CHECK_THROWS_WITH_AS(linear16(from_vector({1, 2}, {1, 2}), w16),
                       doctest::Contains("in-features (3)"), std::invalid_argument);
  Tensor needs_grad = x.detach().requires_grad_();
  CHECK_THROWS_WITH_AS(linear16(needs_grad, w16), doctest::Contains("no_grad"),
                       std::invalid_argument);
  no_grad guard;
  CHECK(linear16(needs_grad, w16).shape() == Shape{2, 1, 2});
}

namespace {

// A published model's config.json (tests/data/real_configs/) with its
// options kept (RoPE scaling, biases) and sizes made small but not tiny:
// widths that are not a multiple of the vector width, so that every tail of
// the kernel runs.
Config config_like(const std::string& file) {
  Config cfg = config_from_json(read_regular_file(std::string(GLASSLLM_TEST_DATA) +
                                                  "/real_configs/" + file))
                   .first;
  cfg.vocab_size = 97;
  cfg.d_model = 72;
  cfg.n_layers = 2;
  cfg.n_heads = 6;
  cfg.n_kv_heads = 2;
  cfg.explicit_head_dim = 12;
  cfg.d_ff = 100;
  cfg.max_len = 16;
  return cfg;
}

// Every weight of `model` as BF16 bits, to a checkpoint folder: what a
// published bf16 checkpoint holds.
void save_as_bf16(const std::string& dir, const GlassLM& model) {
  std::filesystem::create_directories(dir);
  std::vector<RawTensor> raw;
  for (const auto& [name, t] : model.named_parameters()) {
    std::string bytes;
    for (double v : t.to_vector()) {
      const std::uint16_t b = bf(float(v));
      bytes.push_back(char(b & 0xFF));
      bytes.push_back(char(b >> 8));
    }
    raw.push_back({name, "BF16", t.shape(), bytes});
  }
  write_raw_safetensors(dir + "/model.safetensors", raw);
  std::string config = config_to_json(model.config(), DType::float32);
  config.replace(config.find("\"float32\""), 9, "\"bfloat16\"");
  write_text(dir + "/config.json", config);
}

// max |a - b| / max |b|: an error relative to the logits' scale.
double relative_error(const Tensor& a, const Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  std::vector<double> va = a.to_vector(), vb = b.to_vector();
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < va.size(); ++i) {
    diff = std::max(diff, std::fabs(va[i] - vb[i]));
    scale = std::max(scale, std::fabs(vb[i]));
  }
  return diff / scale;
}

const std::vector<std::int64_t> kTokens{3, 17, 96, 0, 42, 42, 7, 64, 11, 80};

}  // namespace

TEST_CASE("weights16: a bf16 checkpoint loads straight into 16 bits, as stored") {
  TempDir dir("w16_stored");
  Config cfg = config_like("smollm2-135m.json");
  save_as_bf16(dir / "c", GlassLM(cfg, 3));
  Checkpoint kept = load_checkpoint(dir / "c", std::nullopt, false, std::nullopt);
  Checkpoint widened = load_checkpoint(dir / "c");  // float32, as before
  REQUIRE(kept.model.weights16);
  CHECK(kept.model.weights16->type == WeightType::bf16);
  CHECK_FALSE(widened.model.weights16);
  CHECK_FALSE(kept.model.layers[1].down_proj.defined());
  CHECK_FALSE(kept.model.lm_head.defined());
  CHECK(kept.model.layers[1].post_attention_layernorm.defined());
  CHECK(kept.model.parameter_count() == widened.model.parameter_count());
  // The bits are the file's: widened, they are the float32 model's weights.
  for (const auto& [name, t] : widened.model.named_parameters())
    if (const Weight16* w = kept.model.weights16->find(name)) {
      CAPTURE(name);
      CHECK(bit_equal(w->to_tensor(), t));
    }
  // Same weights, so the logits differ only by the order of float32 sums.
  no_grad guard;
  CHECK(relative_error(kept.model.forward(kTokens), widened.model.forward(kTokens)) <
        1e-5);
  // Asked for f16, the bf16 bits are rounded to half.
  Checkpoint as_f16 = load_checkpoint(dir / "c", std::nullopt, false, WeightType::f16);
  CHECK(as_f16.model.weights16->type == WeightType::f16);
  const float first = kept.model.weights16->lm_head.to_tensor().data<float>()[0];
  CHECK(as_f16.model.weights16->lm_head.bits[0] == half(first));
  // A float64 model has no 16-bit weights.
  CHECK_FALSE(
      load_checkpoint(dir / "c", DType::float64, false, std::nullopt).model.weights16);
  CHECK_THROWS_WITH_AS(
      load_checkpoint(dir / "c", DType::float64, false, WeightType::bf16),
      doctest::Contains("float32 activations"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(kept.model.to(DType::float64), doctest::Contains("16 bits"),
                       std::invalid_argument);
}

TEST_CASE("weights16: a non-finite weight kept in 16 bits is named") {
  TempDir dir("w16_nan");
  Config cfg = tiny_config();
  GlassLM model(cfg, 1);
  model.layers[1].up_proj.mutable_data<float>()[2 * 8 + 5] = std::nanf("");
  save_as_bf16(dir / "c", model);
  CHECK_THROWS_WITH_AS(
      load_checkpoint(dir / "c", std::nullopt, false, WeightType::bf16),
      contains("weight 'model.layers.1.mlp.up_proj.weight' has nan at index [2, 5]"),
      std::runtime_error);
}

TEST_CASE("weights16: 16-bit logits are within 1e-2 of float32's on published configs") {
  TempDir dir("w16_configs");
  for (const char* file : {"smollm2-135m.json", "llama-3.2-1b.json", "qwen2.5-0.5b.json",
                           "tinyllama-1.1b.json"}) {
    CAPTURE(file);
    GlassLM model(config_like(file), 11);
    // Weights of a trained model's size (N(0, 0.02) makes every logit
    // nearly 0): the error is then relative to logits of a few units.
    for (auto& [name, t] : model.named_parameters())
      if (name.find("norm") == std::string::npos && !name.ends_with("bias"))
        for (float *p = t.mutable_data<float>(), *e = p + t.size(); p != e; ++p) *p *= 10;
    save_checkpoint(dir / file, model);
    no_grad guard;
    const Tensor reference = model.forward(kTokens);
    for (WeightType type : {WeightType::bf16, WeightType::f16}) {
      CAPTURE(weight_type_name(type));
      Checkpoint ckpt = load_checkpoint(dir / file, std::nullopt, false, type);
      REQUIRE(ckpt.model.weights16);
      const double error = relative_error(ckpt.model.forward(kTokens), reference);
      CHECK(error < 1e-2);
      CHECK(error > 0);  // the weights were rounded
    }
  }
}

TEST_CASE("weights16: decoding through the cache matches the full forward") {
  TempDir dir("w16_cache");
  save_as_bf16(dir / "c", GlassLM(config_like("llama-3.2-1b.json"), 5));
  Checkpoint ckpt = load_checkpoint(dir / "c", std::nullopt, false, WeightType::bf16);
  for (Attention path : {Attention::repeat_kv, Attention::grouped}) {
    CAPTURE(attention_name(path));
    ckpt.model.attention = path;
    no_grad guard;
    const Tensor full = ckpt.model.forward(kTokens);  // [1, 10, V]
    Cache cache = ckpt.model.new_cache();
    const std::size_t prefill = 4, V = ckpt.model.config().vocab_size;
    std::vector<Tensor> rows{ckpt.model.forward(
        std::vector<std::int64_t>(kTokens.begin(), kTokens.begin() + prefill), &cache,
        0)};
    for (std::size_t t = prefill; t < kTokens.size(); ++t)
      rows.push_back(ckpt.model.forward({kTokens[t]}, &cache, t));
    std::vector<double> incremental;
    for (const Tensor& r : rows)
      for (double v : r.to_vector()) incremental.push_back(v);
    REQUIRE(incremental.size() == kTokens.size() * V);
    Tensor joined = from_vector(incremental, {1, kTokens.size(), V});
    CHECK(relative_error(joined, full) < 1e-5);
  }
}
