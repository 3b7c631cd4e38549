// gqa_without_copies.cpp: the two ways GlassLM shares K/V heads between
// query heads, side by side on one decode step: repeat_kv copies K and V from
// Hkv to H heads; grouped folds Q from [B, H, T, hd] into [B, Hkv, G*T, hd]
// with a reshape that moves nothing. Same result; the op graph shows what
// each one writes. Quoted by docs/10-gqa-without-copies.md.
#include <cstdio>

#include "glassllm/engine/ops.h"
#include "glassllm/model/model.h"
#include "glassllm/trace/tracer.h"

using namespace glassllm;

int main() {
  no_grad guard;
  // doc:begin shapes
  // One decode step of one layer at the exaone-4.0-1.2b head shape: H = 32
  // query heads, Hkv = 8 K/V heads (G = 4), hd = 64, and m = 512 cached keys.
  const std::size_t H = 32, Hkv = 8, G = H / Hkv, hd = 64, m = 512;
  Tensor q = randn({1, H, 1, hd}, 1);       // the new token's queries, after RoPE
  Tensor keys = randn({1, Hkv, m, hd}, 2);  // the cache: 8 heads, never 32
  Tensor values = randn({1, Hkv, m, hd}, 3);
  // doc:end shapes

  // doc:begin fold
  // Heads h = i*G + g (K/V head i, group member g) are neighbours in q, so
  // [1, 32, 1, 64] -> [1, 8, 4, 64] is a reshape: a view of the same memory.
  Tensor folded = reshape(q, {1, std::int64_t(Hkv), std::int64_t(G), std::int64_t(hd)});
  std::printf("folded %s shares q's data: %s\n", shape_str(folded.shape()).c_str(),
              folded.data<float>() == q.data<float>() ? "yes" : "no");
  // doc:end fold

  // doc:begin paths
  // The whole attention core (scores, causal softmax, probs @ V) on each path,
  // with every op recorded.
  Tensor out[2];
  for (Attention path : {Attention::repeat_kv, Attention::grouped}) {
    OpGraphRecorder recorder;
    out[int(path)] = attend(q, keys, values, m - 1, 0, path);
    const OpGraph& g = recorder.graph();
    std::size_t written = 0;
    for (const OpNode& n : g.nodes) written += n.bytes;
    std::printf(
        "%-9s: %zu repeat_kv ops writing %zu KiB, read again by the next op: %zu KiB; "
        "all ops write %zu KiB\n",
        attention_name(path), g.count("repeat_kv"), g.bytes_written("repeat_kv") / 1024,
        g.bytes_read_after("repeat_kv") / 1024, written / 1024);
  }
  // doc:end paths

  // doc:begin same
  // The same numbers: each output row depends only on its own query row, K
  // and V; folding changes which rows share one matrix product, not a row.
  std::vector<double> a = out[0].to_vector(), b = out[1].to_vector();
  std::size_t differing = 0;
  for (std::size_t i = 0; i < a.size(); ++i) differing += a[i] != b[i];
  std::printf("output %s on both paths: %zu of its %zu numbers differ\n",
              shape_str(out[1].shape()).c_str(), differing, a.size());
  // doc:end same

  // doc:begin scale
  // Per layer, repeat_kv copies K and V: 2 * (H * m * hd * 4 bytes). At the
  // model's size, 30 layers and m = 4096, in float16 (2 bytes):
  double per_token = 30 * 2 * double(H) * 4096 * hd * 2;
  std::printf("%.0f MiB copied per token, %.0f MiB written + read\n",
              per_token / (1 << 20), 2 * per_token / (1 << 20));
  // doc:end scale
  return 0;
}
