// grader_model.cpp: the graders of exercises 9 (the K/V cache) and 10
// (grouped attention), which run a tiny float64 model. Every check prints
// one line and a failure never stops the others (grader_checks.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <sstream>

#include "exercises/exercises.h"
#include "exercises/grader.h"
#include "exercises/grader_checks.h"
#include "exercises/messages.h"

namespace glassllm::exercises {

namespace {

// A tiny float64 model for exercises 9 and 10, and its tokens.
GlassLM tiny_model() {
  Config cfg;
  cfg.vocab_size = 11;
  cfg.d_model = 16;
  cfg.n_layers = 2;
  cfg.n_heads = 4;
  cfg.n_kv_heads = 2;
  cfg.d_ff = 24;
  cfg.max_len = 16;
  return GlassLM(cfg, 0, DType::float64);
}
const std::vector<std::int64_t> kTokens{3, 1, 4, 1, 5, 9, 2, 6, 5, 3};
const std::vector<std::int64_t> kTargets{1, 4, 1, 5, 9, 2, 6, 5, 3, 5};

// Prefill `prompt` tokens, then one token per step; all logits [1, n, V].
Tensor decode_all(const GlassLM& model, Cache& cache, std::size_t prompt) {
  std::vector<Tensor> parts;
  std::vector<std::int64_t> first(kTokens.begin(),
                                  kTokens.begin() + std::ptrdiff_t(prompt));
  parts.push_back(model.forward(first, &cache, 0));
  for (std::size_t i = prompt; i < kTokens.size(); ++i)
    parts.push_back(model.forward(std::vector<std::int64_t>{kTokens[i]}, &cache, i));
  return concat(parts, 1);
}

}  // namespace

// ---- Exercise 9 ----------------------------------------------------------------

namespace {

// "" if two caches hold the same keys and values (up to 1e-12); otherwise
// where they first differ, earliest position first (a mistake shows where
// it starts), then layer, head, K before V, dimension:
// "layer 0, K/V head 1, position 3, keys[.., 2]: expected 0.418, got -1.02".
std::string first_cache_mismatch(const Cache& mine, const Cache& reference) {
  for (std::size_t l = 0; l < reference.size(); ++l)
    if (mine[l].length() != reference[l].length() ||
        mine[l].k().shape() != reference[l].k().shape())
      return tr("ex9.length", {{"layer", std::to_string(l)},
                               {"length", std::to_string(mine[l].length())},
                               {"shape", shape_str(mine[l].k().shape())},
                               {"want_length", std::to_string(reference[l].length())},
                               {"want_shape", shape_str(reference[l].k().shape())}});
  const Shape& s = reference[0].k().shape();  // [1, Hkv, m, hd]
  for (std::size_t p = 0; p < s[2]; ++p)
    for (std::size_t l = 0; l < reference.size(); ++l)
      for (std::size_t h = 0; h < s[1]; ++h)
        for (int kv = 0; kv < 2; ++kv)
          for (std::size_t d = 0; d < s[3]; ++d) {
            const Tensor& a = kv ? mine[l].v() : mine[l].k();
            const Tensor& b = kv ? reference[l].v() : reference[l].k();
            const double got = a.at({0, h, p, d}), want = b.at({0, h, p, d});
            if (!(std::fabs(got - want) <= 1e-12))
              return tr("ex9.entry", {{"layer", std::to_string(l)},
                                      {"head", std::to_string(h)},
                                      {"position", std::to_string(p)},
                                      {"which", tr(kv ? "ex9.values" : "ex9.keys")},
                                      {"d", std::to_string(d)},
                                      {"want", fmt("%.6g", want)},
                                      {"got", fmt("%.6g", got)}});
          }
  return "";
}

}  // namespace

bool grade_kv_cache(const CacheAppendFn& my_cache_append, std::ostream& out) {
  Checker c(out);
  Tensor held = randn64({2, 2, 3, 4}, 36), fresh = randn64({2, 2, 2, 4}, 37);
  c.close(
      tr("ex9.empty"), [&] { return my_cache_append(Tensor(), fresh); }, fresh);
  std::vector<double> before = held.to_vector();
  c.close(
      tr("ex9.concat"), [&] { return my_cache_append(held, fresh); },
      concat({held, fresh}, 2));
  c.expect(tr("ex9.unchanged"), held.to_vector() == before,
           tr(held.to_vector() == before ? "ex9.same_values" : "ex9.written"));
  const std::string detached = tr("ex9.detached");
  c.guarded(detached, [&] {
    Tensor f = fresh.detach().requires_grad_();
    Tensor next = my_cache_append(held, f * 1.0);
    c.expect(detached, !next.requires_grad(),
             tr(next.requires_grad() ? "ex9.requires_grad" : "ex9.no_grad"));
  });

  // The real model, decoding with your append in every layer. The cache is
  // compared with the engine's, position by position, so a failure names the
  // first layer, K/V head and position that differ.
  GlassLM model = tiny_model();
  Tensor full;
  {
    no_grad guard;
    full = model.forward(kTokens);
  }
  for (std::size_t prompt : {std::size_t(1), std::size_t(4)}) {
    const std::string what = tr("ex9.model", {{"prompt", std::to_string(prompt)}});
    c.guarded(what, [&] {
      no_grad guard;
      Cache mine = model.new_cache(), reference = model.new_cache();
      for (KVCache& layer : mine) layer.append_fn = my_cache_append;
      Tensor logits = decode_all(model, mine, prompt);
      decode_all(model, reference, prompt);
      std::string where = first_cache_mismatch(mine, reference);
      if (!where.empty()) {
        c.expect(what, false, where);
        return;
      }
      c.close(
          what, [&] { return logits; }, full, 1e-10);
    });
  }
  return c.passed();
}

// ---- Exercise 10 ---------------------------------------------------------------

namespace {

// The reference path, built from the engine's ops: copy K/V to H heads.
Tensor reference_attention(const Tensor& q, const Tensor& keys, const Tensor& values,
                           std::size_t query_start, std::size_t key_start) {
  std::size_t G = q.dim(1) / keys.dim(1);
  Tensor scores = matmul_t(q, repeat_kv(keys, G)) * (1.0 / std::sqrt(double(q.dim(3))));
  return matmul(causal_softmax(scores, query_start, key_start), repeat_kv(values, G));
}

// Whether the graph behind t contains an op named `op`.
bool graph_has(const Tensor& t, const std::string& op) {
  std::vector<Tensor> stack{t};
  std::vector<const Node*> seen;
  while (!stack.empty()) {
    Tensor n = stack.back();
    stack.pop_back();
    if (std::find(seen.begin(), seen.end(), n.node()) != seen.end()) continue;
    seen.push_back(n.node());
    if (n.op() == op) return true;
    for (const Tensor& p : n.parents()) stack.push_back(p);
  }
  return false;
}

}  // namespace

bool grade_grouped_attention(const AttentionFn& my_attention, std::ostream& out) {
  Checker c(out);
  // q [1, 4, 3, 4] against 5 keys of 2 K/V heads: no cache (keys = the 3 new
  // positions) and a cache (2 earlier positions, then the 3 new ones).
  Tensor q = randn64({1, 4, 3, 4}, 38);
  Tensor k3 = randn64({1, 2, 3, 4}, 39), v3 = randn64({1, 2, 3, 4}, 40);
  Tensor k5 = randn64({1, 2, 5, 4}, 41), v5 = randn64({1, 2, 5, 4}, 42);
  c.close(
      tr("ex10.no_cache"), [&] { return my_attention(q, k3, v3, 0, 0); },
      reference_attention(q, k3, v3, 0, 0), 1e-12);
  c.close(
      tr("ex10.cache2"), [&] { return my_attention(q, k5, v5, 2, 0); },
      reference_attention(q, k5, v5, 2, 0), 1e-12);
  // Queries after every key (query_start 10, keys at 0..4): nothing is
  // masked, so only the folding and the scale can make this one wrong.
  c.close(
      tr("ex10.after"), [&] { return my_attention(q, k5, v5, 10, 0); },
      reference_attention(q, k5, v5, 10, 0), 1e-12);
  const std::string not_copied = tr("ex10.not_copied");
  c.guarded(not_copied, [&] {
    Tensor qg = q.detach().requires_grad_();
    bool copies = graph_has(my_attention(qg, k5, v5, 2, 0), "repeat_kv");
    c.expect(not_copied, !copies, tr(copies ? "ex10.copies" : "ex10.no_copies"));
  });
  c.grad(tr("ex10.grad"),
         [&](const auto& in) { return my_attention(in[0], in[1], in[2], 2, 0); },
         {q, k5, v5}, {"q", tr("ex10.keys"), tr("ex10.values")});

  // The real model: logits and every weight's gradient, against repeat_kv.
  GlassLM base = tiny_model();
  auto run = [&](Attention path, std::vector<Tensor>& grads) {
    GlassLM m = base.to(DType::float64);  // fresh weights, fresh gradients
    m.attention = path;
    m.custom_attention = my_attention;
    Tensor logits = m.forward(kTokens);
    cross_entropy(logits, kTargets).backward();
    for (auto& [name, w] : m.named_parameters()) grads.push_back(w.grad());
    return logits.detach();
  };
  std::vector<Tensor> g_ref, g_mine;
  Tensor ref = run(Attention::repeat_kv, g_ref);
  c.close(
      tr("ex10.logits"), [&] { return run(Attention::custom, g_mine); }, ref, 1e-10);
  if (g_mine.size() == g_ref.size()) {
    double worst = 0;
    std::size_t worst_i = 0;
    for (std::size_t i = 0; i < g_ref.size(); ++i) {
      double d = g_mine[i].defined() ? max_abs_diff(g_mine[i], g_ref[i]) : INFINITY;
      if (d > worst) worst = d, worst_i = i;
    }
    bool ok = worst <= 1e-10;
    c.expect(
        tr("ex10.weights", {{"count", std::to_string(g_ref.size())}}), ok,
        tr("check.max_diff", {{"diff", fmt("%.1e", worst)}, {"tol", "1e-10"}}) +
            (ok ? ""
                : tr("ex10.worst", {{"name", base.named_parameters()[worst_i].first}})));
  }
  const std::string incremental = tr("ex10.incremental");
  c.guarded(incremental, [&] {
    no_grad guard;
    GlassLM m = base;
    m.attention = Attention::custom;
    m.custom_attention = my_attention;
    Cache cache = m.new_cache();
    Tensor inc = decode_all(m, cache, 4);
    c.close(
        incremental, [&] { return inc; }, m.forward(kTokens), 1e-10);
  });
  return c.passed();
}

}  // namespace glassllm::exercises
