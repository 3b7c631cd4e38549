// figures.h (private): every figure `glassllm bench` measures (bench.cpp)
// and the printers that show them as tables or one JSON object
// (bench_print.cpp).
#pragma once

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/bench.h"
#include "glassllm/fast/blas.h"
#include "glassllm/fast/gemm_choice.h"

namespace glassllm::cli {

struct Row {
  std::string key, label, dtype;
  int threads;
  double op_gflops, gemm_gflops;
};

// One shape through gemm() on the backend, on the built-in GEMM, and on the
// path chosen for its kind (`used`), GFLOP/s.
struct BackendRow {
  std::string key, label, dtype, kind, used;
  double backend_gflops, builtin_gflops, default_gflops;
  // The default's time over the faster of the two: 1 when the choice is right.
  double default_over_best() const {
    return std::max(backend_gflops, builtin_gflops) / default_gflops;
  }
};

struct ModelFigures {
  std::string dtype;
  double prefill_ms = 0;         // 128 tokens, batch 1, no cache
  double decode_concat_tps = 0;  // tokens/s over 120 decode steps
  double decode_preallocated_tps = 0;
  double decode_grouped_tps = 0;  // concat cache, grouped K/V path
  double train_step_ms = 0;       // forward + backward, batch 16 x 128
  double train_tokens_per_s = 0;
  double train_gflops = 0;         // the step's matmul FLOPs / its time
  double gemm_ceiling_gflops = 0;  // raw GEMM at the MLP's shape, same run
  double train_fraction = 0;  // median over pairs of (step GFLOP/s / ceiling right after)
  double train_step_ms_1thread = 0;  // the same with one BLAS thread
  double train_gflops_1thread = 0;
  double gemm_ceiling_gflops_1thread = 0;
  double train_fraction_1thread = 0;
};

// Every figure `glassllm bench` reports.
struct Figures {
  std::vector<std::string> groups;  // those measured
  BlasInfo info;
  gemm_choice::Choice choice;  // which GEMM each kind of product runs
  int overhead_runs = 201, overhead_inner = 1000, gemm_runs = 31;
  double add_no_grad_us = 0, add_tape_us = 0;
  std::vector<Row> rows;
  std::vector<BackendRow> backend_rows;
  std::vector<ModelFigures> models;
  AttentionFigures att;
  TracerFigures tr;
  ContentionFigures busy;
  DecodeFigures dec;
};

// Whether `group` is among `groups` (the groups measured, or asked for).
bool has(const std::vector<std::string>& groups, const char* group);

/// One flat JSON object of named figures (`glassllm bench --json`).
void print_json(const Figures& f);
/// The backend, the per-op overhead and the matrix-product tables.
void print_ops(const Figures& f);
/// The model's prefill, decode and training-step table.
void print_model(const Figures& f);
/// Attention at the exaone-4.0-1.2b shape, and the tracer's cost.
void print_attention_and_tracer(const Figures& f);
/// The model beside a busy thread.
void print_contention(const Figures& f);

}  // namespace glassllm::cli
