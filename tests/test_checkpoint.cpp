// Tests for checkpoint.h: config.json and whole checkpoint folders (the
// safetensors files themselves are test_safetensors.cpp's):
// round trips, folders written by other tools, bfloat16 weights, wrong names
// and shapes, and saves that are interrupted.
#include <sys/resource.h>

#include <bit>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "check.h"
#include "checkpoint_fixtures.h"
#include "glassllm/io/budget.h"
#include "glassllm/io/checkpoint.h"
#include "glassllm/io/checkpoint_internal.h"
#include "glassllm/io/files.h"

using namespace glassllm;
using glassllm::test::check_tensor;
namespace fs = std::filesystem;

using namespace glassllm::test::ckpt;

TEST_CASE("checkpoint: config.json has every Hugging Face LlamaConfig key") {
  auto j = nlohmann::json::parse(config_to_json(tiny_config(), DType::float64));
  CHECK(j["architectures"] == nlohmann::json::array({"LlamaForCausalLM"}));
  CHECK(j["model_type"] == "llama");
  CHECK(j["hidden_size"] == 8);
  CHECK(j["intermediate_size"] == 16);
  CHECK(j["num_attention_heads"] == 2);
  CHECK(j["num_hidden_layers"] == 2);
  CHECK(j["num_key_value_heads"] == 1);
  CHECK(j["head_dim"] == 4);  // 8 / 2
  CHECK(j["max_position_embeddings"] == 8);
  CHECK(j["rms_norm_eps"] == 1e-5);
  CHECK(j["rope_theta"] == 10000.0);
  CHECK(j["vocab_size"] == 5);
  CHECK(j["tie_word_embeddings"] == false);
  CHECK(j["hidden_act"] == "silu");
  CHECK(j["attention_bias"] == false);
  CHECK(j["mlp_bias"] == false);
  CHECK(j["torch_dtype"] == "float64");
  CHECK(j.size() == 18);
  CHECK(j["rope_scaling"].is_null());  // exactly these keys
  CHECK(nlohmann::json::parse(
            config_to_json(tiny_config(), DType::float32))["torch_dtype"] == "float32");
}

TEST_CASE("checkpoint: config_from_json reads what config_to_json wrote") {
  Config cfg = tiny_config();
  cfg.rope_theta = 500000.0;
  cfg.norm_eps = 1e-6;
  auto [back, dtype] = config_from_json(config_to_json(cfg, DType::float64));
  CHECK(back.vocab_size == 5);
  CHECK(back.d_model == 8);
  CHECK(back.n_layers == 2);
  CHECK(back.n_heads == 2);
  CHECK(back.n_kv_heads == 1);
  CHECK(back.d_ff == 16);
  CHECK(back.max_len == 8);
  CHECK(back.rope_theta == 500000.0);
  CHECK(back.norm_eps == 1e-6);
  CHECK(dtype == DType::float64);
}

TEST_CASE(
    "checkpoint: a Hugging Face config without num_key_value_heads gives every head its "
    "K/V") {
  // As transformers writes it: extra keys, integer rope_theta, bfloat16.
  auto [cfg, dtype] = config_from_json(R"({
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 8,
    "intermediate_size": 16, "num_attention_heads": 2, "num_hidden_layers": 1,
    "max_position_embeddings": 32, "rms_norm_eps": 1e-06, "rope_theta": 10000,
    "vocab_size": 5, "bos_token_id": 1, "eos_token_id": 2, "rope_scaling": null,
    "transformers_version": "4.44.0", "use_cache": true, "torch_dtype": "bfloat16"})");
  CHECK(cfg.n_kv_heads == 2);
  CHECK(cfg.max_len == 32);
  CHECK(cfg.rope_theta == 10000.0);
  CHECK_FALSE(dtype.has_value());  // bfloat16 names no GlassLM dtype
}

