// test_tracer.cpp: the tracer of tracer.h. Every expected value is worked out
// here from the recorded tensors or from a formula written out, never read
// back from the tracer's own summaries.
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validator.hpp>

#include "check.h"
#include "glassllm/io/checkpoint.h"
#include "glassllm/io/tokenizer.h"
#include "glassllm/model/model.h"
#include "glassllm/trace/tracer.h"
#include "model_fixtures.h"

using namespace glassllm;

namespace {

// model_fixtures.h's tiny GQA model: H = 4 query heads share Hkv = 2 K/V
// heads (G = 2), hd = 16 / 4 = 4. float64, so that recomputed values agree to
// ~1e-15.
GlassLM tiny_model(Attention path = Attention::repeat_kv, std::size_t max_len = 16) {
  GlassLM model(test::model::tiny(max_len), 5, DType::float64);
  model.attention = path;
  return model;
}

// Prefill 5 tokens, then decode `steps` tokens one at a time through the cache.
void run(const GlassLM& model, std::size_t steps, Tracer* tracer = nullptr) {
  no_grad guard;
  Cache cache = model.new_cache();
  model.forward({1, 2, 3, 4, 5}, &cache, 0);
  for (std::size_t s = 0; s < steps; ++s) {
    if (tracer) tracer->set_next_token(std::int64_t(6 + s));
    model.forward({std::int64_t(6 + s)}, &cache, 5 + s);
  }
}

nlohmann::json load_json(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in);
  return nlohmann::json::parse(in);
}

// Validates a document against docs/trace.schema.json; returns the errors.
std::string schema_errors(const nlohmann::json& doc) {
  static const nlohmann::json schema_doc =
      load_json(std::string(GLASSLLM_TEST_DATA) + "/../../docs/trace.schema.json");
  valijson::Schema schema;
  valijson::SchemaParser parser;
  valijson::adapters::NlohmannJsonAdapter schema_adapter(schema_doc);
  parser.populateSchema(schema_adapter, schema);
  valijson::Validator validator;
  valijson::ValidationResults results;
  valijson::adapters::NlohmannJsonAdapter doc_adapter(doc);
  if (validator.validate(schema, doc_adapter, &results)) return "";
  std::string errors;
  valijson::ValidationResults::Error e;
  while (results.popError(e)) {
    std::string where;
    for (const std::string& c : e.context) where += c;
    errors += where + ": " + e.description + "\n";
  }
  return errors;
}

}  // namespace

TEST_CASE("a step per forward: snapshot shapes, m growing by one per decode step") {
  GlassLM model = tiny_model();
  Tracer tracer;
  run(model, 3, &tracer);
  const auto& steps = tracer.steps();
  REQUIRE(steps.size() == 4);
  CHECK(steps[0].kind == "prefill");
  CHECK(steps[0].positions == std::vector<std::size_t>{0, 1, 2, 3, 4});
  // Prefill: B = 1, T = 5, H = 4, Hkv = 2, hd = 4, m = 5.
  CHECK(steps[0].snapshot("resid.in", 0).shape == Shape{1, 5, 16});
  CHECK(steps[0].snapshot("attn.q", 1).shape == Shape{1, 4, 5, 4});
  CHECK(steps[0].snapshot("attn.k", 1).shape == Shape{1, 2, 5, 4});
  CHECK(steps[0].snapshot("attn.v", 1).shape == Shape{1, 2, 5, 4});
  CHECK(steps[0].snapshot("attn.scores", 0).shape == Shape{1, 4, 5, 5});
  CHECK(steps[0].snapshot("attn.softmax", 0).shape == Shape{1, 4, 5, 5});
  CHECK(steps[0].snapshot("attn.out", 0).shape == Shape{1, 4, 5, 4});
  for (std::size_t s = 1; s < 4; ++s) {
    CAPTURE(s);
    CHECK(steps[s].kind == "decode");
    CHECK(steps[s].start == 4 + s);
    CHECK(steps[s].positions == std::vector<std::size_t>{4 + s});
    // One new query, m = 5 + s keys; the new k and v are one position.
    CHECK(steps[s].snapshot("attn.scores", 1).shape == Shape{1, 4, 1, 5 + s});
    CHECK(steps[s].snapshot("attn.softmax", 1).shape == Shape{1, 4, 1, 5 + s});
    CHECK(steps[s].snapshot("attn.k", 0).shape == Shape{1, 2, 1, 4});
    // The cache after the step: [B, Hkv, m, hd], 2 (K and V) * m * 2 * 4 * 8
    // bytes per layer, 2 layers.
    CHECK(steps[s].cache_shape == Shape{1, 2, 5 + s, 4});
    CHECK(steps[s].cache_bytes_per_layer == 2 * (5 + s) * 2 * 4 * 8);
    CHECK(steps[s].cache_bytes == 2 * 2 * (5 + s) * 2 * 4 * 8);
  }
  CHECK(steps[0].next->id == 6);
}

