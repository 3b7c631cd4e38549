// fuzz_checkpoint.cpp: a libFuzzer target for everything that reads checkpoint
// files: the safetensors reader, config_from_json and Tokenizer::from_json,
// plus the tokenizer's UTF-8 decoder. Build and run it with fuzz/run.sh.
//
// Every input goes to all of them. Each is allowed to reject it only with the
// exception its header documents (std::runtime_error for safetensors,
// std::invalid_argument for config.json and the tokenizer); any other
// exception, a crash or a sanitizer report is a bug, and libFuzzer stops
// with the input that caused it.
#include <cstdint>
#include <string>

#include "glassllm/io/checkpoint_internal.h"

using namespace glassllm;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    NamedTensors tensors = detail::read_safetensors_bytes(data, size, "fuzz.safetensors");
    // Read every value back, so AddressSanitizer sees any bad allocation.
    double sum = 0;
    for (const auto& [name, t] : tensors)
      for (double v : t.to_vector()) sum += v;
    (void)sum;
  } catch (const std::runtime_error&) {
  }

  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    auto [cfg, dtype] = config_from_json(text);
    // Whatever was accepted must survive a round trip.
    auto [again, dtype2] =
        config_from_json(config_to_json(cfg, dtype.value_or(DType::float32)));
    if (again.d_model != cfg.d_model || again.n_kv_heads != cfg.n_kv_heads)
      __builtin_trap();
  } catch (const std::invalid_argument&) {
  }

  try {
    Tokenizer tok = Tokenizer::from_json(text);
    if (Tokenizer::from_json(tok.to_json()).vocab_size() != tok.vocab_size())
      __builtin_trap();
  } catch (const std::invalid_argument&) {
  }

  // The UTF-8 decoder: at most one id per byte, and text without unknown
  // characters comes back unchanged.
  Tokenizer ascii;
  std::vector<std::int64_t> ids = ascii.encode(text);
  if (ids.size() > size) __builtin_trap();
  if (ascii.count_unknown(text) == 0 && ascii.decode(ids) != text) __builtin_trap();
  return 0;
}