TEST_CASE("checkpoint: Llama 3.2's llama3 RoPE scaling, head_dim and Qwen2's biases") {
  // Llama-3.2-1B's published values (tests/data/real_configs/).
  auto [cfg, dtype] = config_from_json(R"({
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 2048,
    "head_dim": 64, "intermediate_size": 8192, "num_attention_heads": 32,
    "num_hidden_layers": 16, "num_key_value_heads": 8, "max_position_embeddings": 131072,
    "rms_norm_eps": 1e-05, "rope_theta": 500000.0, "vocab_size": 128256,
    "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                     "original_max_position_embeddings": 8192, "rope_type": "llama3"},
    "tie_word_embeddings": true, "pretraining_tp": 1, "torch_dtype": "bfloat16"})");
  CHECK(cfg.head_dim() == 64);
  CHECK(cfg.rope_scaling.type == RopeScaling::Type::llama3);
  // The inverse frequencies as transformers computes them (float64 PyTorch,
  // tests/reference/llama_reference.py): i = 14 has a wavelength under
  // 8192 / 4 and stays theta^(-2i/64); 15..17 are blended; 18 is divided by 32.
  std::vector<double> f = rope_inv_freq(cfg);
  REQUIRE(f.size() == 32);
  const std::pair<std::size_t, double> expected[] = {{0, 1.0},
                                                     {14, 0.0032114459947525913},
                                                     {15, 0.0012905479282092638},
                                                     {16, 0.00042955679655936815},
                                                     {17, 9.70828780262767e-05},
                                                     {18, 1.9461638184831125e-05},
                                                     {31, 9.418306725434909e-08}};
  for (auto [i, want] : expected) {
    CAPTURE(i);
    CHECK(f[i] == doctest::Approx(want).epsilon(1e-13));
  }
  // config_to_json writes it back.
  auto [again, unused] = config_from_json(config_to_json(cfg, DType::float32));
  CHECK(rope_inv_freq(again) == f);

  // Qwen2: biases on q, k and v; an explicit head_dim that is not
  // hidden_size / heads (Qwen3's way) sizes q_proj [H*hd, d_model].
  auto [qwen, qwen_dtype] = config_from_json(R"({
    "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 8,
    "head_dim": 6, "intermediate_size": 16, "num_attention_heads": 2,
    "num_hidden_layers": 1, "num_key_value_heads": 1, "max_position_embeddings": 32,
    "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "vocab_size": 5,
    "use_sliding_window": false, "sliding_window": 32768, "max_window_layers": 24})");
  CHECK(qwen.qkv_bias);
  CHECK(qwen.head_dim() == 6);
  GlassLM model(qwen, 1);
  CHECK(model.parameter("model.layers.0.self_attn.q_proj.weight").shape() ==
        Shape{12, 8});
  CHECK(model.parameter("model.layers.0.self_attn.k_proj.bias").shape() == Shape{6});
  CHECK_THROWS_WITH_AS(config_from_json(R"({"model_type": "qwen2",
                         "use_sliding_window": true})"),
                       doctest::Contains("use_sliding_window is true"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(config_from_json(R"({"model_type": "llama",
                         "quantization_config": {}})"),
                       "config.json: key 'quantization_config' is not supported (GlassLM "
                       "runs Llama and Qwen2 models without it)",
                       std::invalid_argument);
}