TEST_CASE(
    "a recorded score equals q . k / sqrt(hd) recomputed from the recorded q and k") {
  for (Attention path : {Attention::repeat_kv, Attention::grouped}) {
    CAPTURE(attention_name(path));
    GlassLM model = tiny_model(path);
    Tracer tracer;
    run(model, 2, &tracer);
    const auto& steps = tracer.steps();
    const std::size_t hd = 4, G = 2;
    // Step 2 (position 6) attends over keys 0..4 (prefill), 5 (step 1), 6 (its own).
    for (std::size_t layer = 0; layer < 2; ++layer) {
      const Snapshot& q = steps[2].snapshot("attn.q", layer);            // [1, 4, 1, 4]
      const Snapshot& scores = steps[2].snapshot("attn.scores", layer);  // [1, 4, 1, 7]
      auto key = [&](std::size_t kv_head, std::size_t j, std::size_t d) {
        std::size_t step = j < 5 ? 0 : j - 4, t = j < 5 ? j : 0;
        const Snapshot& k = steps[step].snapshot("attn.k", layer);  // [1, 2, T, 4]
        return k.data[(kv_head * k.shape[2] + t) * hd + d];
      };
      for (std::size_t h = 0; h < 4; ++h)
        for (std::size_t j = 0; j < 7; ++j) {
          double dot = 0;
          for (std::size_t d = 0; d < hd; ++d)
            dot += q.data[h * hd + d] * key(h / G, j, d);
          CAPTURE(h);
          CAPTURE(j);
          CHECK(scores.data[h * 7 + j] ==
                doctest::Approx(dot / 2.0).epsilon(1e-12));  // sqrt(4) = 2
        }
    }
  }
}

TEST_CASE(
    "keys after the query get probability exactly 0, every row sums to 1, the masked "
    "scores are not stored") {
  for (Attention path : {Attention::repeat_kv, Attention::grouped}) {
    CAPTURE(attention_name(path));
    GlassLM model = tiny_model(path);
    Tracer tracer;
    run(model, 1, &tracer);
    const TraceStep& prefill = tracer.steps()[0];
    // They follow from the raw scores: a reader hides every key after its query.
    CHECK_THROWS_AS(prefill.snapshot("attn.scores_masked", 1), std::out_of_range);
    const Snapshot& raw = prefill.snapshot("attn.scores", 1);
    const Snapshot& probs = prefill.snapshot("attn.softmax", 1);
    // [1, 4, 5, 5]: query t (position t) sees key j iff j <= t.
    for (std::size_t h = 0; h < 4; ++h)
      for (std::size_t t = 0; t < 5; ++t) {
        double row = 0;
        for (std::size_t j = 0; j < 5; ++j) {
          std::size_t i = (h * 5 + t) * 5 + j;
          CAPTURE(i);
          CHECK(std::isfinite(raw.data[i]));  // scores are recorded before the mask
          if (j > t)
            CHECK(probs.data[i] == 0.0);
          else
            CHECK(probs.data[i] > 0.0);
          row += probs.data[i];
        }
        CHECK(row == doctest::Approx(1.0).epsilon(1e-12));
      }
  }
}

