// bench.cpp: what GlassLM's ops cost on this machine, in one table.
//
// Prints the matrix-product backend in use (backend, file, kernels, build,
// threads), the fixed cost of one tiny op with and without the autograd tape,
// and the GFLOP/s of the model's matrix products through matmul and linear, each next
// to a plain loop of raw GEMMs on the same shapes (the ceiling the op could
// reach) and their ratio, then the built-in GEMM against the backend on the
// same shapes, one thread each, beside the default (the faster of the two
// for each kind of product, as measured once and cached: gemm_choice.cpp).
// Every figure is a median of repeated runs: the
// machine is shared and noisy. Then the model itself (default config):
// prefill, decode through both kinds of cache, and one training step with its
// effective GFLOP/s beside the GEMM ceiling measured in the same run; and the
// training step and decoding again beside a busy thread (bench_contention.cpp).
// Last, decoding at SmolLM2-135M's shape against the memory floor (bench_decode.cpp).
// The printers (table and JSON) are in bench_print.cpp.
// `glassllm bench --json` prints the same figures as one flat JSON object.
#include "bench/bench.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bench/figures.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "glassllm/engine/ops.h"
#include "glassllm/fast/blas.h"
#include "glassllm/fast/blas_internal.h"
#include "glassllm/fast/gemm_choice.h"
#include "glassllm/io/tokenizer.h"
#include "glassllm/model/model.h"
#include "glassllm/trace/tracer.h"

namespace glassllm::cli {

using Clock = std::chrono::steady_clock;

// Median over `runs` of the seconds one call of f takes, each run timing
// `inner` calls back to back (so a call shorter than the clock's resolution
// is still measured). One untimed run first warms caches and BLAS buffers.
double median_seconds(const std::function<void()>& f, int runs, int inner) {
  for (int i = 0; i < inner; ++i) f();
  std::vector<double> t(std::size_t(runs), 0.0);
  for (double& s : t) {
    auto start = Clock::now();
    for (int i = 0; i < inner; ++i) f();
    s = std::chrono::duration<double>(Clock::now() - start).count() / inner;
  }
  return median(std::move(t));
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + long(v.size() / 2), v.end());
  return v[v.size() / 2];
}

TokenBatch random_token_batch(Rng& rng, std::size_t B, std::size_t T, std::size_t vocab) {
  TokenBatch t(B, std::vector<std::int64_t>(T));
  for (auto& row : t)
    for (auto& id : row) id = std::int64_t(rng.randint(vocab));
  return t;
}