TEST_CASE("checkpoint: each broken config.json gives its own error") {
  struct Case {
    const char* file;
    const char* message;
  };
  const Case cases[] = {
      {"config_missing_hidden_size.json", "config.json: missing key 'hidden_size'"},
      {"config_wrong_type.json",
       "config.json: 'hidden_size' is string, expected an integer"},
      {"config_negative_size.json",
       "config.json: 'hidden_size' is -8, expected a positive integer"},
      {"config_bad_head_dim.json",
       "config.json: config: head_dim (explicit, 3) must be even"},
      {"config_rope_scaling.json",
       "config.json: rope_scaling type 'yarn' is not supported (supported: llama3, "
       "linear)"},
      {"config_attention_bias.json", "config.json: attention_bias is true"},
      {"config_gelu.json", "config.json: hidden_act is 'gelu'"},
      {"config_duplicate_key.json", "config.json: duplicate key \"hidden_size\""},
      {"config_not_llama.json", "config.json: model_type is 'gpt2', expected 'llama'"},
      {"config_not_json.json",
       "config.json: invalid JSON at line 1, column 24: unexpected end of the text (the "
       "text stops before the JSON value is complete)"},
      {"config_number_overflow.json",
       "config.json: invalid JSON (in hidden_size): a number too large for a 64-bit "
       "float"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.file);
    CHECK_THROWS_WITH_AS(config_from_json(read_regular_file(corpus_path(c.file))),
                         doctest::Contains(c.message), std::invalid_argument);
  }
  CHECK(config_from_json(read_regular_file(corpus_path("config_valid.json")))
            .first.d_model == 8);
  // Config::validate's own checks come through, prefixed with the file.
  std::string three_kv = config_to_json(tiny_config(), DType::float32);
  three_kv.replace(three_kv.find("\"num_key_value_heads\": 1"), 24,
                   "\"num_key_value_heads\": 3");
  CHECK_THROWS_WITH_AS(config_from_json(three_kv),
                       doctest::Contains("n_kv_heads (3) must divide n_heads (2)"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      config_from_json(
          R"({"model_type": "llama", "architectures": ["MistralForCausalLM"]})"),
      doctest::Contains("architecture 'MistralForCausalLM' is not supported"),
      std::invalid_argument);
}

// ---- checkpoint folders
// -----------------------------------------------------------------

// The inspector page's engine has no files: the same loader on the files' bytes.
TEST_CASE("checkpoint: loading from memory gives the folder's model, with its messages") {
  TempDir dir("memory");
  GlassLM model(tiny_config(), 7);
  Tokenizer tok = tiny_tokenizer();
  save_checkpoint(dir / "ckpt", model, &tok);
  auto text = [&](const std::string& f) {
    std::ifstream in(dir / ("ckpt/" + f), std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string config = text("config.json"), weights = text("model.safetensors");
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(weights.data());
  Checkpoint back = load_checkpoint_from_memory(config, text("glassllm_tokenizer.json"),
                                                bytes, weights.size());
  auto want = model.named_parameters(), got = back.model.named_parameters();
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i)
    CHECK(bit_equal(got[i].second, want[i].second));
  REQUIRE(back.tokenizer.has_value());
  CHECK(back.tokenizer->encode("abd") == std::vector<std::int64_t>{0, 1, 3});
  CHECK_FALSE(back.hf_tokenizer);
  CHECK(load_checkpoint_from_memory(config, "", bytes, weights.size()).tokenizer ==
        std::nullopt);
  // Cut short, the weights are refused as the folder's file would be.
  CHECK_THROWS_WITH_AS(
      load_checkpoint_from_memory(config, "", bytes, weights.size() - 1, "page"),
      contains("page/model.safetensors: "), std::runtime_error);
  CHECK_THROWS_WITH_AS(
      load_checkpoint_from_memory("{}", "", bytes, weights.size(), "page"),
      contains("page/config.json: "), std::runtime_error);
}

TEST_CASE("checkpoint: save then load is bit-exact, in float32 and float64") {
  for (DType dtype : {DType::float32, DType::float64}) {
    CAPTURE(dtype_name(dtype));
    TempDir dir("roundtrip");
    GlassLM model(tiny_config(), 42, dtype);
    Tokenizer tok = tiny_tokenizer();
    save_checkpoint(dir / "ckpt", model, &tok);
    CHECK(files_in(dir.path / "ckpt") ==
          std::vector<std::string>{"config.json", "glassllm_tokenizer.json",
                                   "model.safetensors"});

    Checkpoint back = load_checkpoint(dir / "ckpt");
    CHECK(back.model.dtype() == dtype);
    auto want = model.named_parameters();
    auto got = back.model.named_parameters();
    REQUIRE(got.size() == want.size());
    REQUIRE(want.size() == 1 + 2 * 9 + 2);  // embedding, 9 per layer, norm, lm_head
    for (std::size_t i = 0; i < want.size(); ++i) {
      CAPTURE(want[i].first);
      CHECK(got[i].first == want[i].first);
      CHECK(bit_equal(got[i].second, want[i].second));
      CHECK(got[i].second.requires_grad());  // still trainable
    }
    CHECK(back.model.config().n_kv_heads == 1);
    REQUIRE(back.tokenizer.has_value());
    CHECK(back.tokenizer->vocab_size() == 5);
    CHECK(back.tokenizer->encode("abcz") == std::vector<std::int64_t>{0, 1, 2, 4});

    // The weight file carries the metadata transformers insists on.
    std::string bytes = read_regular_file(dir / "ckpt/model.safetensors");
    CHECK(bytes.find("\"__metadata__\":{\"format\":\"pt\"}") != std::string::npos);
  }
}

namespace {

// A line of /proc/self/status ("VmHWM:  123456 kB") in KiB.
long status_kib(const std::string& key) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.starts_with(key + ":")) return std::stol(line.substr(key.size() + 1));
  return -1;
}

}  // namespace