TEST_CASE("the grouped path records the same snapshots as repeat_kv, as [B, H, T, m]") {
  GlassLM a = tiny_model(Attention::repeat_kv), b = tiny_model(Attention::grouped);
  std::optional<Tracer> tracer;
  tracer.emplace();
  CHECK_THROWS_AS(Tracer(), std::logic_error);  // tracers do not nest
  run(a, 2, &*tracer);
  std::vector<TraceStep> first = tracer->steps();
  tracer.reset();
  tracer.emplace();
  run(b, 2, &*tracer);
  const auto& second = tracer->steps();
  for (std::size_t s = 0; s < 3; ++s)
    for (const char* name : {"attn.scores", "attn.softmax", "attn.out"}) {
      CAPTURE(s);
      CAPTURE(name);
      const Snapshot& x = first[s].snapshot(name, 1);
      const Snapshot& y = second[s].snapshot(name, 1);
      REQUIRE(x.shape == y.shape);
      for (std::size_t i = 0; i < x.data.size(); ++i)
        CHECK(x.data[i] == doctest::Approx(y.data[i]).epsilon(1e-12));
    }
}

TEST_CASE("repeat_kv nodes and their bytes are in the graph; the grouped path has none") {
  for (Attention path : {Attention::repeat_kv, Attention::grouped}) {
    CAPTURE(attention_name(path));
    GlassLM model = tiny_model(path);
    Tracer tracer;
    run(model, 2, &tracer);
    const TraceStep& step = tracer.steps()[2];  // m = 7
    std::size_t ops = 0, bytes = 0;
    for (const OpNode& n : step.graph.nodes)
      if (n.op == "repeat_kv") {
        ++ops;
        bytes += n.bytes;
        // [B, Hkv*G, m, hd] float64: 1 * 4 * 7 * 4 * 8 = 896 bytes, written once.
        CHECK(n.shape == Shape{1, 4, 7, 4});
        CHECK(n.bytes == 896);
      }
    if (path == Attention::repeat_kv) {
      CHECK(ops == 4);  // K and V in each of 2 layers
      CHECK(bytes == 4 * 896);
    } else {
      CHECK(ops == 0);
      CHECK(bytes == 0);
    }
    // Views write nothing: every reshape node has 0 bytes.
    for (const OpNode& n : step.graph.nodes)
      if (n.op == "reshape") CHECK(n.bytes == 0);
  }
}

TEST_CASE("the K/V cache node links each step's K and V to the next step") {
  GlassLM model = tiny_model();
  Tracer tracer;
  run(model, 3, &tracer);
  const auto& steps = tracer.steps();
  const auto& links = tracer.cache_links();
  // 3 step boundaries x 2 layers x (K, V).
  REQUIRE(links.size() == 3 * 2 * 2);
  for (const CacheLink& l : links) {
    CAPTURE(l.from_step);
    CAPTURE(l.layer);
    CHECK(l.to_step == l.from_step + 1);
    const OpNode& to = steps[l.to_step].graph.nodes.at(l.to_node);
    const OpNode& from = steps[l.from_step].graph.nodes.at(l.from_node);
    CHECK(to.op == "kv_cache");
    CHECK(to.name == l.tensor);
    CHECK(to.layer == int(l.layer));
    // The cache the next step reads is what this step left: 5 + from_step positions.
    CHECK(to.shape == Shape{1, 2, 5 + l.from_step, 4});
    CHECK(from.shape == to.shape);
    // The prefill's K is rope's output; later ones are the concatenated cache.
    if (l.tensor == "k") CHECK(from.op == (l.from_step == 0 ? "rope" : "concat"));
    // The next step reads it: some op there takes the kv_cache node as input.
    bool read = false;
    for (const OpNode& n : steps[l.to_step].graph.nodes)
      for (std::size_t in : n.inputs) read = read || in == l.to_node;
    CHECK(read);
  }
}