namespace {

struct BenchArgs {
  bool json = false;
  int runs = 0;                   // 0: each benchmark's default
  std::vector<std::string> only;  // the groups to measure (kGroups); empty: all
};

// The groups of figures, in the order they are measured: --only picks some.
const std::vector<std::string> kGroups = {"ops",    "matmul",     "model",  "attention",
                                          "tracer", "contention", "smollm2"};

// "ops, matmul, ... or smollm2", for --only's help and its error.
std::string groups_list() {
  std::string list;
  for (std::size_t i = 0; i < kGroups.size(); ++i)
    list += (i == 0 ? "" : i + 1 == kGroups.size() ? " or " : ", ") + kGroups[i];
  return list;
}

// One matrix product case: the op through the engine and the same GEMMs raw.
template <class T>
Row measure(const std::string& key, const std::string& label, int threads, double flops,
            const std::function<void()>& op, const std::function<void()>& raw, int runs) {
  const int previous = blas_info().threads;
  set_blas_threads(threads);
  Row r{key, label, sizeof(T) == 4 ? "float32" : "float64", threads, 0, 0};
  r.op_gflops = flops / median_seconds(op, runs) / 1e9;
  r.gemm_gflops = flops / median_seconds(raw, runs) / 1e9;
  set_blas_threads(previous);
  return r;
}

template <class T>
void matmul_cases(std::vector<Row>& rows, DType dt, int runs) {
  const char* d = sizeof(T) == 4 ? "f32" : "f64";
  {
    // Attention scores' shape: [B, H, T, hd] @ [B, H, hd, T], 64 GEMMs of 128x128x32.
    const std::size_t B = 16, H = 4, T_ = 128, hd = 32;
    Tensor q = randn({B, H, T_, hd}, 1, dt), k = randn({B, H, hd, T_}, 2, dt);
    Tensor c = zeros({B, H, T_, T_}, dt);
    double flops = 2.0 * B * H * T_ * T_ * hd;
    const T* qa = q.data<T>();
    const T* ka = k.data<T>();
    T* ca = c.mutable_data<T>();
    auto raw = [&] {
      for (std::size_t i = 0; i < B * H; ++i)
        gemm<T>(false, false, T_, T_, hd, T(1), qa + i * T_ * hd, hd, ka + i * hd * T_,
                T_, T(0), ca + i * T_ * T_, T_);
    };
    rows.push_back(measure<T>(
        std::string("matmul_16x4x128x32_") + d, "matmul (16,4,128,32)@(16,4,32,128)", 1,
        flops, [&] { matmul(q, k); }, raw, runs));
  }
  {
    // The MLP's up projection over B*T = 2048 rows: [2048, 128] -> [2048, 384].
    const std::size_t R = 2048, in = 128, out = 384;
    Tensor x = randn({R, in}, 3, dt), w = randn({out, in}, 4, dt),
           wt = randn({in, out}, 5, dt);
    Tensor y = zeros({R, out}, dt);
    double flops = 2.0 * R * in * out;
    const T* xa = x.data<T>();
    const T* wa = w.data<T>();
    const T* wta = wt.data<T>();
    T* ya = y.mutable_data<T>();
    auto raw_nt = [&] {
      gemm<T>(false, true, R, out, in, T(1), xa, in, wa, in, T(0), ya, out);
    };
    auto raw_nn = [&] {
      gemm<T>(false, false, R, out, in, T(1), xa, in, wta, out, T(0), ya, out);
    };
    for (int threads : {1, 2}) {
      std::string t = threads == 1 ? "" : "_2threads";
      rows.push_back(measure<T>(
          std::string("linear_2048x128x384_") + d + t, "linear (2048,128) w (384,128)",
          threads, flops, [&] { linear(x, w); }, raw_nt, runs));
      rows.push_back(measure<T>(
          std::string("matmul_2048x128x384_") + d + t, "matmul (2048,128)@(128,384)",
          threads, flops, [&] { matmul(x, wt); }, raw_nn, runs));
    }
  }
}

// ---- the built-in GEMM against the backend ---------------------------------------

// The bench's GEMM shapes on one thread, through gemm() three ways: forced
// onto the configured backend, forced onto the built-in GEMM
// (gemm_choice::force), and as chosen for their kind (the default),
// alternating run by run so that all three see the same machine load. In a
// builtin build all three are the built-in code.
template <class T>
void builtin_cases(std::vector<BackendRow>& rows, DType dt, int runs) {
  using gemm_choice::Path;
  const char* d = sizeof(T) == 4 ? "f32" : "f64";
  struct Shape {
    const char* key;
    const char* label;
    std::size_t batch, M, N, K;
    bool trans_a, trans_b;
  };
  const Shape shapes[] = {
      // Attention's per-head products of a training step (small products):
      // scores q k^T, probs v, and dk = dscores^T q.
      {"64x128x128x32_nt", "64 x (128,32)@(128,32)^T", 64, 128, 128, 32, false, true},
      {"64x128x32x128_nn", "64 x (128,128)@(128,32)", 64, 128, 32, 128, false, false},
      {"64x128x32x128_tn", "64 x (128,128)^T@(128,32)", 64, 128, 32, 128, true, false},
      {"2048x128x384_nt", "(2048,128)@(384,128)^T", 1, 2048, 384, 128, false, true},
      {"2048x128x384_nn", "(2048,128)@(128,384)", 1, 2048, 384, 128, false, false},
      {"384x128x2048_tn", "(2048,384)^T@(2048,128)", 1, 384, 128, 2048, true, false}};
  const int previous = blas_info().threads;
  set_blas_threads(1);
  for (const Shape& sh : shapes) {
    Tensor a = randn({sh.batch, sh.M, sh.K}, 11, dt),
           b = randn({sh.batch, sh.K, sh.N}, 12, dt);
    Tensor c = zeros({sh.batch, sh.M, sh.N}, dt);
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* pc = c.mutable_data<T>();
    const std::size_t lda = sh.trans_a ? sh.M : sh.K, ldb = sh.trans_b ? sh.K : sh.N;
    auto run = [&](std::optional<Path> path) {
      gemm_choice::force(path);
      for (std::size_t i = 0; i < sh.batch; ++i)
        gemm<T>(sh.trans_a, sh.trans_b, sh.M, sh.N, sh.K, T(1), pa + i * sh.M * sh.K, lda,
                pb + i * sh.K * sh.N, ldb, T(0), pc + i * sh.M * sh.N, sh.N);
      gemm_choice::force(std::nullopt);
    };
    const std::optional<Path> ways[3] = {Path::library, Path::builtin, std::nullopt};
    for (const std::optional<Path>& way : ways) run(way);  // warm caches and buffers
    std::vector<double> t[3];
    for (int r = 0; r < runs; ++r)
      for (int w = 0; w < 3; ++w)
        t[w].push_back(median_seconds([&] { run(ways[w]); }, 1));
    const double flops = 2.0 * sh.batch * sh.M * sh.N * sh.K;
    const Path used = gemm_choice::path<T>(sh.trans_a, sh.trans_b, sh.M, sh.N, sh.K);
    rows.push_back({std::string(sh.key) + "_" + d, sh.label,
                    sizeof(T) == 4 ? "float32" : "float64",
                    gemm_choice::kind_name(gemm_choice::kind_of(sh.trans_a, sh.trans_b)),
                    gemm_choice::path_name(used), flops / median(t[0]) / 1e9,
                    flops / median(t[1]) / 1e9, flops / median(t[2]) / 1e9});
  }
  set_blas_threads(previous);
}

// ---- the model ----------------------------------------------------------------

// Matmul FLOPs of one forward pass over B sequences of T tokens: every linear
// layer (2 * rows * in * out) and the two attention products per head.
double forward_matmul_flops(const Config& c, double B, double T) {
  double N = B * T, d = double(c.d_model), hd = double(c.head_dim());
  double H = double(c.n_heads), Hkv = double(c.n_kv_heads), ff = double(c.d_ff);
  double per_layer = 2 * N * d * (H * hd)           // q_proj
                     + 2 * 2 * N * d * (Hkv * hd)   // k_proj, v_proj
                     + 2 * N * (H * hd) * d         // o_proj
                     + 2 * 2 * N * d * ff           // gate_proj, up_proj
                     + 2 * N * ff * d               // down_proj
                     + 2 * 2 * B * H * T * T * hd;  // q k^T and probs v
  return double(c.n_layers) * per_layer + 2 * N * d * double(c.vocab_size);  // + lm_head
}

template <class T>
ModelFigures model_figures(DType dt, int runs) {
  Config cfg;
  cfg.vocab_size = Tokenizer().vocab_size();
  GlassLM model(cfg, 0, dt);
  ModelFigures f;
  f.dtype = dtype_name(dt);
  Rng rng(7);
  auto random_tokens = [&](std::size_t rows, std::size_t len) {
    return random_token_batch(rng, rows, len, cfg.vocab_size);
  };
  TokenBatch prompt128 = random_tokens(1, cfg.max_len);
  {
    no_grad guard;
    f.prefill_ms = 1e3 * median_seconds([&] { model.forward(prompt128); }, runs);
    // Decode: prefill 8 tokens, then 120 steps of one token through the cache.
    auto decode = [&](CacheMode mode, Attention path) {
      GlassLM m = model;
      m.attention = path;
      std::vector<std::int64_t> prompt(prompt128[0].begin(), prompt128[0].begin() + 8);
      std::vector<double> times;
      for (int r = 0; r < std::max(3, runs / 4); ++r) {
        Cache cache = m.new_cache(mode);
        m.forward(prompt, &cache, 0);
        auto start = Clock::now();
        for (std::size_t step = 0; step < 120; ++step)
          m.forward({prompt128[0][8 + step]}, &cache, 8 + step);
        times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
      }
      std::nth_element(times.begin(), times.begin() + long(times.size() / 2),
                       times.end());
      return 120.0 / times[times.size() / 2];
    };
    f.decode_concat_tps = decode(CacheMode::concat, Attention::repeat_kv);
    f.decode_preallocated_tps = decode(CacheMode::preallocated, Attention::repeat_kv);
    f.decode_grouped_tps = decode(CacheMode::concat, Attention::grouped);
  }
  // One training step: loss over 16 x 128 tokens, backward to every weight.
  const std::size_t B = 16;
  TokenBatch tokens = random_tokens(B, cfg.max_len),
             targets = random_tokens(B, cfg.max_len);
  auto step = [&] {
    Tensor loss = model.loss(tokens, targets);
    loss.backward();
    for (auto& [name, w] : model.named_parameters()) w.zero_grad();
  };
  for (auto& [name, w] : model.named_parameters()) w.requires_grad_();
  const double step_flops = 3 * forward_matmul_flops(cfg, double(B), double(cfg.max_len));
  // The ceiling: raw GEMM at the MLP's up projection, [2048, 128] x [128, 384]^T,
  // measured with the same thread count as the step.
  const std::size_t R = B * cfg.max_len, in = cfg.d_model, out = cfg.d_ff;
  Tensor gx = randn({R, in}, 3, dt), gw = randn({out, in}, 4, dt),
         gy = zeros({R, out}, dt);
  auto ceiling = [&] {
    const T* xa = gx.data<T>();
    const T* wa = gw.data<T>();
    T* ya = gy.mutable_data<T>();
    double s = median_seconds(
        [&] { gemm<T>(false, true, R, out, in, T(1), xa, in, wa, in, T(0), ya, out); },
        runs);
    return 2.0 * R * in * out / s / 1e9;
  };
  // The step and the ceiling in turns, and the fraction as the median of each
  // step's GFLOP/s over the ceiling measured right after it: the load of a
  // shared machine changes from one second to the next, and neighbours see
  // nearly the same. A training run repeats the step thousands of times,
  // and its first steps are slower (the allocator takes memory from the
  // system, the pool and the BLAS size their buffers): three untimed steps
  // reach the step that repeats.
  const int pairs = std::max(7, runs / 2);
  struct Paired {
    double step_seconds, ceiling_gflops, fraction;  // medians over the pairs
  };
  auto step_and_ceiling = [&] {
    for (int warm = 0; warm < 3; ++warm) step();
    std::vector<double> seconds, ceilings, fractions;
    for (int p = 0; p < pairs; ++p) {
      const auto start = Clock::now();
      step();
      seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
      ceilings.push_back(ceiling());
      fractions.push_back(step_flops / seconds.back() / 1e9 / ceilings.back());
    }
    return Paired{median(seconds), median(ceilings), median(fractions)};
  };
  const Paired two = step_and_ceiling();
  f.train_step_ms = 1e3 * two.step_seconds;
  f.train_tokens_per_s = double(B * cfg.max_len) / two.step_seconds;
  f.train_gflops = step_flops / two.step_seconds / 1e9;
  f.gemm_ceiling_gflops = two.ceiling_gflops;
  f.train_fraction = two.fraction;
  // Again on one thread: GEMMs then use one core, as the rest of the step does.
  const int threads = blas_info().threads;
  set_blas_threads(1);
  const Paired one = step_and_ceiling();
  f.train_step_ms_1thread = 1e3 * one.step_seconds;
  f.train_gflops_1thread = step_flops / one.step_seconds / 1e9;
  f.gemm_ceiling_gflops_1thread = one.ceiling_gflops;
  f.train_fraction_1thread = one.fraction;
  set_blas_threads(threads);
  return f;
}

Figures measure(const BenchArgs& args) {
  Figures f;
  for (const std::string& g : args.only)
    if (!has(kGroups, g.c_str()))
      throw std::invalid_argument("bench: unknown --only group '" + g + "'; expected " +
                                  groups_list());
  for (const std::string& g : kGroups)
    if (args.only.empty() || has(args.only, g.c_str())) f.groups.push_back(g);
  auto wanted = [&](const char* group) { return has(f.groups, group); };
  // The GEMM choice first (measured or read from its cache), so that the
  // backend's description includes it.
  f.choice = gemm_choice::current();
  f.info = blas_info();

  // (b) per-op overhead: add on a decode-sized tensor, [1, 4, 1, 32].
  if (wanted("ops")) {
    Tensor a = randn({1, 4, 1, 32}, 6), b = randn({1, 4, 1, 32}, 7);
    {
      no_grad guard;
      f.add_no_grad_us =
          1e6 * median_seconds([&] { add(a, b); }, f.overhead_runs, f.overhead_inner);
    }
    Tensor ag = a.detach().requires_grad_(), bg = b.detach().requires_grad_();
    f.add_tape_us =
        1e6 * median_seconds([&] { add(ag, bg); }, f.overhead_runs, f.overhead_inner);
  }

  // (c) matrix products.
  f.gemm_runs = args.runs > 0 ? args.runs : 31;
  if (wanted("matmul")) {
    no_grad guard;  // forward cost only; no inputs require grad anyway
    matmul_cases<float>(f.rows, DType::float32, f.gemm_runs);
    matmul_cases<double>(f.rows, DType::float64, f.gemm_runs);
    builtin_cases<float>(f.backend_rows, DType::float32, f.gemm_runs);
    builtin_cases<double>(f.backend_rows, DType::float64, f.gemm_runs);
  }

  // (d) the model.
  const int model_runs = args.runs > 0 ? args.runs : 11;
  if (wanted("model"))
    f.models = {model_figures<float>(DType::float32, model_runs),
                model_figures<double>(DType::float64, model_runs)};

  // (e) attention at the exaone-4.0-1.2b shape, and the tracer's cost.
  if (wanted("attention")) f.att = exaone_attention(args.runs > 0 ? args.runs : 7);
  if (wanted("tracer")) f.tr = tracer_cost(model_runs);

  // (f) the model again beside a busy thread.
  if (wanted("contention")) f.busy = contention(model_runs);

  // (g) decoding at SmolLM2-135M's shape against the memory floor.
  if (wanted("smollm2")) f.dec = smollm2_decode(args.runs > 0 ? args.runs : 5);

  return f;
}

int bench(const BenchArgs& args) {
  Figures f = measure(args);
  if (args.json) {
    print_json(f);
    return 0;
  }
  print_ops(f);
  if (has(f.groups, "model")) print_model(f);
  print_attention_and_tracer(f);
  if (has(f.groups, "contention")) print_contention(f);
  if (has(f.groups, "smollm2")) print_decode(f.dec);
  return 0;
}

}  // namespace

Command register_bench(CLI::App& app) {
  auto a = std::make_shared<BenchArgs>();
  CLI::App* sub = app.add_subcommand(
      "bench",
      "Measure ops, matrix products and the model (prefill, decode, training step).");
  sub->add_flag("--json", a->json, "Print one flat JSON object of named figures");
  add_whole(sub, "--runs", a->runs, "Repetitions per figure (default: each one's own)", 1,
            1000000)
      ->default_str("");
  sub->add_option("--only", a->only,
                  "Measure only these groups, comma-separated: " + groups_list() +
                      " (default: all)")
      ->delimiter(',');
  return {sub, [a] { return bench(*a); }};
}

}  // namespace glassllm::cli