TEST_CASE(
    "checkpoint: loading keeps the file's arrays as the weights: no random "
    "initialisation, no second copy") {
  // Two 40 MiB float32 matrices (vocab 81920 x d_model 128) and small layers.
  // Loading them used to build a randomly initialised model (another 80 MiB)
  // and then overwrite it, with the whole mapped file resident on top: a peak
  // of three times the weights. Now the model is made of the arrays read from
  // the file, whose pages are given back tensor by tensor: the peak is the
  // weights plus at most one tensor's bytes of the file.
  TempDir dir("peak");
  Config cfg = tiny_config();
  cfg.vocab_size = 81920;
  cfg.d_model = 128;
  cfg.n_layers = 1;
  // Weights from a formula (drawing 20 million normal numbers would make this
  // test slow): element i of weight w is (i % 1001 - 500) / (w + 3).
  std::size_t w = 0;
  const GlassLM saved = GlassLM::from_weights(
      cfg, DType::float32, [&](const std::string&, const Shape& shape) {
        Tensor t = zeros(shape);
        float* p = t.mutable_data<float>();
        for (std::size_t i = 0, n = t.size(); i < n; ++i)
          p[i] = float(double(i % 1001) - 500) / float(w + 3);
        ++w;
        return t;
      });
  save_checkpoint(dir / "c", saved);
  const double weights_kib = parameter_bytes(cfg, DType::float32) / 1024;
  // Linux resets the peak (VmHWM) to the current size on "5" in clear_refs.
  std::ofstream clear_refs("/proc/self/clear_refs");
  clear_refs << "5" << std::flush;
  INFO("resetting the peak needs Linux's /proc/self/clear_refs (Linux 4.0 or later)");
  REQUIRE(clear_refs.good());
  const long before = status_kib("VmRSS");
  Checkpoint back = load_checkpoint(dir / "c");
  const long grew = status_kib("VmHWM") - before;
  MESSAGE("weights " << weights_kib / 1024 << " MiB, peak grew by " << grew / 1024.0
                     << " MiB");
  CHECK(grew > 0.9 * weights_kib);  // the weights are really held
  CHECK(grew < 2.0 * weights_kib);  // and nothing of their size besides
  // The values are the file's, bit for bit.
  for (const auto& [name, w] : saved.named_parameters()) {
    CAPTURE(name);
    CHECK(bit_equal(back.model.parameter(name), w));
  }
}