TEST_CASE("tracing does not change the logits (bit for bit)") {
  for (Attention path : {Attention::repeat_kv, Attention::grouped}) {
    CAPTURE(attention_name(path));
    GlassLM model = tiny_model(path);
    auto logits = [&](bool traced, bool grads) {
      TraceOptions opt;
      opt.grads = grads;
      std::optional<Tracer> tracer;
      if (traced) tracer.emplace(opt);
      std::optional<no_grad> guard;
      if (!grads) guard.emplace();
      Cache cache = model.new_cache();
      std::vector<double> all = model.forward({1, 2, 3, 4, 5}, &cache, 0).to_vector();
      if (tracer) tracer->set_next_token(6);
      std::vector<double> next = model.forward({6}, &cache, 5).to_vector();
      all.insert(all.end(), next.begin(), next.end());
      return all;
    };
    std::vector<double> plain = logits(false, false);
    CHECK(logits(true, false) == plain);
    CHECK(logits(true, true) == plain);
  }
}

TEST_CASE(
    "grads: d log p(next) / d snapshot, with log p matching the step's distribution") {
  GlassLM model = tiny_model();
  TraceOptions opt;
  opt.grads = true;
  opt.top_k = 16;  // the whole vocabulary, to look the chosen token up
  Tracer tracer(opt);
  Cache cache = model.new_cache();
  model.forward({1, 2, 3, 4, 5}, &cache, 0);  // grad mode on: the graph is recorded
  tracer.set_next_token(9);
  const TraceStep& step = tracer.steps()[0];
  REQUIRE(step.log_prob.has_value());
  for (const Candidate& c : step.top_k)
    if (c.id == 9)
      CHECK(*step.log_prob == doctest::Approx(std::log(c.prob)).epsilon(1e-12));
  // The last query's scores get gradient on visible keys only; a masked
  // score gets none (softmax's backward is 0 where the probability is 0).
  const Snapshot& scores = step.snapshot("attn.scores", 1);  // [1, 4, 5, 5]
  REQUIRE(scores.grad.size() == scores.data.size());
  double visible = 0;
  for (std::size_t h = 0; h < 4; ++h)
    for (std::size_t t = 0; t < 5; ++t)
      for (std::size_t j = 0; j < 5; ++j) {
        double g = scores.grad[(h * 5 + t) * 5 + j];
        if (j > t) CHECK(g == 0.0);
        if (t == 4) visible += std::fabs(g);
      }
  CHECK(visible > 0);
  // log p depends on the last position's residual stream.
  const Snapshot& resid = step.snapshot("resid.in", 0);
  double last = 0;
  for (std::size_t d = 0; d < 16; ++d) last += std::fabs(resid.grad[4 * 16 + d]);
  CHECK(last > 0);
  // Without the graph, asking for grads is an error that says what to do.
  {
    no_grad guard;
    model.forward({6}, &cache, 5);
  }
  CHECK_THROWS_WITH_AS(tracer.set_next_token(3), doctest::Contains("grad mode on"),
                       std::logic_error);
}

TEST_CASE(
    "layers and heads select what is recorded; K/V keep the selected heads' groups") {
  GlassLM model = tiny_model();
  TraceOptions opt;
  opt.layers = {1};
  opt.heads = {3};  // K/V head 3 / G = 1
  std::optional<Tracer> tracer;
  tracer.emplace(opt);
  run(model, 1, &*tracer);
  const TraceStep step = tracer->steps()[0];
  CHECK_THROWS_AS(step.snapshot("attn.q", 0), std::out_of_range);
  const Snapshot& q = step.snapshot("attn.q", 1);
  CHECK(q.shape == Shape{1, 1, 5, 4});
  CHECK(q.heads == std::vector<std::size_t>{3});
  const Snapshot& k = step.snapshot("attn.k", 1);
  CHECK(k.shape == Shape{1, 1, 5, 4});
  CHECK(k.heads == std::vector<std::size_t>{1});
  // The same numbers as head 3 of an unrestricted trace.
  tracer.reset();
  tracer.emplace();
  run(model, 1, &*tracer);
  const Snapshot& all = tracer->steps()[0].snapshot("attn.q", 1);
  for (std::size_t i = 0; i < 20; ++i) CHECK(q.data[i] == all.data[3 * 20 + i]);
}

