// fuzz_tokenizer.cpp: a libFuzzer target for glassllm_tokenizer.json and the
// tokenizer's UTF-8 handling. Tokenizer::from_json may reject an input only
// with std::invalid_argument; a tokenizer it accepts must survive to_json
// and back, encode any bytes (the input itself) to ids in range, at most one
// id per byte, and decode them to text that printable() (files.h) can show.
// Run with fuzz/run.sh; corpus: tests/data/fuzz/tokenizer/.
#include <cstdint>
#include <string>

#include "glassllm/io/files.h"
#include "glassllm/io/tokenizer.h"

using namespace glassllm;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    Tokenizer tok = Tokenizer::from_json(text);
    Tokenizer again = Tokenizer::from_json(tok.to_json());
    if (again.vocab_size() != tok.vocab_size() || again.to_json() != tok.to_json())
      __builtin_trap();
    std::vector<std::int64_t> ids = tok.encode(text);
    if (ids.size() > size) __builtin_trap();
    for (std::int64_t id : ids)
      if (id < 0 || std::size_t(id) >= tok.vocab_size()) __builtin_trap();
    const std::string shown = printable(tok.decode(ids), true);
    for (char c : shown)
      if (c == '\x1b' || c == '\r' || c == '\x7f') __builtin_trap();
  } catch (const std::invalid_argument&) {
  }

  // The default tokenizer on the raw bytes: text without unknown characters
  // comes back unchanged.
  Tokenizer ascii;
  std::vector<std::int64_t> ids = ascii.encode(text);
  if (ids.size() > size) __builtin_trap();
  if (ascii.count_unknown(text) == 0 && ascii.decode(ids) != text) __builtin_trap();
  return 0;
}