TEST_CASE("checkpoint: a checkpoint written by another tool loads") {
  // Hugging Face's names in alphabetical order (as the safetensors library
  // writes them), a hand-written config.json with num_key_value_heads and
  // extra keys, no tokenizer file.
  TempDir dir("foreign");
  std::vector<RawTensor> raw;
  std::map<std::string, float> first_value;  // each weight filled with one value
  float fill = 0.5f;
  auto add = [&](const std::string& name, Shape shape) {
    std::vector<float> v(shape_numel(shape), fill);
    raw.push_back({name, "F32", shape, f32_bytes(v)});
    first_value[name] = fill;
    fill += 0.25f;
  };
  add("lm_head.weight", {5, 8});
  add("model.embed_tokens.weight", {5, 8});
  add("model.layers.0.input_layernorm.weight", {8});
  add("model.layers.0.mlp.down_proj.weight", {8, 16});
  add("model.layers.0.mlp.gate_proj.weight", {16, 8});
  add("model.layers.0.mlp.up_proj.weight", {16, 8});
  add("model.layers.0.post_attention_layernorm.weight", {8});
  add("model.layers.0.self_attn.k_proj.weight", {4, 8});
  add("model.layers.0.self_attn.o_proj.weight", {8, 8});
  add("model.layers.0.self_attn.q_proj.weight", {8, 8});
  add("model.layers.0.self_attn.v_proj.weight", {4, 8});
  add("model.norm.weight", {8});
  write_raw_safetensors(dir / "model.safetensors", raw);
  write_text(dir / "config.json", R"({
  "architectures": ["LlamaForCausalLM"], "model_type": "llama",
  "hidden_size": 8, "intermediate_size": 16, "num_attention_heads": 2,
  "num_hidden_layers": 1, "num_key_value_heads": 1, "max_position_embeddings": 8,
  "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "vocab_size": 5,
  "hidden_act": "silu", "initializer_range": 0.02, "torch_dtype": "float32"
})");
  Checkpoint ckpt = load_checkpoint(dir.path.string());
  CHECK_FALSE(ckpt.tokenizer.has_value());
  CHECK(ckpt.model.dtype() == DType::float32);
  CHECK(ckpt.model.config().n_kv_heads == 1);
  for (const auto& [name, t] : ckpt.model.named_parameters()) {
    CAPTURE(name);
    CHECK(t.to_vector().front() == first_value.at(name));
  }
  CHECK(ckpt.model.lm_head.at({4, 7}) == 0.5);  // lm_head was first: 0.5
  CHECK(ckpt.model.layers[0].k_proj.shape() == Shape{4, 8});
}

TEST_CASE("checkpoint: a bfloat16 checkpoint with tied embeddings loads as float32") {
  // bfloat16 bits: 0x3F80 = 1.0, 0xC040 = -3.0, 0x3E80 = 0.25. No lm_head:
  // tie_word_embeddings makes it a copy of the embedding.
  TempDir dir("bf16");
  Config cfg = tiny_config();
  cfg.n_layers = 1;
  auto bf16 = [](std::size_t n, std::uint16_t a, std::uint16_t b) {
    std::string s;
    for (std::size_t i = 0; i < n; ++i) {
      std::uint16_t bits = i % 2 ? b : a;
      s.push_back(char(bits & 0xFF));
      s.push_back(char(bits >> 8));
    }
    return s;
  };
  GlassLM ref(cfg, 0);
  std::vector<RawTensor> raw;
  for (const auto& [name, t] : ref.named_parameters())
    if (name != "lm_head.weight")
      raw.push_back({name, "BF16", t.shape(), bf16(t.size(), 0x3F80, 0xC040)});
  raw[0].bytes = bf16(40, 0x3E80, 0xC040);  // the embedding: 0.25, -3, 0.25, ...
  write_raw_safetensors(dir / "model.safetensors", raw);
  std::string config = config_to_json(cfg, DType::float32);
  config.replace(config.find("\"tie_word_embeddings\": false"), 28,
                 "\"tie_word_embeddings\": true");
  config.replace(config.find("\"float32\""), 9, "\"bfloat16\"");
  write_text(dir / "config.json", config);

  Checkpoint ckpt = load_checkpoint(dir.path.string());
  CHECK(ckpt.model.dtype() == DType::float32);
  check_tensor(ckpt.model.norm, {8}, {1, -3, 1, -3, 1, -3, 1, -3}, 0);
  CHECK(ckpt.model.embed_tokens.at({0, 0}) == 0.25);
  CHECK(ckpt.model.embed_tokens.at({0, 1}) == -3.0);
  CHECK(bit_equal(ckpt.model.lm_head, ckpt.model.embed_tokens));
  CHECK_FALSE(ckpt.model.lm_head.is(ckpt.model.embed_tokens));  // a copy, not shared
  CHECK(ckpt.model.lm_head.data<float>() != ckpt.model.embed_tokens.data<float>());
}

