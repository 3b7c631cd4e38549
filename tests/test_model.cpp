// Tests for the model (include/glassllm/model/model.h, glassllm/model/model.cpp): its
// configuration checks, weight names and initialisation, the K/V cache, the
// two K/V sharing paths, generation and the whole-model gradient.
//
// The expectations never come from the path under test: a cached forward is
// compared with a full forward that never touches a cache, the grouped path
// with the repeat_kv path, the cache's bytes with the formula written out,
// and generation with argmax over fresh full forwards. Every equivalence
// prints its largest difference (MESSAGE), so a reader sees float64 rounding
// (~1e-16) next to float32's (~1e-7).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>

#include "check.h"
#include "glassllm/engine/node.h"
#include "glassllm/fast/blas.h"
#include "glassllm/fast/kernels.h"
#include "glassllm/fast/pool.h"
#include "glassllm/model/model.h"
#include "glassllm/trace/tracer.h"
#include "model_fixtures.h"

using namespace glassllm;
using test::max_abs_diff;

using namespace glassllm::test::model;

// ---- configuration -------------------------------------------------------------

TEST_CASE("model: Config::validate names the wrong field and its value") {
  auto expect = [](Config c, const char* message) {
    CHECK_THROWS_WITH_AS(c.validate(), message, std::invalid_argument);
  };
  Config ok = tiny();
  CHECK_NOTHROW(ok.validate());
  Config c = ok;
  c.vocab_size = 0;
  expect(c, "config: vocab_size (0) must be positive");
  c = ok;
  c.d_model = 0;
  expect(c, "config: d_model (0) must be positive");
  c = ok;
  c.n_layers = 0;
  expect(c, "config: n_layers (0) must be positive");
  c = ok;
  c.n_kv_heads = 0;
  expect(c, "config: n_kv_heads (0) must be positive");
  c = ok;
  c.d_ff = 0;
  expect(c, "config: d_ff (0) must be positive");
  c = ok;
  c.max_len = 0;
  expect(c, "config: max_len (0) must be positive");
  c = ok;
  c.n_kv_heads = 3;
  expect(c, "config: n_kv_heads (3) must divide n_heads (4)");
  c = ok;
  c.d_model = 18;
  expect(c, "config: n_heads (4) must divide d_model (18)");
  c = ok;
  c.d_model = 12;  // head_dim 3
  expect(c,
         "config: head_dim (d_model / n_heads = 3) must be even: RoPE rotates pairs "
         "(i, i + head_dim/2)");
  // The constructor validates too.
  CHECK_THROWS_WITH_AS(GlassLM(c, 0), doctest::Contains("head_dim"),
                       std::invalid_argument);
}

