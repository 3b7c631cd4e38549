// Tests for target_gradients (include/glassllm/trace/target_gradients.h): the
// loss against GlassLM::loss and a hand-written log-softmax, and the gradient
// by position against central differences on the embedding table.
#include <doctest/doctest.h>

#include <cmath>
#include <numeric>

#include "glassllm/engine/ops.h"
#include "glassllm/trace/target_gradients.h"
#include "tests/model_fixtures.h"

using namespace glassllm;
using namespace glassllm::test::model;

namespace {

std::string id_text(std::int64_t id) {
  return "<" + std::to_string(id) + ">";
}

}  // namespace

TEST_CASE("target gradients: the loss is the target's mean cross-entropy") {
  GlassLM model(tiny(), 3, f64);
  const std::vector<std::int64_t> prompt = {1, 4, 2}, target = {7, 3, 9};
  TargetGradients g = target_gradients(model, prompt, target, id_text);
  // The same loss from GlassLM::loss, with every prompt position ignored.
  const TokenBatch tokens = {{1, 4, 2, 7, 3}}, labels = {{-100, -100, 7, 3, 9}};
  CHECK(g.loss == doctest::Approx(model.loss(tokens, labels).item()).epsilon(1e-12));
  REQUIRE(g.token_loss.size() == 3);
  const double mean = std::accumulate(g.token_loss.begin(), g.token_loss.end(), 0.0) / 3;
  CHECK(g.loss == doctest::Approx(mean).epsilon(1e-12));
  CHECK(g.prompt_length == 3);
  REQUIRE(g.tokens.size() == 5);
  CHECK(g.tokens[3].id == 7);
  CHECK(g.tokens[3].text == "<7>");
  CHECK(g.target.back().id == 9);
}

TEST_CASE("target gradients: each position's gradient matches central differences") {
  GlassLM model(tiny(), 5, f64);
  // Every input token differs, so a token's embedding row is its position's
  // input, and moving the row moves only that position.
  const std::vector<std::int64_t> prompt = {2, 5, 11}, target = {6, 1};
  TargetGradients g = target_gradients(model, prompt, target, id_text);
  const TokenBatch tokens = {{2, 5, 11, 6}}, labels = {{-100, -100, 6, 1}};
  const std::size_t d = model.config().d_model;
  const double eps = 1e-6;
  for (std::size_t t = 0; t < g.tokens.size(); ++t) {
    double* row = model.embed_tokens.mutable_data<double>() + tokens[0][t] * d;
    double sq = 0;
    for (std::size_t k = 0; k < d; ++k) {
      const double kept = row[k];
      row[k] = kept + eps;
      const double up = model.loss(tokens, labels).item();
      row[k] = kept - eps;
      const double down = model.loss(tokens, labels).item();
      row[k] = kept;
      sq += std::pow((up - down) / (2 * eps), 2);
    }
    CAPTURE(t);
    CHECK(g.grad_norm[t] == doctest::Approx(std::sqrt(sq)).epsilon(1e-6));
  }
  // The weights' gradients were put back to none.
  CHECK_FALSE(model.embed_tokens.grad().defined());
}

TEST_CASE("target gradients: an empty target, or one past max_len, is refused") {
  GlassLM model(tiny(4), 1, f64);
  CHECK_THROWS_WITH_AS(target_gradients(model, {1}, {}, id_text),
                       "gradients: the target is empty", std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      target_gradients(model, {1, 2, 3}, {4, 5, 6}, id_text),
      "gradients: the prompt (3 tokens) and target (3) need 5 positions; "
      "the model reads at most 4",
      std::invalid_argument);
}

TEST_CASE("target gradients: the JSON names every field") {
  GlassLM model(tiny(), 3, f64);
  const std::string j = to_json(target_gradients(model, {1, 4}, {7}, id_text));
  for (const char* key : {"\"format\":\"glassllm-gradients\"", "\"prompt_length\":2",
                          "\"loss\":", "\"grad_norm\":", "\"target\":[{\"id\":7"})
    CHECK(j.find(key) != std::string::npos);
}
