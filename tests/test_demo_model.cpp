// The bundled model, models/demo/ (trained by `glassllm train`; the command
// is in models/demo/README.md), loads as a checkpoint and solves copy on
// held-out examples it has never seen, ASCII and accented alike.
#include "check.h"
#include "glassllm/io/checkpoint.h"
#include "glassllm/train/tasks.h"
#include "glassllm/train/train.h"

using namespace glassllm;

namespace {
const std::string demo_dir = std::string(GLASSLLM_SOURCE_DIR) + "/models/demo";
}

TEST_CASE("the bundled model loads with a tokenizer covering ASCII and Latin-1 letters") {
  Checkpoint ckpt = load_checkpoint(demo_dir);
  REQUIRE(ckpt.tokenizer);
  const Config& c = ckpt.model.config();
  // The default config of the design.
  CHECK(c.d_model == 128);
  CHECK(c.n_layers == 4);
  CHECK(c.n_heads == 4);
  CHECK(c.n_kv_heads == 2);
  CHECK(c.d_ff == 384);
  CHECK(c.max_len == 128);
  for (char ch = ' '; ch <= '~'; ++ch) {
    CAPTURE(ch);
    CHECK(ckpt.tokenizer->count_unknown(std::string(1, ch)) == 0);
  }
  // The accented letters of Portuguese, Spanish and French, and ¿ ¡ « » º ª:
  // 95 + '\n' + '\t' + end-of-text + 46 + unknown = 145 tokens.
  CHECK(ckpt.tokenizer->count_unknown(Tokenizer::kLatin1Letters) == 0);
  CHECK(ckpt.tokenizer->count_unknown("coração ação ñandú ¿qué? «élève»") == 0);
  CHECK(c.vocab_size == 145);
}

TEST_CASE("the bundled model copies held-out strings, ASCII and accented, 98% exact") {
  Checkpoint ckpt = load_checkpoint(demo_dir);
  const Tokenizer& tok = *ckpt.tokenizer;
  // A seed the training run never used (it trained and evaluated with seed
  // 0): fresh strings, half of them drawn with the accented letters.
  auto task = make_task("copy+accents", tok);
  EvalResult r = evaluate(ckpt.model, *task, tok, /*seed=*/20261130, /*batches=*/4,
                          /*batch_size=*/16);
  MESSAGE("copy on fresh held-out examples: " << r.summary() << " over " << r.examples
                                              << " examples");
  REQUIRE(r.accuracy);
  CHECK(r.examples >= 200);
  CHECK(*r.accuracy >= 0.98);
  // Each kind on its own: (right, total) counted by evaluate.
  for (const auto* kind : {&r.ascii_right, &r.accented_right}) {
    REQUIRE(kind->count("copy") == 1);
    const auto [right, total] = kind->at("copy");
    CAPTURE(right);
    CAPTURE(total);
    CHECK(total >= 60);
    CHECK(double(right) >= 0.98 * double(total));
  }
}

TEST_CASE("the bundled model ends its answers with the end-of-text token") {
  Checkpoint ckpt = load_checkpoint(demo_dir);
  const Tokenizer& tok = *ckpt.tokenizer;
  REQUIRE(tok.eos_id());
  // config.json names the tokenizer's end-of-text token, as train writes it.
  CHECK(ckpt.eos_token_ids == std::vector<std::int64_t>{*tok.eos_id()});
  GenerateOptions opt;
  opt.max_new_tokens = 64;
  opt.eos_token_ids = ckpt.eos_token_ids;
  // Answers worked out by hand: the reverse of "stressed", the sorted
  // characters of "glassllm" (by byte: a < g < l < m < s), 123 + 4567;
  // "coração" copied, and "ação" reversed character by character (one token
  // per accented letter, though UTF-8 writes it in two bytes).
  const std::pair<const char*, const char*> cases[] = {
      {"R stressed=", "desserts"}, {"C GlassLM2026=", "GlassLM2026"},
      {"S glassllm=", "aglllmss"}, {"A 123+4567=", "4690"},
      {"C coração=", "coração"},   {"R ação=", "oãça"},
  };
  for (const auto& [prompt, answer] : cases) {
    CAPTURE(prompt);
    std::vector<std::int64_t> ids = tok.encode(prompt);
    std::vector<std::int64_t> out = ckpt.model.generate(ids, opt);
    // The answer, then the end-of-text token, then nothing: generation stopped.
    CHECK(tok.decode(out) == std::string(prompt) + answer + "\x03");
  }
}