TEST_CASE("model: attention paths and cache modes parse from their names and back") {
  for (Attention a : kPaths) CHECK(parse_attention(attention_name(a)) == a);
  for (CacheMode m : kModes) CHECK(parse_cache_mode(cache_mode_name(m)) == m);
  CHECK_THROWS_WITH_AS(parse_attention("flash"), doctest::Contains("'flash'"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_cache_mode("ring"), doctest::Contains("'ring'"),
                       std::invalid_argument);
}

// ---- weights ---------------------------------------------------------------------

TEST_CASE(
    "model: the model's weights have Hugging Face Llama names and docs/design.md's "
    "shapes") {
  Config c = tiny();
  GlassLM model(c, 0);
  const std::size_t V = 16, D = 16, F = 24, hd = 4, H = 4, Hkv = 2;
  std::vector<std::pair<std::string, Shape>> expected{
      {"model.embed_tokens.weight", {V, D}}};
  for (int l = 0; l < 2; ++l) {
    std::string p = "model.layers." + std::to_string(l) + ".";
    expected.push_back({p + "input_layernorm.weight", {D}});
    expected.push_back({p + "self_attn.q_proj.weight", {H * hd, D}});
    expected.push_back({p + "self_attn.k_proj.weight", {Hkv * hd, D}});
    expected.push_back({p + "self_attn.v_proj.weight", {Hkv * hd, D}});
    expected.push_back({p + "self_attn.o_proj.weight", {D, H * hd}});
    expected.push_back({p + "post_attention_layernorm.weight", {D}});
    expected.push_back({p + "mlp.gate_proj.weight", {F, D}});
    expected.push_back({p + "mlp.up_proj.weight", {F, D}});
    expected.push_back({p + "mlp.down_proj.weight", {D, F}});
  }
  expected.push_back({"model.norm.weight", {D}});
  expected.push_back({"lm_head.weight", {V, D}});

  auto params = model.named_parameters();
  REQUIRE(params.size() == expected.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    CAPTURE(expected[i].first);
    CHECK(params[i].first == expected[i].first);
    CHECK(params[i].second.shape() == expected[i].second);
    CHECK(params[i].second.requires_grad());
  }
  // The handles are the model's own weights, not copies.
  CHECK(params[2].second.is(model.layers[0].q_proj));

  // embed + lm_head: 2 V D; per layer: 2 norms D, q and o H hd D each,
  // k and v Hkv hd D each, three MLP matrices F D; the final norm D.
  std::size_t per_layer = 2 * D + 2 * H * hd * D + 2 * Hkv * hd * D + 3 * F * D;
  CHECK(model.parameter_count() == 2 * V * D + 2 * per_layer + D);
  CHECK(model.parameter_count() == 2 * 256 + 2 * (32 + 512 + 256 + 1152) + 16);  // 4432

  // The default config with a 98-token vocabulary.
  Config d;
  d.vocab_size = 98;
  std::size_t default_layer = 2 * 128 + 2 * 128 * 128 + 2 * 64 * 128 + 3 * 384 * 128;
  CHECK(GlassLM(d, 0).parameter_count() == 2 * 98 * 128 + 4 * default_layer + 128);
}

TEST_CASE(
    "model: initialisation is deterministic: N(0, 0.02) from the seed, norm weights 1") {
  GlassLM a(tiny(), 7), b(tiny(), 7), other(tiny(), 8);
  auto pa = a.named_parameters(), pb = b.named_parameters(),
       po = other.named_parameters();
  bool any_differs = false;
  for (std::size_t i = 0; i < pa.size(); ++i) {
    CAPTURE(pa[i].first);
    CHECK(pa[i].second.to_vector() == pb[i].second.to_vector());
    any_differs = any_differs || pa[i].second.to_vector() != po[i].second.to_vector();
  }
  CHECK(any_differs);
  for (const Tensor& t :
       {a.norm, a.layers[1].input_layernorm, a.layers[0].post_attention_layernorm})
    for (double v : t.to_vector()) CHECK(v == 1.0);
  // The projections look like N(0, 0.02): mean ~0, std ~0.02 over 4096 draws.
  Config big_config;  // the defaults, with 98 tokens
  big_config.vocab_size = 98;
  GlassLM big(big_config, 3);
  std::vector<double> w = big.layers[0].gate_proj.to_vector();
  double mean = 0, sq = 0;
  for (double v : w) mean += v / double(w.size());
  for (double v : w) sq += (v - mean) * (v - mean) / double(w.size());
  CHECK(std::fabs(mean) < 0.002);
  CHECK(std::sqrt(sq) == doctest::Approx(0.02).epsilon(0.05));
  // float32 weights are the float64 ones rounded; to() converts both ways.
  GlassLM a64(tiny(), 7, f64);
  CHECK(a64.to(f32).lm_head.to_vector() == a.lm_head.to_vector());
  CHECK(a.to(f64).dtype() == f64);
  CHECK(a.to(f64).lm_head.dtype() == f64);
}

// ---- cached decoding equals the full forward -------------------------------------

TEST_CASE(
    "model: float64: cached decoding equals the full forward at every split and step") {
  GlassLM model(tiny(16), 1, f64);
  for (Attention path : kPaths)
    for (CacheMode mode : kModes) {
      model.attention = path;
      no_grad guard;
      double worst = 0;
      // The whole window: prefill `prompt` tokens, then decode one token per
      // step up to max_len, comparing every position.
      std::vector<std::int64_t> seq = sequence(16, 16);
      Tensor full = model.forward(seq);  // [1, 16, 16], no cache
      for (std::size_t prompt : {1, 3, 7}) {
        CAPTURE(prompt);
        double d = max_abs_diff(incremental(model, {seq}, prompt, mode), full);
        worst = std::max(worst, d);
        CHECK(d <= 1e-12);
      }
      // A batch of two different sequences.
      TokenBatch batch{sequence(16, 16, 0), sequence(16, 16, 1)};
      double db = max_abs_diff(incremental(model, batch, 3, mode), model.forward(batch));
      CHECK(db <= 1e-12);
      worst = std::max(worst, db);
      MESSAGE((std::string(attention_name(path)) + " / " + cache_mode_name(mode) +
               ": float64 max |incremental - full| over every step = " + num(worst)));
    }
}

TEST_CASE("model: float32: cached decoding equals the full forward within 1e-5") {
  // The default config (d_model 128, 4 layers): float32 rounding shows.
  Config c;
  c.vocab_size = 98;
  GlassLM model(c, 1, f32);
  std::vector<std::int64_t> seq = sequence(40, 98);
  for (Attention path : kPaths)
    for (CacheMode mode : kModes) {
      model.attention = path;
      no_grad guard;
      double d = max_abs_diff(incremental(model, {seq}, 3, mode), model.forward(seq));
      MESSAGE((std::string(attention_name(path)) + " / " + cache_mode_name(mode) +
               ": float32 max |incremental - full| = " + num(d)));
      CHECK(d <= 1e-5);
    }
}

TEST_CASE(
    "model: the walkthrough: prefill 3 tokens, decode 1, the cache holds K of shape "
    "(1,1,4,4)") {
  Config c;
  c.vocab_size = 16;
  c.d_model = 8;
  c.n_layers = 1;
  c.n_heads = 2;
  c.n_kv_heads = 1;
  c.max_len = 8;
  GlassLM model(c, 0, f64);
  no_grad guard;
  Cache cache = model.new_cache();
  model.forward({4, 5, 6}, &cache);
  Tensor step = model.forward({7}, &cache, 3);
  Tensor full = model.forward({4, 5, 6, 7});
  CHECK(cache[0].k().shape() == Shape{1, 1, 4, 4});
  CHECK(cache[0].v().shape() == Shape{1, 1, 4, 4});
  CHECK(cache[0].length() == 4);
  double d = max_abs_diff(step, rows(full, 3, 4));
  MESSAGE("walkthrough: max |incremental - full| = ", d);
  CHECK(d <= 1e-12);
}

// ---- the two K/V sharing paths ----------------------------------------------------

TEST_CASE("model: repeat_kv and grouped attention give the same logits and gradients") {
  GlassLM model(tiny(16), 2, f64);
  TokenBatch tokens{sequence(9, 16, 0), sequence(9, 16, 2)};
  TokenBatch targets{sequence(9, 16, 3), sequence(9, 16, 4)};
  targets[1][4] = -100;  // an ignored position

  auto run = [&](Attention path) {
    model.attention = path;
    for (auto& [name, w] : model.named_parameters()) w.zero_grad();
    Tensor loss = model.loss(tokens, targets);
    loss.backward();
    std::vector<Tensor> grads;
    for (auto& [name, w] : model.named_parameters()) grads.push_back(w.grad());
    Tensor logits;
    {
      no_grad guard;
      logits = model.forward(tokens);
    }
    return std::make_pair(logits, grads);
  };
  auto [logits_ref, grads_ref] = run(Attention::repeat_kv);
  auto [logits_grp, grads_grp] = run(Attention::grouped);

  double dl = max_abs_diff(logits_ref, logits_grp);
  MESSAGE("max |logits repeat_kv - grouped| = ", dl);
  CHECK(dl <= 1e-12);
  auto names = model.named_parameters();
  double dg = 0;
  for (std::size_t i = 0; i < names.size(); ++i) {
    CAPTURE(names[i].first);
    REQUIRE(grads_ref[i].defined());
    REQUIRE(grads_grp[i].defined());
    double d = max_abs_diff(grads_ref[i], grads_grp[i]);
    CHECK(d <= 1e-12);
    dg = std::max(dg, d);
  }
  MESSAGE("max |gradient repeat_kv - grouped| over all ", names.size(),
          " weights = ", dg);
  // The gradients are not trivially zero.
  CHECK(max_abs_diff(grads_ref[2], zeros_like(grads_ref[2])) > 1e-6);
}

// How many elements of a and b differ (a NaN differs from everything): 0
// when the two are equal bit for bit, which max_abs_diff cannot tell.
static std::size_t elements_differing(const Tensor& a, const Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  std::vector<double> x = a.to_vector(), y = b.to_vector();
  std::size_t n = 0;
  for (std::size_t i = 0; i < x.size(); ++i) n += !(x[i] == y[i]);
  return n;
}

TEST_CASE("model: a decode step's attention gives the same bits on both K/V paths") {
  // One query per head (and two, while G * 2 <= 8) against m cached keys:
  // products of at most 8 rows, which the few-rows kernels compute row by
  // row in the same way whatever the number of rows, so the grouped path (G
  // rows per K/V head) and the repeat_kv path (1 row per head) must agree to
  // the bit: m from 1 to past the kernels' blocks of keys, head dims that are
  // and are not whole SIMD batches, on 1 and on 2 threads.
  const int previous = std::max(1, blas_info().threads);  // 0: the library's own
  for (DType dt : {f32, f64})
    for (std::size_t G : {1, 2, 3, 4, 7, 8})
      for (std::size_t hd : {32, 40, 64})
        for (std::size_t m : {1, 37, 300, 1030})
          for (std::size_t T : {1, 2}) {
            if (G * T > 8 || T > m) continue;
            CAPTURE(dtype_name(dt));
            CAPTURE(G);
            CAPTURE(hd);
            CAPTURE(m);
            CAPTURE(T);
            const std::size_t Hkv = 2, H = G * Hkv;
            Tensor q = randn({1, H, T, hd}, 1, dt), k = randn({1, Hkv, m, hd}, 2, dt);
            Tensor v = randn({1, Hkv, m, hd}, 3, dt);
            const std::size_t start = m - T;  // the queries are the last T positions
            set_blas_threads(2);
            Tensor ref = attend(q, k, v, start, 0, Attention::repeat_kv);
            Tensor grp = attend(q, k, v, start, 0, Attention::grouped);
            CHECK(elements_differing(ref, grp) == 0);
            set_blas_threads(1);
            CHECK(elements_differing(grp,
                                     attend(q, k, v, start, 0, Attention::grouped)) == 0);
            // Not vacuous: the output is no copy of v's rows, and sound.
            CHECK(max_abs_diff(ref, zeros_like(ref)) > 1e-3);
          }
  set_blas_threads(previous);
}

// softmax(q k^T / sqrt(hd)) v for one query row over its first `visible`
// keys, in double, written out: q [hd], k and v [m, hd] -> [hd].
static std::vector<double> attention_row(const double* q, const double* k,
                                         const double* v, std::size_t visible,
                                         std::size_t hd) {
  std::vector<double> score(visible), out(hd, 0.0);
  double best = -INFINITY, total = 0;
  for (std::size_t j = 0; j < visible; ++j) {
    double dot = 0;
    for (std::size_t d = 0; d < hd; ++d) dot += q[d] * k[j * hd + d];
    score[j] = dot / std::sqrt(double(hd));
    best = std::max(best, score[j]);
  }
  for (double& x : score) total += (x = std::exp(x - best));
  for (std::size_t j = 0; j < visible; ++j)
    for (std::size_t d = 0; d < hd; ++d) out[d] += score[j] / total * v[j * hd + d];
  return out;
}

TEST_CASE("fast: the fused decode step gives the bits of the four ops it stands for") {
  // fast::grouped_decode_attention against q @ k^T, * scale, causal_softmax
  // and probs @ v run as ops, bit for bit, and against attention written out
  // in double: heads of 1 to 8 rows (G query heads times T queries), caches
  // whose last slots are hidden (a preallocated cache) or not, head dims that
  // are and are not whole SIMD batches, on 1 and 2 threads.
  const int previous = std::max(1, blas_info().threads);
  for (DType dt : {f32, f64})
    for (std::size_t heads : {1, 3, 8})
      for (std::size_t G : {1, 2, 4, 8})
        for (std::size_t T : {1, 2})
          for (std::size_t hd : {16, 40, 128})
            for (std::size_t m : {1, 37, 1030})
              for (bool hidden_slots : {false, true}) {
                const std::size_t rows = G * T;
                if (rows > fast::kDecodeRowsMax || T > m) continue;
                // The queries are the last T positions, or (a preallocated
                // cache) positions before the middle, so that later slots are hidden.
                const std::size_t start = hidden_slots ? (m - T) / 2 : m - T;
                CAPTURE(dtype_name(dt));
                CAPTURE(heads);
                CAPTURE(rows);
                CAPTURE(T);
                CAPTURE(hd);
                CAPTURE(m);
                CAPTURE(start);
                Tensor q = randn({1, heads, rows, hd}, 11, dt);
                Tensor k = randn({1, heads, m, hd}, 12, dt),
                       v = randn({1, heads, m, hd}, 13, dt);
                const double scale = 1.0 / std::sqrt(double(hd));
                Tensor ops =
                    matmul(causal_softmax(matmul_t(q, k) * scale, start, 0, T), v);
                std::vector<std::size_t> visible(T);
                for (std::size_t t = 0; t < T; ++t)
                  visible[t] = std::min(m, start + t + 1);
                for (int threads : {1, 2}) {
                  set_blas_threads(threads);
                  Tensor fused = empty(q.shape(), dt);
                  if (dt == f32)
                    fast::grouped_decode_attention<float>(
                        heads, rows, T, m, hd, float(scale), q.data<float>(),
                        k.data<float>(), v.data<float>(), visible.data(),
                        fused.mutable_data<float>());
                  else
                    fast::grouped_decode_attention<double>(
                        heads, rows, T, m, hd, scale, q.data<double>(), k.data<double>(),
                        v.data<double>(), visible.data(), fused.mutable_data<double>());
                  CHECK(elements_differing(ops, fused) == 0);
                }
                // Independently: row r of head h is query r % T.
                std::vector<double> qd = q.to_vector(), kd = k.to_vector(),
                                    vd = v.to_vector(), got = ops.to_vector();
                double worst = 0;
                for (std::size_t h = 0; h < heads; ++h)
                  for (std::size_t r = 0; r < rows; ++r) {
                    std::vector<double> want =
                        attention_row(&qd[(h * rows + r) * hd], &kd[h * m * hd],
                                      &vd[h * m * hd], visible[r % T], hd);
                    for (std::size_t d = 0; d < hd; ++d)
                      worst = std::max(worst,
                                       std::abs(want[d] - got[(h * rows + r) * hd + d]));
                  }
                CHECK(worst <= (dt == f32 ? 1e-5 : 1e-12));
              }
  set_blas_threads(previous);
}

TEST_CASE(
    "grouped_attention: a decode step runs fused only when nothing watches its ops") {
  // The fused step's output carries the op name grouped_decode_attention;
  // the ops' carries theirs. Every case gives the bits of the repeat_kv path
  // (attend() calls grouped_attention on the grouped path).
  const int previous = std::max(1, blas_info().threads);
  set_blas_threads(2);
  const std::size_t Hkv = 8, G = 4, hd = 64, m = 300;
  Tensor q = randn({1, Hkv * G, 1, hd}, 21), k = randn({1, Hkv, m, hd}, 22);
  Tensor v = randn({1, Hkv, m, hd}, 23);
  const Tensor ref = attend(q, k, v, m - 1, 0, Attention::repeat_kv);
  auto op_of = [](const Tensor& t) { return t.node()->op; };
  SUBCASE("a decode step with nothing watching is fused") {
    Tensor out = attend(q, k, v, m - 1, 0, Attention::grouped);
    CHECK(op_of(out) == "grouped_decode_attention");
    CHECK(elements_differing(out, ref) == 0);
    CHECK(op_of(ref) != "grouped_decode_attention");  // repeat_kv: always the ops
  }
  SUBCASE("asking for the scores and probabilities takes the ops") {
    AttentionParts seen;
    Tensor out = grouped_attention(q, k, v, m - 1, 0, &seen);
    CHECK(op_of(out) != "grouped_decode_attention");
    CHECK(elements_differing(out, ref) == 0);
    // [B, Hkv, G*T, m]: row g of group i is head i*G + g's only query, so
    // the scores are the repeat_kv path's [1, H, 1, m] reshaped.
    CHECK(seen.scores.shape() == Shape{1, Hkv, G, m});
    const std::int64_t H = std::int64_t(Hkv * G), keys = std::int64_t(m);
    Tensor scores_ref = matmul_t(q, repeat_kv(k, G)) * (1.0 / std::sqrt(double(hd)));
    CHECK(elements_differing(reshape(seen.scores, {1, H, 1, keys}), scores_ref) == 0);
    CHECK(op_of(seen.probs) == "causal_softmax");
    CHECK(max_abs_diff(sum(seen.probs, {-1}), ones({1, Hkv, G})) < 1e-6);
  }
  SUBCASE("an op graph sees the ops") {
    OpGraphRecorder recorder;
    Tensor out = attend(q, k, v, m - 1, 0, Attention::grouped);
    CHECK(op_of(out) != "grouped_decode_attention");
    std::size_t softmaxes = 0;
    for (const OpNode& n : recorder.graph().nodes) softmaxes += n.op == "causal_softmax";
    CHECK(softmaxes == 1);
    CHECK(elements_differing(out, ref) == 0);
  }
  SUBCASE("a gradient needs the ops") {
    Tensor qg = q.detach().requires_grad_();
    Tensor out = attend(qg, k, v, m - 1, 0, Attention::grouped);
    CHECK(op_of(out) != "grouped_decode_attention");
    CHECK(elements_differing(out, ref) == 0);
    sum(out).backward();
    CHECK(max_abs_diff(qg.grad(), zeros_like(qg)) > 0);
    no_grad guard;  // with grad mode off, nothing is recorded: fused again
    CHECK(op_of(attend(qg, k, v, m - 1, 0, Attention::grouped)) ==
          "grouped_decode_attention");
  }
  SUBCASE("more than 8 rows per K/V head (a prefill) takes the ops") {
    Tensor q3 = randn({1, Hkv * G, 3, hd}, 24);  // 4 heads x 3 queries = 12 rows
    CHECK(op_of(attend(q3, k, v, m - 3, 0, Attention::grouped)) !=
          "grouped_decode_attention");
  }
  SUBCASE("one long head is split over the threads by the ops instead") {
    Tensor q1 = randn({1, G, 1, hd}, 25), k1 = randn({1, 1, 4096, hd}, 26);
    Tensor v1 = randn({1, 1, 4096, hd}, 27);
    Tensor two = attend(q1, k1, v1, 4095, 0, Attention::grouped);
    // (Built without threads, -DGLASSLLM_THREADS=OFF, the pool has one
    // thread whatever it is told, and the step is fused.)
    CHECK((op_of(two) == "grouped_decode_attention") == (pool::threads() == 1));
    set_blas_threads(1);  // on one thread nothing is lost
    Tensor one = attend(q1, k1, v1, 4095, 0, Attention::grouped);
    CHECK(op_of(one) == "grouped_decode_attention");
    CHECK(elements_differing(one, two) == 0);
  }
  set_blas_threads(previous);
}

TEST_CASE("model: decoding token by token gives the same logits on both K/V paths") {
  // Every step is a decode step (one token), so each layer's attention, and
  // with it everything after, is the same bit for bit on both paths.
  GlassLM model(tiny(16), 4, f32);
  std::vector<std::int64_t> seq = sequence(12, 16, 1);
  no_grad guard;
  std::vector<Tensor> logits[2];
  for (Attention path : kPaths) {
    model.attention = path;
    Cache cache = model.new_cache(CacheMode::preallocated);
    for (std::size_t t = 0; t < seq.size(); ++t)
      logits[int(path)].push_back(model.forward({seq[t]}, &cache, t));
  }
  for (std::size_t t = 0; t < seq.size(); ++t) {
    CAPTURE(t);
    CHECK(elements_differing(logits[0][t], logits[1][t]) == 0);
  }
}

// ---- the cache ----------------------------------------------------------------------

TEST_CASE(
    "model: a concatenating and a preallocated cache give the same logits and keys") {
  GlassLM model(tiny(16), 3, f64);
  std::vector<std::int64_t> seq = sequence(11, 16);
  no_grad guard;
  for (Attention path : kPaths) {
    model.attention = path;
    Cache grow = model.new_cache(CacheMode::concat);
    Cache fixed = model.new_cache(CacheMode::preallocated);
    std::vector<std::int64_t> head(seq.begin(), seq.begin() + 4);
    double d = max_abs_diff(model.forward(head, &grow), model.forward(head, &fixed));
    for (std::size_t t = 4; t < seq.size(); ++t)
      d = std::max(d, max_abs_diff(model.forward({seq[t]}, &grow, t),
                                   model.forward({seq[t]}, &fixed, t)));
    MESSAGE((std::string(attention_name(path)) +
             ": max |concat - preallocated| = " + num(d)));
    CHECK(d <= 1e-12);
    for (std::size_t l = 0; l < grow.size(); ++l) {
      CHECK(fixed[l].length() == 11);
      CHECK(grow[l].k().shape() == Shape{1, 2, 11, 4});
      CHECK(fixed[l].k().shape() == Shape{1, 2, 16, 4});  // the whole buffer
      // The first 11 slots hold what the concatenating cache holds (bit for
      // bit in layer 0, whose K/V depend on the tokens only; later layers see
      // the rounding of the attention above them), the other 5 are zeros.
      double tol = l == 0 ? 0.0 : 1e-12;
      CHECK(max_abs_diff(slice(fixed[l].k(), 2, 0, 11), grow[l].k()) <= tol);
      CHECK(max_abs_diff(slice(fixed[l].v(), 2, 0, 11), grow[l].v()) <= tol);
      for (double v : slice(fixed[l].k(), 2, 11, 16).to_vector()) CHECK(v == 0.0);
    }
  }
}

TEST_CASE(
    "model: cache memory is 2 * B * L * m * Hkv * hd * bytes: 256 KiB float32, 512 KiB "
    "float64") {
  Config c;  // the default config
  c.vocab_size = 98;
  const std::size_t B = 1, L = 4, m = 128, Hkv = 2, hd = 32;
  for (DType dt : {f32, f64})
    for (CacheMode mode : kModes) {
      CAPTURE(dtype_name(dt));
      CAPTURE(cache_mode_name(mode));
      GlassLM model(c, 0, dt);
      no_grad guard;
      Cache cache = model.new_cache(mode);
      // Fill all 128 positions: a prefill of 100, then 28 single steps.
      std::vector<std::int64_t> seq = sequence(128, 98);
      model.forward(std::vector<std::int64_t>(seq.begin(), seq.begin() + 100), &cache);
      for (std::size_t t = 100; t < 128; ++t) model.forward({seq[t]}, &cache, t);
      std::size_t bytes = 0;
      for (const KVCache& layer : cache) {
        CHECK(layer.length() == 128);
        CHECK(layer.k().dtype() == dt);
        CHECK(layer.k().shape() == Shape{B, Hkv, m, hd});
        CHECK(layer.nbytes() == layer.k().nbytes() + layer.v().nbytes());
        bytes += layer.k().nbytes() + layer.v().nbytes();
      }
      std::size_t formula = 2 * B * L * m * Hkv * hd * dtype_size(dt);
      CHECK(bytes == formula);
      CHECK(bytes == (dt == f32 ? 256 * 1024 : 512 * 1024));
    }
}

TEST_CASE("model: the cache checks what is appended and forgets everything on clear") {
  KVCache cache(CacheMode::preallocated, 4);
  Tensor k = zeros({1, 2, 3, 4}, f64);
  cache.append(k, k);
  CHECK(cache.length() == 3);
  CHECK_THROWS_WITH_AS(
      cache.append(k, k),
      "KVCache::append: 3 new positions do not fit: the cache holds 3 of 4",
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(cache.append(zeros({1, 1, 1, 4}, f64), zeros({1, 1, 1, 4}, f64)),
                       doctest::Contains("(1,1,1,4)"), std::invalid_argument);
  cache.clear();
  CHECK(cache.length() == 0);
  CHECK(cache.nbytes() == 0);
  CHECK_THROWS_AS(KVCache(CacheMode::preallocated, 0), std::invalid_argument);
}

// ---- forward's checks ---------------------------------------------------------------

TEST_CASE(
    "model: forward explains a start that does not match the cache and other bad input") {
  GlassLM model(tiny(8), 0);
  no_grad guard;
  Cache cache = model.new_cache();
  model.forward(sequence(7, 16), &cache);
  CHECK_THROWS_WITH_AS(
      model.forward({1}, &cache, 5),
      "forward: start is 5 but the cache holds 7 positions; pass start=7",
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      model.forward({1, 2}, &cache, 7),
      "forward: positions 7..8 exceed max_len 8 (start 7 + 2 tokens); crop "
      "the input to its last max_len tokens",
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(model.forward({1, 16, 2}),
                       "forward: token id 16 at position (0, 1) is out of range [0, 16)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      model.forward(TokenBatch{{1, 2}, {3}}),
      "forward: row 1 has 1 tokens but row 0 has 2; rows must have equal "
      "lengths",
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(model.forward(std::vector<std::int64_t>{}),
                       doctest::Contains("no tokens"), std::invalid_argument);
  Cache short_cache(1);
  CHECK_THROWS_WITH_AS(
      model.forward({1}, &short_cache, 0),
      "forward: the cache has 1 layers but the model has 2; make it with "
      "new_cache()",
      std::invalid_argument);
  // A failed call leaves the cache as it was.
  CHECK(cache[0].length() == 7);
}

TEST_CASE("model: attention is causal: a later token does not change earlier logits") {
  GlassLM model(tiny(16), 4, f64);
  std::vector<std::int64_t> a = sequence(6, 16), b = a;
  b[3] = (a[3] + 5) % 16;
  no_grad guard;
  for (Attention path : kPaths) {
    model.attention = path;
    Tensor la = model.forward(a), lb = model.forward(b);
    // Positions 0..2 see only tokens 0..2: bit-identical.
    CHECK(rows(la, 0, 3).to_vector() == rows(lb, 0, 3).to_vector());
    // Position 3 sees the changed token.
    CHECK(max_abs_diff(rows(la, 3, 4), rows(lb, 3, 4)) > 1e-6);
  }
}

// ---- the whole model's gradient --------------------------------------------------

TEST_CASE(
    "model: the loss's gradient through the whole model passes the float64 gradient "
    "check") {
  Config c = tiny(8);
  c.n_layers = 1;
  GlassLM base(c, 9, f64);
  TokenBatch tokens{{1, 5, 2, 7, 3}, {4, 4, 0, 9, 15}};
  TokenBatch targets{{5, 2, 7, 3, 8}, {4, 0, 9, -100, 1}};
  for (Attention path : kPaths) {
    CAPTURE(attention_name(path));
    GlassLM model = base;
    model.attention = path;
    // f(weights) = loss with the model's weights replaced by the checker's inputs.
    auto f = [&model, &tokens, &targets](const std::vector<Tensor>& w) {
      model.embed_tokens = w[0];
      model.layers[0].q_proj = w[1];
      model.layers[0].k_proj = w[2];
      model.layers[0].v_proj = w[3];
      model.layers[0].input_layernorm = w[4];
      model.lm_head = w[5];
      return model.loss(tokens, targets);
    };
    const LayerWeights& l0 = base.layers[0];
    GradCheckResult r = gradcheck(f,
                                  {base.embed_tokens, l0.q_proj, l0.k_proj, l0.v_proj,
                                   l0.input_layernorm, base.lm_head},
                                  GradCheckOptions{}, "GlassLM.loss");
    INFO(r.message());
    CHECK(r.passed);
  }
}

// The two tests of named weights below: sizes that differ from one another
// (vocab 11, d_model 8, d_ff 12), so a weight given the wrong shape shows.
static Config named_weights_config() {
  Config cfg;
  cfg.vocab_size = 11;
  cfg.d_model = 8;
  cfg.n_layers = 2;
  cfg.n_heads = 2;
  cfg.n_kv_heads = 1;
  cfg.d_ff = 12;
  cfg.max_len = 8;
  return cfg;
}

TEST_CASE("model: parameter(name) reaches the same weight as the public member") {
  const Config cfg = named_weights_config();
  GlassLM model(cfg, 0);
  CHECK(model.parameter("model.layers.1.mlp.up_proj.weight").is(model.layers[1].up_proj));
  CHECK(model.parameter("lm_head.weight").is(model.lm_head));
  Tensor replacement = zeros({11, 8});
  model.parameter("lm_head.weight") = replacement;
  CHECK(model.lm_head.is(replacement));
  CHECK_THROWS_WITH_AS(model.parameter("lm_head"),
                       doctest::Contains("no weight named 'lm_head'"),
                       std::invalid_argument);
}

TEST_CASE("model: from_weights uses the given tensors as they are, in named order") {
  const Config cfg = named_weights_config();
  const GlassLM seeded(cfg, 0);  // for the names and shapes it has
  const auto want = seeded.named_parameters();
  std::vector<std::string> asked;
  std::vector<Tensor> given;
  GlassLM model = GlassLM::from_weights(
      cfg, DType::float32, [&](const std::string& name, const Shape& shape) {
        asked.push_back(name);
        given.push_back(full(shape, double(given.size())));  // weight i holds i
        return given.back();
      });
  const auto got = model.named_parameters();
  REQUIRE(asked.size() == want.size());
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    CAPTURE(want[i].first);
    CHECK(asked[i] == want[i].first);
    CHECK(got[i].second.shape() == want[i].second.shape());
    // The very array handed over: nothing drawn, nothing copied.
    CHECK(got[i].second.data<float>() == given[i].data<float>());
    CHECK(got[i].second.data<float>()[0] == float(i));
    CHECK(got[i].second.requires_grad());
  }
  auto wrong = [&](const std::string& bad, const Shape& bad_shape, DType bad_dtype) {
    return [&, bad, bad_shape, bad_dtype] {
      GlassLM::from_weights(
          cfg, DType::float32, [&](const std::string& name, const Shape& shape) {
            return name == bad ? zeros(bad_shape, bad_dtype) : zeros(shape);
          });
    };
  };
  CHECK_THROWS_WITH_AS(wrong("model.norm.weight", {7}, DType::float32)(),
                       "GlassLM::from_weights: weight 'model.norm.weight' is (7,) "
                       "float32, expected (8,) float32",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(wrong("lm_head.weight", {11, 8}, DType::float64)(),
                       doctest::Contains("'lm_head.weight' is (11,8) float64"),
                       std::invalid_argument);
}