TEST_CASE("generate through a full window: a window_reset step restarts positions at 0") {
  GlassLM model = tiny_model(Attention::grouped, 8);
  Tokenizer tok(
      {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o"});
  Tracer tracer({}, &tok);
  GenerateOptions gen;
  gen.max_new_tokens = 6;
  gen.on_step = [&](const Tensor&, std::int64_t next) { tracer.set_next_token(next); };
  std::vector<std::int64_t> out = model.generate({1, 2, 3, 4, 5}, gen);
  const auto& steps = tracer.steps();
  // prefill (5), decode at 5, 6, 7 (the cache is then full), reset, and a
  // second reset: the re-run window fills the 8 positions again.
  REQUIRE(steps.size() == 6);
  CHECK(steps[0].kind == "prefill");
  CHECK(steps[3].kind == "decode");
  CHECK(steps[3].start == 7);
  CHECK(steps[4].kind == "window_reset");
  CHECK(steps[4].start == 0);
  CHECK(steps[4].tokens.size() == 8);
  // The reset window is the last 8 tokens of the sequence so far.
  for (std::size_t i = 0; i < 8; ++i) CHECK(steps[4].tokens[i].id == out[1 + i]);
  CHECK(steps[4].tokens[0].text == tok.token_text(out[1]));
  CHECK(steps[5].kind == "window_reset");
  // Links prefill -> 5 -> 6 -> 7, 2 layers, K and V; none across a reset.
  CHECK(tracer.cache_links().size() == 3 * 2 * 2);
  // A reset records only the row of the token it runs for the first time,
  // the last one: the other rows re-run the previous window.
  for (std::size_t s : {4, 5}) {
    CAPTURE(s);
    CHECK(steps[s].rows_start == 7);
    CHECK(steps[s].rows_count == 1);
    CHECK(steps[s].snapshot("attn.softmax", 1).shape == Shape{1, 4, 1, 8});
    CHECK(steps[s].snapshot("resid.in", 0).shape == Shape{1, 1, 16});
  }
  CHECK(steps[0].rows_start == 0);
  CHECK(steps[0].rows_count == 5);
  CHECK(steps[3].rows_start == 7);
  CHECK(steps[3].rows_count == 1);
}

TEST_CASE("a reset's recorded row is the last row of the whole window's computation") {
  // The same window run as a prefill: its last row must equal the row the
  // reset recorded (the model is deterministic; positions start at 0 in both).
  GlassLM model = tiny_model(Attention::grouped, 8);
  std::vector<std::int64_t> out;
  std::vector<TraceStep> steps;
  {
    Tracer tracer;
    GenerateOptions gen;
    gen.max_new_tokens = 5;
    gen.on_step = [&](const Tensor&, std::int64_t next) { tracer.set_next_token(next); };
    out = model.generate({1, 2, 3, 4, 5}, gen);
    steps = tracer.steps();
  }
  REQUIRE(steps.back().kind == "window_reset");
  const std::vector<std::int64_t> window(out.end() - 9, out.end() - 1);  // its 8 tokens
  Tracer again;
  {
    no_grad guard;
    model.forward(window, nullptr, 0);
  }
  const Snapshot& full = again.steps()[0].snapshot("attn.softmax", 1);  // [1, 4, 8, 8]
  const Snapshot& row = steps.back().snapshot("attn.softmax", 1);       // [1, 4, 1, 8]
  REQUIRE(full.shape == Shape{1, 4, 8, 8});
  for (std::size_t h = 0; h < 4; ++h)
    for (std::size_t j = 0; j < 8; ++j)
      CHECK(row.data[h * 8 + j] ==
            doctest::Approx(full.data[(h * 8 + 7) * 8 + j]).epsilon(1e-6));
}

TEST_CASE("vectors = false keeps only the attention scores and weights") {
  GlassLM model = tiny_model();
  TraceOptions opt;
  opt.vectors = false;
  Tracer tracer(opt);
  run(model, 1, &tracer);
  for (const TraceStep& step : tracer.steps()) {
    std::set<std::string> names;
    for (const Snapshot& s : step.snapshots) names.insert(s.name);
    CHECK(names == std::set<std::string>{"attn.scores", "attn.softmax"});
  }
}

TEST_CASE("traces validate against docs/trace.schema.json") {
  Tokenizer tok(
      {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o"});
  for (bool grads : {false, true}) {
    CAPTURE(grads);
    GlassLM model = tiny_model(grads ? Attention::grouped : Attention::repeat_kv, 8);
    TraceOptions opt;
    opt.grads = grads;
    opt.precision = grads ? 0 : 4;
    if (grads) opt.heads = {0, 2};
    Tracer tracer(opt, &tok);
    GenerateOptions gen;
    gen.max_new_tokens = 6;
    gen.record_graph = grads;
    gen.on_step = [&](const Tensor&, std::int64_t next) { tracer.set_next_token(next); };
    model.generate({1, 2, 3, 4, 5}, gen);
    nlohmann::json doc = nlohmann::json::parse(tracer.to_json());
    CHECK(schema_errors(doc) == "");
    CHECK(doc["format"] == "glassllm-trace");
    CHECK(doc["version"] == 2);
    // No masked scores (they follow from the raw scores); every row of the
    // prefill, one row of each reset.
    for (const auto& step : doc["steps"]) {
      for (const auto& s : step["snapshots"]) CHECK(s["name"] != "attn.scores_masked");
      const std::size_t rows = step["kind"] == "window_reset" ? 1 : step["tokens"].size();
      CHECK(step["rows"]["count"] == rows);
    }
    // A broken document does not validate.
    doc.erase("format");
    CHECK(schema_errors(doc) != "");
  }
}

// tests/data/exaone-4.0-tiny-hybrid: EXAONE 4.0's format with QK-norm, 4
// layers (sliding, sliding, sliding with a window of 4, then global without
// RoPE), H = 4, Hkv = 2, hd = 8, d_model = 32; read in float64.
TEST_CASE("an EXAONE trace holds the QK-norm outputs and each layer's window") {
  Checkpoint ckpt = load_checkpoint(
      std::string(GLASSLLM_TEST_DATA) + "/exaone-4.0-tiny-hybrid", DType::float64);
  const GlassLM& model = ckpt.model;
  Tracer tracer;
  {
    no_grad guard;
    Cache cache = model.new_cache();
    model.forward({1, 9, 30, 40, 7, 7}, &cache, 0);  // 6 positions: past the window
    model.forward({15}, &cache, 6);
  }
  const std::size_t H = 4, Hkv = 2, hd = 8, D = 32;
  const double eps = model.config().norm_eps;
  // A head's q (or k) after QK-norm, by the formula, from the block's
  // recorded input (no norm before attention in EXAONE 4.0) and the weights:
  //   v = h W^T (that head's hd rows), v / sqrt(mean(v^2) + eps) * norm_weight
  auto expected = [&](const std::vector<double>& h, std::size_t t, const std::string& l,
                      const char* proj, const char* norm, std::size_t head) {
    const std::vector<double> W =
        model.parameter("model.layers." + l + ".self_attn." + proj + ".weight")
            .to_vector();
    const std::vector<double> w =
        model.parameter("model.layers." + l + ".self_attn." + norm + ".weight")
            .to_vector();
    std::vector<double> v(hd, 0.0);
    double mean_sq = 0;
    for (std::size_t d = 0; d < hd; ++d) {
      for (std::size_t i = 0; i < D; ++i)
        v[d] += h[t * D + i] * W[(head * hd + d) * D + i];
      mean_sq += v[d] * v[d] / double(hd);
    }
    for (std::size_t d = 0; d < hd; ++d) v[d] = v[d] / std::sqrt(mean_sq + eps) * w[d];
    return v;
  };
  double worst = 0;
  for (const TraceStep& step : tracer.steps())
    for (std::size_t layer = 0; layer < 4; ++layer) {
      const std::vector<double>& h = step.snapshot("resid.in", layer).data;  // [1, T, D]
      const std::size_t T = step.tokens.size();
      const Snapshot& q = step.snapshot("attn.q_norm", layer);  // [1, H, T, hd]
      const Snapshot& k = step.snapshot("attn.k_norm", layer);  // [1, Hkv, T, hd]
      REQUIRE(q.shape == Shape{1, H, T, hd});
      REQUIRE(k.shape == Shape{1, Hkv, T, hd});
      const std::string l = std::to_string(layer);
      for (std::size_t t = 0; t < T; ++t) {
        for (std::size_t head = 0; head < H; ++head) {
          std::vector<double> want = expected(h, t, l, "q_proj", "q_norm", head);
          for (std::size_t d = 0; d < hd; ++d)
            worst = std::max(worst, std::abs(q.data[(head * T + t) * hd + d] - want[d]));
        }
        for (std::size_t head = 0; head < Hkv; ++head) {
          std::vector<double> want = expected(h, t, l, "k_proj", "k_norm", head);
          for (std::size_t d = 0; d < hd; ++d)
            worst = std::max(worst, std::abs(k.data[(head * T + t) * hd + d] - want[d]));
        }
      }
    }
  CHECK(worst < 1e-12);

  // The window of each layer, in the JSON, and the recorded probabilities
  // obey it: in the prefill, the query at position 5 of a sliding layer gives
  // keys 0 and 1 (5 - 4 >= j) exactly 0 and keys 2..5 more; the global layer
  // gives every key 0..5 more than 0.
  nlohmann::json doc = nlohmann::json::parse(tracer.to_json());
  CHECK(schema_errors(doc) == "");
  CHECK(doc["config"]["layer_window"] == nlohmann::json({4, 4, 4, 0}));
  CHECK(doc["config"]["layer_rope"] == nlohmann::json({true, true, true, false}));
  CHECK(doc["config"]["qk_norm"] == true);
  for (std::size_t layer = 0; layer < 4; ++layer) {
    const Snapshot& p =
        tracer.steps()[0].snapshot("attn.softmax", layer);  // [1, 4, 6, 6]
    for (std::size_t head = 0; head < H; ++head)
      for (std::size_t j = 0; j < 6; ++j) {
        CAPTURE(layer);
        CAPTURE(head);
        CAPTURE(j);
        const double prob = p.data[(head * 6 + 5) * 6 + j];
        if (layer < 3 && j <= 1)
          CHECK(prob == 0.0);
        else
          CHECK(prob > 0.0);
      }
  }
}

TEST_CASE("a Llama-style trace has no QK-norm snapshots and no window fields") {
  GlassLM model = tiny_model();
  Tracer tracer;
  run(model, 1, &tracer);
  for (const TraceStep& step : tracer.steps())
    for (const Snapshot& s : step.snapshots)
      CHECK(s.name.find("_norm") == std::string::npos);
  nlohmann::json config = nlohmann::json::parse(tracer.to_json())["config"];
  CHECK_FALSE(config.contains("qk_norm"));
  CHECK_FALSE(config.contains("layer_window"));
  CHECK_FALSE(config.contains("layer_rope"));
}

TEST_CASE("OpGraphRecorder counts repeat_kv copies on an attention-only decode step") {
  // 3 layers, H = 8, Hkv = 2, hd = 4, m = 10 cached keys, float32: each
  // repeat_kv writes [1, 8, 10, 4] * 4 bytes = 1280 bytes and the next op
  // (matmul_t for K, matmul for V) reads them once.
  no_grad guard;
  Tensor keys = randn({1, 2, 10, 4}, 1), q = randn({1, 8, 1, 4}, 2);
  for (Attention path : {Attention::repeat_kv, Attention::grouped}) {
    OpGraphRecorder recorder;
    for (std::size_t l = 0; l < 3; ++l) attend(q, keys, keys, 9, 0, path, l);
    const OpGraph& g = recorder.graph();
    bool repeat = path == Attention::repeat_kv;
    CHECK(g.count("repeat_kv") == (repeat ? 6 : 0));
    CHECK(g.bytes_written("repeat_kv") == (repeat ? 6 * 1280 : 0));
    CHECK(g.bytes_read_after("repeat_kv") == (repeat ? 6 * 1280 : 0));
  }
}