TEST_CASE(
    "checkpoint: loading converts the dtype when asked, or when the file mixes them") {
  TempDir dir("dtype");
  GlassLM model(tiny_config(), 7, DType::float64);
  save_checkpoint(dir / "c", model);
  Checkpoint as32 = load_checkpoint(dir / "c", DType::float32);
  CHECK(as32.model.dtype() == DType::float32);
  CHECK(as32.model.norm.dtype() == DType::float32);
  CHECK(as32.model.lm_head.at({1, 2}) == double(float(model.lm_head.at({1, 2}))));

  // One float32 weight in a float64 file: the config's torch_dtype decides.
  edit_weights(dir / "c", [](NamedTensors& t) {
    t[1].second = astype(t[1].second, DType::float32);
  });
  Checkpoint mixed = load_checkpoint(dir / "c");
  CHECK(mixed.model.dtype() == DType::float64);
  CHECK(mixed.model.layers[0].input_layernorm.dtype() == DType::float64);
  CHECK_FALSE(mixed.tokenizer.has_value());  // saved without one
}

TEST_CASE("checkpoint: missing, unexpected and misshaped weights are named") {
  TempDir dir("names");
  save_checkpoint(dir / "c", GlassLM(tiny_config(), 1));
  const std::string file = dir / "c/model.safetensors";
  SUBCASE("missing") {
    edit_weights(dir / "c", [](NamedTensors& t) {
      std::erase_if(
          t, [](auto& p) { return p.first == "model.layers.1.mlp.up_proj.weight"; });
    });
    CHECK_THROWS_WITH_AS(load_checkpoint(dir / "c"),
                         contains(file + ": missing weight "
                                         "'model.layers.1.mlp.up_proj.weight' "
                                         "(expected shape (16,8))"),
                         std::runtime_error);
  }
  SUBCASE("unexpected") {
    edit_weights(dir / "c", [](NamedTensors& t) {
      t.emplace_back("model.layers.0.self_attn.q_proj.bias", zeros({8}));
      t.emplace_back("model.layers.2.input_layernorm.weight", zeros({8}));
    });
    CHECK_THROWS_WITH_AS(load_checkpoint(dir / "c"),
                         contains(file + ": unexpected weights "
                                         "'model.layers.0.self_attn.q_proj.bias', "
                                         "'model.layers.2.input_layernorm.weight'"),
                         std::runtime_error);
  }
  SUBCASE("misshaped") {
    edit_weights(dir / "c", [](NamedTensors& t) {
      for (auto& [name, w] : t)
        if (name == "model.layers.0.self_attn.k_proj.weight") w = zeros({8, 8});
    });
    CHECK_THROWS_WITH_AS(
        load_checkpoint(dir / "c"),
        contains(file + ": weight 'model.layers.0.self_attn.k_proj.weight'"
                        " has shape (8,8), expected (4,8)"),
        std::runtime_error);
  }
  SUBCASE("config.json missing or broken") {
    fs::remove(dir / "c/config.json");
    CHECK_THROWS_WITH_AS(load_checkpoint(dir / "c"),
                         contains(dir / "c/config.json: cannot read: No such file"),
                         std::runtime_error);
    write_text(dir / "c/config.json",
               read_regular_file(corpus_path("config_wrong_type.json")));
    CHECK_THROWS_WITH_AS(load_checkpoint(dir / "c"),
                         contains(dir / "c/config.json: 'hidden_size' is string"),
                         std::runtime_error);
  }
}

TEST_CASE("checkpoint: a missing tokenizer file means none, a broken one is an error") {
  TempDir dir("tok");
  Tokenizer tok = tiny_tokenizer();
  save_checkpoint(dir / "c", GlassLM(tiny_config(), 1), &tok);
  CHECK(load_checkpoint(dir / "c").tokenizer.has_value());
  write_text(dir / "c/glassllm_tokenizer.json",
             read_regular_file(corpus_path("tokenizer_duplicate.json")));
  CHECK_THROWS_WITH_AS(load_checkpoint(dir / "c"),
                       contains(dir / "c/glassllm_tokenizer.json: tokenizer: token 2"),
                       std::runtime_error);
  write_text(dir / "c/glassllm_tokenizer.json", Tokenizer().to_json());  // 99 tokens
  CHECK_THROWS_WITH_AS(load_checkpoint(dir / "c"),
                       doctest::Contains("99 tokens, but config.json says vocab_size 5"),
                       std::runtime_error);
  fs::remove(dir / "c/glassllm_tokenizer.json");
  CHECK_FALSE(load_checkpoint(dir / "c").tokenizer.has_value());

  Tokenizer big;
  CHECK_THROWS_WITH_AS(save_checkpoint(dir / "d", GlassLM(tiny_config(), 1), &big),
                       doctest::Contains("the tokenizer has 99 tokens but the model's "
                                         "vocab_size is 5"),
                       std::invalid_argument);
}

