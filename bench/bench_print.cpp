// bench_print.cpp: the tables and the JSON object of `glassllm bench`,
// printed from the figures bench.cpp measured.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "bench/figures.h"
#include "cli/cli.h"

namespace glassllm::cli {

bool has(const std::vector<std::string>& groups, const char* group) {
  return std::find(groups.begin(), groups.end(), group) != groups.end();
}

namespace {

// The figures beside a busy thread, with their ratios to the quiet ones
// measured in alternate rounds of the same function.
void print_contention_json(const Figures& f, nlohmann::json& j) {
  const ContentionFigures& c = f.busy;
  j["train_step_contended_ms_float32"] = c.train_step_ms;
  j["train_step_contended_quiet_ms_float32"] = c.train_step_quiet_ms;
  j["train_step_contended_over_quiet_float32"] = c.train_step_ms / c.train_step_quiet_ms;
  j["decode_contended_tokens_per_s_float32"] = c.decode_tokens_per_s;
  j["decode_contended_quiet_tokens_per_s_float32"] = c.decode_quiet_tokens_per_s;
  j["decode_contended_over_quiet_float32"] =
      c.decode_tokens_per_s / c.decode_quiet_tokens_per_s;
}

// Which GEMM each kind of product runs, and the built-in GEMM against the
// backend with the default (the chosen one) beside them; the worst default
// over the faster of the two says whether the choice ever cost more than 5 %.
void print_choice_json(const Figures& f, nlohmann::json& j) {
  const char* dtypes[2] = {"float32", "float64"};
  for (std::size_t d = 0; d < 2; ++d)
    for (std::size_t k = 0; k < gemm_choice::kKinds; ++k)
      for (std::size_t z = 0; z < gemm_choice::kSizes; ++z) {
        std::string kind = gemm_choice::kind_name(gemm_choice::Kind(k));
        for (char& ch : kind) ch = char(std::tolower(ch));
        j["gemm_choice_" + kind + "_" + gemm_choice::size_name(gemm_choice::Size(z)) +
          "_" + dtypes[d]] = gemm_choice::path_name(f.choice.kinds[d][k][z].path);
      }
  j["gemm_choice_measure_ms"] = f.choice.measure_ms;  // 0: read from the cache
  double worst = 0;
  for (const BackendRow& r : f.backend_rows) {
    const std::string key = "builtin_vs_backend_" + r.key;
    j[key + "_backend_gflops"] = r.backend_gflops;
    j[key + "_builtin_gflops"] = r.builtin_gflops;
    j[key + "_ratio"] = r.builtin_gflops / r.backend_gflops;
    j[key + "_default_gflops"] = r.default_gflops;
    j[key + "_default_over_best"] = r.default_over_best();
    j[key + "_used"] = r.used;
    worst = std::max(worst, r.default_over_best());
  }
  if (!f.backend_rows.empty()) j["gemm_default_worst_over_best"] = worst;
}

void print_attention_json(const AttentionFigures& att, nlohmann::json& j) {
  j["attention_exaone_grouped_ms"] = att.grouped_ms;
  j["attention_exaone_repeat_kv_ms"] = att.repeat_kv_ms;
  j["attention_exaone_floor_ms"] = att.floor_ms;
  j["attention_exaone_floor_1thread_ms"] = att.floor_1thread_ms;
  j["attention_exaone_grouped_over_floor"] = att.grouped_ms / att.floor_ms;
  j["attention_exaone_repeat_kv_over_grouped"] = att.repeat_kv_ms / att.grouped_ms;
  j["attention_exaone_cache_bytes"] = att.cache_bytes;
  j["attention_exaone_grouped_repeat_bytes"] = att.grouped_repeat_bytes;
  j["attention_exaone_repeat_kv_repeat_bytes"] = att.repeat_kv_repeat_bytes;
  j["attention_exaone_grouped_written_bytes"] = att.grouped_written;
  j["attention_exaone_repeat_kv_written_bytes"] = att.repeat_kv_written;
}

}  // namespace

void print_contention(const Figures& f) {
  const ContentionFigures& c = f.busy;
  std::printf(
      "\nThe model beside one busy-looping thread, float32, %d thread(s), medians of\n"
      "rounds alternating quiet and busy\n",
      f.info.threads);
  std::printf("  %-40s %10s %10s %8s\n", "", "quiet", "busy", "ratio");
  std::printf("  %-40s %10.1f %10.1f %8.2f\n", "training step, batch 16 x 128 (ms)",
              c.train_step_quiet_ms, c.train_step_ms,
              c.train_step_ms / c.train_step_quiet_ms);
  std::printf("  %-40s %10.0f %10.0f %8.2f\n", "decode, 120 steps (tokens/s)",
              c.decode_quiet_tokens_per_s, c.decode_tokens_per_s,
              c.decode_tokens_per_s / c.decode_quiet_tokens_per_s);
}

// One flat JSON object of named figures (`glassllm bench --json`): the
// groups measured, and which BLAS ran.
void print_json(const Figures& f) {
  nlohmann::json j;
  j["blas_backend"] = f.info.backend;
  j["blas_library"] = f.info.library;
  j["blas_core"] = f.info.core;
  j["blas_config"] = f.info.config;
  j["blas_threads"] = f.info.threads;  // the default, used for the model figures
  j["gemm_choice"] = f.info.gemm;
  j["allocator"] = allocator_name();
  if (has(f.groups, "ops")) {
    j["add_1x4x1x32_no_grad_us"] = f.add_no_grad_us;
    j["add_1x4x1x32_tape_us"] = f.add_tape_us;
  }
  for (const Row& r : f.rows) {
    j[r.key + "_gflops"] = r.op_gflops;
    j[r.key + "_gemm_gflops"] = r.gemm_gflops;
    j[r.key + "_ratio"] = r.op_gflops / r.gemm_gflops;
  }
  print_choice_json(f, j);
  for (const ModelFigures& m : f.models) {
    const std::string d = "_" + m.dtype;
    j["prefill_ms" + d] = m.prefill_ms;
    j["decode_tokens_per_s" + d] = m.decode_concat_tps;
    j["decode_preallocated_tokens_per_s" + d] = m.decode_preallocated_tps;
    j["decode_grouped_tokens_per_s" + d] = m.decode_grouped_tps;
    j["train_step_ms" + d] = m.train_step_ms;
    j["train_tokens_per_s" + d] = m.train_tokens_per_s;
    j["train_step_gflops" + d] = m.train_gflops;
    j["train_step_gemm_ceiling_gflops" + d] = m.gemm_ceiling_gflops;
    j["train_step_gemm_fraction" + d] = m.train_fraction;
    j["train_step_ms_1thread" + d] = m.train_step_ms_1thread;
    j["train_step_gflops_1thread" + d] = m.train_gflops_1thread;
    j["train_step_gemm_ceiling_gflops_1thread" + d] = m.gemm_ceiling_gflops_1thread;
    j["train_step_gemm_fraction_1thread" + d] = m.train_fraction_1thread;
  }
  if (has(f.groups, "attention")) print_attention_json(f.att, j);
  if (has(f.groups, "tracer")) {
    j["tracer_prefill_ms_float32"] = f.tr.prefill_ms;
    j["tracer_traced_prefill_ms_float32"] = f.tr.traced_prefill_ms;
    j["tracer_overhead_ratio"] = f.tr.traced_prefill_ms / f.tr.prefill_ms;
    j["tracer_to_json_ms"] = f.tr.to_json_ms;
    j["tracer_json_bytes"] = f.tr.json_bytes;
  }
  if (has(f.groups, "contention")) print_contention_json(f, j);
  if (has(f.groups, "smollm2")) print_decode_json(f.dec, j);
  std::cout << j.dump(2) << "\n";
}

// The BLAS library, the per-op overhead and the matrix products.
void print_ops(const Figures& f) {
  std::printf("BLAS backend  %s\n", f.info.backend.c_str());
  std::printf("BLAS library  %s\n", f.info.library.c_str());
  std::printf("BLAS core     %s\n", f.info.core.c_str());
  std::printf("BLAS config   %s\n", f.info.config.c_str());
  std::printf("BLAS threads  %d (default)\n", f.info.threads);
  std::printf("GEMM choice   %s\n", f.info.gemm.c_str());
  if (f.choice.measure_ms > 0)
    std::printf("              measured in %.0f ms\n", f.choice.measure_ms);
  std::printf("Allocator     %s\n\n", allocator_name().c_str());

  if (has(f.groups, "ops")) {
    std::printf("Per-op overhead: add on (1,4,1,32), median of %d runs of %d calls\n",
                f.overhead_runs, f.overhead_inner);
    std::printf("  under no_grad          %7.3f us\n", f.add_no_grad_us);
    std::printf("  recording the tape     %7.3f us\n\n", f.add_tape_us);
  }
  if (!has(f.groups, "matmul")) return;

  std::printf("Matrix products, forward, GFLOP/s, median of %d runs\n", f.gemm_runs);
  std::printf("  %-38s %-8s %7s %8s %8s %6s\n", "case", "dtype", "threads", "op", "gemm",
              "op/gemm");
  for (const Row& r : f.rows)
    std::printf("  %-38s %-8s %7d %8.1f %8.1f %6.2f\n", r.label.c_str(), r.dtype.c_str(),
                r.threads, r.op_gflops, r.gemm_gflops, r.op_gflops / r.gemm_gflops);
  std::printf(
      "\n'gemm' is a plain loop of raw GEMMs on the same shapes and buffers:\n"
      "the ceiling for the op, which also allocates its output.\n\n");

  std::printf(
      "The built-in GEMM against the %s backend, and the default (the path chosen\n"
      "for the product's kind), one thread, GFLOP/s, median of %d\n",
      f.info.backend.c_str(), f.gemm_runs);
  std::printf("  %-26s %-8s %-4s %8s %8s %6s %8s %-8s %8s\n", "case", "dtype", "kind",
              f.info.backend.c_str(), "builtin", "ratio", "default", "used", "def/best");
  double worst = 0;
  for (const BackendRow& r : f.backend_rows) {
    std::printf("  %-26s %-8s %-4s %8.1f %8.1f %6.2f %8.1f %-8s %8.3f\n", r.label.c_str(),
                r.dtype.c_str(), r.kind.c_str(), r.backend_gflops, r.builtin_gflops,
                r.builtin_gflops / r.backend_gflops, r.default_gflops, r.used.c_str(),
                r.default_over_best());
    worst = std::max(worst, r.default_over_best());
  }
  std::printf(
      "\n'def/best' is the default's time over the faster path's: worst %.3f.\n\n",
      worst);
}

// The model at the default config, float32 beside float64.
void print_model(const Figures& f) {
  std::printf(
      "The model, default config (d_model 128, 4 layers, 4 query heads, 2 K/V heads),\n"
      "%d BLAS thread(s), medians\n",
      f.info.threads);
  std::printf("  %-52s %12s %12s\n", "figure", "float32", "float64");
  auto row = [&](const char* label, double ModelFigures::*field, const char* fmt) {
    std::printf("  %-52s ", label);
    for (const ModelFigures& m : f.models) std::printf(fmt, m.*field);
    std::printf("\n");
  };
  row("prefill, 128 tokens, batch 1 (ms)", &ModelFigures::prefill_ms, "%12.2f ");
  row("decode, 120 steps, concatenating cache (tokens/s)",
      &ModelFigures::decode_concat_tps, "%12.0f ");
  row("decode, 120 steps, preallocated cache (tokens/s)",
      &ModelFigures::decode_preallocated_tps, "%12.0f ");
  row("decode, 120 steps, grouped K/V path (tokens/s)", &ModelFigures::decode_grouped_tps,
      "%12.0f ");
  row("training step, batch 16 x 128 (ms)", &ModelFigures::train_step_ms, "%12.1f ");
  row("training throughput (tokens/s)", &ModelFigures::train_tokens_per_s, "%12.0f ");
  row("training step, matmul GFLOP/s", &ModelFigures::train_gflops, "%12.1f ");
  row("GEMM ceiling, [2048,128]x[128,384], GFLOP/s", &ModelFigures::gemm_ceiling_gflops,
      "%12.1f ");
  std::printf("  %-52s ", "training step / GEMM ceiling");
  for (const ModelFigures& m : f.models) std::printf("%12.2f ", m.train_fraction);
  std::printf("\n");
  row("training step, 1 BLAS thread (ms)", &ModelFigures::train_step_ms_1thread,
      "%12.1f ");
  row("training step, 1 BLAS thread, matmul GFLOP/s", &ModelFigures::train_gflops_1thread,
      "%12.1f ");
  row("GEMM ceiling, 1 thread, GFLOP/s", &ModelFigures::gemm_ceiling_gflops_1thread,
      "%12.1f ");
  std::printf("  %-52s ", "training step / GEMM ceiling, 1 thread");
  for (const ModelFigures& m : f.models) std::printf("%12.2f ", m.train_fraction_1thread);
  std::printf(
      "\n\n'training step / GEMM ceiling' is the median of each timed step's "
      "GFLOP/s over\nthe ceiling timed right after it, so it can differ from the "
      "ratio of the medians.\n\n");
}

// Attention at the exaone-4.0-1.2b shape, and what the tracer costs.
void print_attention_and_tracer(const Figures& f) {
  const double mib = 1 << 20;
  if (has(f.groups, "attention")) {
    std::printf(
        "One decode step's attention at the exaone-4.0-1.2b shape (30 layers, 32 query\n"
        "heads, 8 K/V heads, head_dim 64, 4096 cached positions), float32, medians\n");
    std::printf("  %-40s %10s %16s %16s\n", "", "ms/token", "repeat_kv MiB",
                "all ops MiB");
    std::printf("  %-40s %10.2f %16.1f %16.1f\n", "grouped (no copy)", f.att.grouped_ms,
                f.att.grouped_repeat_bytes / mib, f.att.grouped_written / mib);
    std::printf("  %-40s %10.2f %16.1f %16.1f\n", "repeat_kv", f.att.repeat_kv_ms,
                f.att.repeat_kv_repeat_bytes / mib, f.att.repeat_kv_written / mib);
    std::printf("  %-40s %10.2f\n", "floor: read the K/V cache once", f.att.floor_ms);
    std::printf("  %-40s %10.2f\n", "floor on one thread", f.att.floor_1thread_ms);
    std::printf(
        "  (the cache is %.0f MiB; grouped / floor %.2f, repeat_kv / grouped %.2f)\n\n",
        f.att.cache_bytes / mib, f.att.grouped_ms / f.att.floor_ms,
        f.att.repeat_kv_ms / f.att.grouped_ms);
  }
  if (!has(f.groups, "tracer")) return;

  std::printf("The tracer, default config, prefill of 128 tokens, float32, medians\n");
  std::printf("  prefill without a tracer (ms)   %8.2f\n", f.tr.prefill_ms);
  std::printf("  prefill with a tracer (ms)      %8.2f  (x%.2f)\n",
              f.tr.traced_prefill_ms, f.tr.traced_prefill_ms / f.tr.prefill_ms);
  std::printf("  to_json of that step (ms)       %8.2f  (%.1f MB)\n", f.tr.to_json_ms,
              f.tr.json_bytes / 1e6);
}

}  // namespace glassllm::cli
