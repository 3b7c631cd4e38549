// Tests for GlassLM::generate (model.h): greedy and sampled continuations,
// the window rule, and where generation stops.
#include <algorithm>
#include <cmath>
#include <functional>
#include <string>

#include "check.h"
#include "glassllm/model/model.h"
#include "model_fixtures.h"

using namespace glassllm;
using namespace glassllm::test::model;
using test::max_abs_diff;

// ---- generation ------------------------------------------------------------------

TEST_CASE(
    "model: generate past max_len reruns the last max_len tokens: each token is argmax "
    "of a "
    "fresh full forward") {
  GlassLM model(tiny(8), 5, f64);
  // A prompt longer than max_len is cropped to its last 8 tokens.
  std::vector<std::int64_t> prompt = sequence(10, 16);
  for (Attention path : kPaths)
    for (CacheMode mode : kModes) {
      CAPTURE(attention_name(path));
      CAPTURE(cache_mode_name(mode));
      model.attention = path;
      GenerateOptions opt;
      opt.max_new_tokens = 20;
      opt.cache_mode = mode;
      std::vector<std::int64_t> out = model.generate(prompt, opt);
      REQUIRE(out.size() == 30);
      CHECK(std::equal(prompt.begin(), prompt.end(), out.begin()));
      no_grad guard;
      for (std::size_t i = prompt.size(); i < out.size(); ++i) {
        CAPTURE(i);
        std::size_t from = i > 8 ? i - 8 : 0;
        std::vector<std::int64_t> window(out.begin() + std::ptrdiff_t(from),
                                         out.begin() + std::ptrdiff_t(i));
        CHECK(out[i] == argmax_last(model.forward(window)));
      }
    }
}

TEST_CASE(
    "model: greedy generation is deterministic; sampling repeats with the same seed") {
  GlassLM model(tiny(16), 6, f32);
  std::vector<std::int64_t> prompt{1, 2, 3};
  GenerateOptions greedy;
  greedy.max_new_tokens = 12;
  CHECK(model.generate(prompt, greedy) == model.generate(prompt, greedy));
  GenerateOptions none;
  none.max_new_tokens = 0;
  CHECK(model.generate(prompt, none) == prompt);

  GenerateOptions hot = greedy;
  hot.temperature = 1.5;
  hot.seed = 42;
  std::vector<std::int64_t> s1 = model.generate(prompt, hot);
  CHECK(s1 == model.generate(prompt, hot));
  hot.seed = 43;
  CHECK(s1 != model.generate(prompt, hot));  // 12 draws from ~16 near-equal ids

  // top_k = 1 leaves only the argmax: sampling becomes greedy.
  GenerateOptions top1 = hot;
  top1.top_k = 1;
  CHECK(model.generate(prompt, top1) == model.generate(prompt, greedy));

  // top_k = 3: every sampled token is among the 3 largest logits of a fresh
  // full forward over what came before it.
  GenerateOptions top3 = hot;
  top3.top_k = 3;
  top3.max_new_tokens = 10;
  std::vector<std::int64_t> out = model.generate(prompt, top3);
  no_grad guard;
  for (std::size_t i = prompt.size(); i < out.size(); ++i) {
    std::vector<double> z = model
                                .forward(std::vector<std::int64_t>(
                                    out.begin(), out.begin() + std::ptrdiff_t(i)))
                                .to_vector();
    std::vector<double> last(z.end() - 16, z.end());
    std::size_t larger = 0;  // logits strictly larger than the chosen one
    for (double v : last) larger += v > last[std::size_t(out[i])];
    CAPTURE(i);
    CHECK(larger < 3);
  }
}

TEST_CASE("model: generate stops right after an end-of-text id, or when stop says so") {
  GlassLM model(tiny(16), 6, f32);
  std::vector<std::int64_t> prompt{1, 2, 3};
  GenerateOptions plain;
  plain.max_new_tokens = 12;
  const std::vector<std::int64_t> full = model.generate(prompt, plain);
  REQUIRE(full.size() == prompt.size() + 12);
  // Declare the 4th generated token an end-of-text id: greedy generation is
  // the same up to it, then ends, keeping it. (Its first occurrence: an
  // earlier generated token could be the same id.)
  const std::int64_t eos = full[prompt.size() + 3];
  const auto first =
      std::find(full.begin() + std::ptrdiff_t(prompt.size()), full.end(), eos);
  GenerateOptions with_eos = plain;
  with_eos.eos_token_ids = {eos};
  CHECK(model.generate(prompt, with_eos) ==
        std::vector<std::int64_t>(full.begin(), first + 1));
  // A stop callback sees every token so far and ends generation when it
  // returns true: here once 5 tokens are new.
  GenerateOptions with_stop = plain;
  std::size_t calls = 0;
  with_stop.stop = [&](const std::vector<std::int64_t>& tokens) {
    ++calls;
    return tokens.size() == prompt.size() + 5;
  };
  CHECK(model.generate(prompt, with_stop) ==
        std::vector<std::int64_t>(full.begin(), full.begin() + 8));
  CHECK(calls == 5);
}

TEST_CASE("model: generate rejects an empty prompt and unknown ids") {
  GlassLM model(tiny(), 0);
  CHECK_THROWS_WITH_AS(model.generate({}), "generate: the prompt is empty",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      model.generate({1, 99}),
      "generate: token id 99 at prompt position 1 is out of range [0, 16)",
      std::invalid_argument);
}
