// fuzz_hf_tokenizer.cpp: a libFuzzer target for a Hugging Face tokenizer.json
// as a whole: the JSON reader's limits, the model, added tokens, and every
// normalizer, pre_tokenizer, post_processor and decoder with their
// Sequences. HFTokenizer::from_json may reject an input only with
// std::runtime_error (a message of ours); a tokenizer it accepts must encode
// a short text (its Split regexes under ICU's step limit) to ids in range, or
// refuse it with a message, and decode those ids to text printable() can show.
// Run with fuzz/run.sh; corpus: tests/data/fuzz/hf_tokenizer/.
#include <cstdint>
#include <string>

#include "glassllm/io/files.h"
#include "glassllm/io/hf_tokenizer.h"

using namespace glassllm;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    HFTokenizer tok = HFTokenizer::from_json(text, "", "fuzz");
    for (const char* sample : {"Hello world 123", "ab ab\n\t\xC3\xA9 <s>"}) {
      std::vector<std::int64_t> ids;
      try {
        ids = tok.encode(sample);
      } catch (const std::exception&) {
        continue;  // a character outside the vocabulary, a regex past its limit
      }
      for (std::int64_t id : ids)
        if (id < 0 || std::size_t(id) >= tok.vocab_size()) __builtin_trap();
      const std::string shown = printable(tok.decode(ids), true);
      for (char c : shown)
        if (c == '\x1b' || c == '\r' || c == '\x7f') __builtin_trap();
    }
  } catch (const std::runtime_error&) {
  }
  return 0;
}
