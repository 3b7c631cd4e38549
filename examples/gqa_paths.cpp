// gqa_paths.cpp: the two ways GlassLM lets 4 query heads share 2 K/V heads,
// repeat_kv (copy K and V up to 4 heads) and grouped (fold Q down to 2
// groups), give the same logits; what each one materialises; and what the
// K/V cache costs. Quoted by docs/05-gqa-and-kv-cache.md.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "glassllm/engine/ops.h"
#include "glassllm/fast/blas.h"
#include "glassllm/io/tokenizer.h"
#include "glassllm/model/model.h"

using namespace glassllm;

namespace {

double max_abs_diff(const Tensor& a, const Tensor& b) {
  std::vector<double> x = a.to_vector(), y = b.to_vector();
  double d = 0;
  for (std::size_t i = 0; i < x.size(); ++i) d = std::max(d, std::fabs(x[i] - y[i]));
  return d;
}

}  // namespace

int main() {
  set_blas_threads(1);  // the printed differences do not depend on the core count
  no_grad guard;

  // doc:begin mapping
  Config cfg;  // the defaults: H = 4 query heads, Hkv = 2 K/V heads, hd = 32
  cfg.vocab_size = Tokenizer().vocab_size();
  const std::size_t H = cfg.n_heads, G = cfg.n_rep(), T = 3, hd = cfg.head_dim();
  for (std::size_t h = 0; h < H; ++h)
    std::printf("query head %zu uses K/V head %zu\n", h, h / G);
  // The fold: q [1, H, T, hd] -> [1, Hkv, G*T, hd] is a reshape, a view.
  Tensor q = randn({1, H, T, hd}, 0);
  Tensor q_grouped = reshape(
      q, {1, std::int64_t(cfg.n_kv_heads), std::int64_t(G * T), std::int64_t(hd)});
  std::printf("q %s -> %s, same memory: %s\n", shape_str(q.shape()).c_str(),
              shape_str(q_grouped.shape()).c_str(),
              q_grouped.data<float>() == q.data<float>() ? "yes" : "no");
  // Row g*T + t of group i is query t of head i*G + g: check one, head 3, t = 2.
  bool same_row = true;
  for (std::size_t d = 0; d < hd; ++d)
    same_row = same_row && q.at({0, 3, 2, d}) == q_grouped.at({0, 1, 1 * T + 2, d});
  std::printf("q[0,3,2,:] == q_grouped[0,1,1*3+2,:]: %s\n", same_row ? "yes" : "no");
  // doc:end mapping

  // doc:begin paths
  std::vector<std::int64_t> ids = Tokenizer().encode("GlassLM shares its K/V heads.");
  for (DType dtype : {DType::float64, DType::float32}) {
    GlassLM model = GlassLM(cfg, 0).to(dtype);
    model.attention = Attention::repeat_kv;
    Tensor a = model.forward(ids);  // [1, 29, 99]
    model.attention = Attention::grouped;
    Tensor b = model.forward(ids);
    std::printf("%s: %zu tokens, max |repeat_kv - grouped| over all logits = %.2e\n",
                dtype_name(dtype), ids.size(), max_abs_diff(a, b));
  }
  // doc:end paths

  // doc:begin bytes
  // Fill a cache with 128 positions (the whole window), then measure.
  std::vector<std::int64_t> window(cfg.max_len);
  for (std::size_t i = 0; i < window.size(); ++i) window[i] = std::int64_t(i % 95);
  for (DType dtype : {DType::float32, DType::float64}) {
    GlassLM model = GlassLM(cfg, 0).to(dtype);
    Cache cache = model.new_cache();
    model.forward(window, &cache);
    std::size_t cache_bytes = 0, copied = 0;
    for (const KVCache& c : cache) {
      cache_bytes += c.nbytes();  // k and v, each [1, Hkv, 128, hd]
      // What the repeat_kv path writes in this layer: K and V at [1, H, 128, hd].
      copied += repeat_kv(c.k(), G).nbytes() + repeat_kv(c.v(), G).nbytes();
    }
    std::size_t formula = 2 * cfg.n_layers * 1 * cfg.max_len * cfg.n_kv_heads * hd *
                          dtype_size(dtype);  // 2 * L * B * m * Hkv * hd * bytes
    std::printf(
        "%s, 128 positions: cache %zu KiB (formula %zu KiB; with 4 K/V heads "
        "%zu KiB);\n  repeat_kv copies %zu KiB per forward, grouped 0\n",
        dtype_name(dtype), cache_bytes / 1024, formula / 1024,
        formula * H / cfg.n_kv_heads / 1024, copied / 1024);
  }
  // doc:end bytes
  return 0;
}