TEST_CASE("checkpoint: the tokenizer's end-of-text id is config.json's eos_token_id") {
  TempDir dir("eos");
  // "$" is token 3 of a, b, c, $ (unk 4).
  Tokenizer with_eos({"a", "b", "c", "$"}, "$");
  save_checkpoint(dir / "e", GlassLM(tiny_config(), 1), &with_eos);
  auto j = nlohmann::json::parse(read_regular_file(dir / "e/config.json"));
  CHECK(j["eos_token_id"] == 3);
  CHECK(load_checkpoint(dir / "e").eos_token_ids == std::vector<std::int64_t>{3});

  // No tokenizer, or one without an end-of-text token: no key, no ids.
  save_checkpoint(dir / "n", GlassLM(tiny_config(), 1));
  CHECK(!nlohmann::json::parse(read_regular_file(dir / "n/config.json"))
             .contains("eos_token_id"));
  CHECK(load_checkpoint(dir / "n").eos_token_ids.empty());

  // A list (as Llama 3 writes it) is read whole; an id outside the vocabulary
  // and a value that is not an id are named.
  j["eos_token_id"] = {1, 3};
  write_text(dir / "e/config.json", j.dump());
  CHECK(load_checkpoint(dir / "e").eos_token_ids == std::vector<std::int64_t>{1, 3});
  j["eos_token_id"] = 5;
  write_text(dir / "e/config.json", j.dump());
  CHECK_THROWS_WITH_AS(
      load_checkpoint(dir / "e"),
      contains(dir / "e/config.json: eos_token_id 5 is outside the vocabulary [0, 5)"),
      std::runtime_error);
  j["eos_token_id"] = "3";
  write_text(dir / "e/config.json", j.dump());
  CHECK_THROWS_WITH_AS(
      load_checkpoint(dir / "e"),
      doctest::Contains("eos_token_id holds a string; expected token ids"),
      std::runtime_error);
}

TEST_CASE("checkpoint: an interrupted save never corrupts the previous checkpoint") {
  TempDir dir("interrupted");
  GlassLM first(tiny_config(), 1), second(tiny_config(), 2), third(tiny_config(), 3);
  save_checkpoint(dir / "c", first);

  // A file that merely looks like a temporary one (a crash's leftover, or
  // the user's own) is never opened, overwritten or removed: each save
  // writes to a fresh name.
  write_text(dir / "c/model.safetensors.tmp", "half a fi");
  save_checkpoint(dir / "c", second);
  CHECK(files_in(dir.path / "c") == std::vector<std::string>{"config.json",
                                                             "model.safetensors",
                                                             "model.safetensors.tmp"});
  CHECK(read_regular_file(dir / "c/model.safetensors.tmp") == "half a fi");
  CHECK(bit_equal(load_checkpoint(dir / "c").model.layers[0].q_proj,
                  second.layers[0].q_proj));

  // A save that fails part way (here a file-size limit, as a full disk would)
  // throws WriteError, removes its temporary file and leaves the old files.
  struct rlimit old_limit {};
  ::getrlimit(RLIMIT_FSIZE, &old_limit);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // write fails with EFBIG instead
  struct rlimit small = old_limit;
  small.rlim_cur = 1000;
  ::setrlimit(RLIMIT_FSIZE, &small);
  CHECK_THROWS_WITH_AS(save_checkpoint(dir / "c", third),
                       contains(dir / "c/model.safetensors: cannot write: writing"),
                       WriteError);
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);
  CHECK(files_in(dir.path / "c") == std::vector<std::string>{"config.json",
                                                             "model.safetensors",
                                                             "model.safetensors.tmp"});
  Checkpoint after = load_checkpoint(dir / "c");
  CHECK(bit_equal(after.model.layers[0].q_proj, second.layers[0].q_proj));
  CHECK(bit_equal(after.model.lm_head, second.lm_head));
}
