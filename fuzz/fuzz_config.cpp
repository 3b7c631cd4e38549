// fuzz_config.cpp: a libFuzzer target for config.json: config_from_json on
// any text. It may reject an input only with std::invalid_argument (its
// documented error); anything it accepts must be a valid Config that
// survives config_to_json and back unchanged, and whose memory estimates
// (budget.h) are finite. Any other exception, a crash or a sanitizer report
// is a bug. Run with fuzz/run.sh; corpus: tests/data/fuzz/config/.
#include <cmath>
#include <cstdint>
#include <string>

#include "glassllm/io/budget.h"
#include "glassllm/io/checkpoint.h"

using namespace glassllm;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    auto [cfg, dtype] = config_from_json(text);
    cfg.validate();  // accepted means valid
    auto [again, dtype2] =
        config_from_json(config_to_json(cfg, dtype.value_or(DType::float32)));
    if (again.d_model != cfg.d_model || again.n_heads != cfg.n_heads ||
        again.n_kv_heads != cfg.n_kv_heads || again.n_layers != cfg.n_layers ||
        again.d_ff != cfg.d_ff || again.max_len != cfg.max_len ||
        again.vocab_size != cfg.vocab_size || again.rope_theta != cfg.rope_theta ||
        again.norm_eps != cfg.norm_eps)
      __builtin_trap();
    // Sizes up to 2^31 each: the estimates, in doubles, stay finite.
    if (!std::isfinite(parameter_bytes(cfg, DType::float64)) ||
        !std::isfinite(training_step_bytes(cfg, DType::float64, 1)))
      __builtin_trap();
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
