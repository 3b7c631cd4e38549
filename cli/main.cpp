// main.cpp: the `glassllm` command-line tool. It only parses arguments (this
// is the one file that includes CLI11, the slowest header to compile) and
// calls the subcommand functions declared in cli.h. Any error is printed as
// one line on stderr with a non-zero exit status.
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>

#include "cli/cli.h"

namespace {

// Model-size flags shared by the commands that build a model.
void add_size_flags(CLI::App* app, glassllm::cli::InitArgs& a) {
  app->add_option("--vocab-size", a.vocab_size,
                  "Vocabulary size (default: the character tokenizer's)");
  app->add_option("--d-model", a.d_model, "Residual width")->capture_default_str();
  app->add_option("--n-layers", a.n_layers, "Transformer blocks")->capture_default_str();
  app->add_option("--n-heads", a.n_heads, "Query heads")->capture_default_str();
  app->add_option("--n-kv-heads", a.n_kv_heads, "Key/value heads (must divide --n-heads)")
      ->capture_default_str();
  app->add_option("--d-ff", a.d_ff, "Hidden width of the MLP")->capture_default_str();
  app->add_option("--max-len", a.max_len, "Longest window")->capture_default_str();
}

}  // namespace

int main(int argc, char** argv) {
  namespace cli = glassllm::cli;
  CLI::App app{
      "GlassLM: a small transformer and the autograd engine under it, made to be "
      "looked through."};
  app.require_subcommand(1);
  const std::string attention_help = "K/V sharing path: repeat_kv or grouped";

  cli::GradcheckArgs gradcheck;
  auto* gc = app.add_subcommand(
      "gradcheck",
      "Compare every op's backward with central finite differences in float64; "
      "exits non-zero if any check fails.");
  gc->add_option("--op", gradcheck.op, "Check only this op (e.g. softmax)");
  gc->add_option("--eps", gradcheck.eps, "Finite-difference step")->capture_default_str();
  gc->add_option("--atol", gradcheck.atol, "Absolute tolerance")->capture_default_str();
  gc->add_option("--rtol", gradcheck.rtol, "Relative tolerance")->capture_default_str();

  cli::InitArgs init;
  auto* in =
      app.add_subcommand("init", "Write a randomly initialised checkpoint folder.");
  in->add_option("--out", init.out, "Checkpoint folder to write")->required();
  add_size_flags(in, init);
  in->add_option("--seed", init.seed, "Initialisation seed")->capture_default_str();
  in->add_option("--dtype", init.dtype, "float32 or float64")->capture_default_str();

  cli::ForwardArgs fwd;
  auto* fw = app.add_subcommand("forward",
                                "Write the logits [1, T, vocab] of token ids as .npy.");
  fw->add_option("dir", fwd.dir, "Checkpoint folder")->required();
  fw->add_option("--tokens", fwd.tokens, "Token ids, e.g. 4,5,6")->required();
  fw->add_option("--out", fwd.out, "Output .npy file")->required();
  fw->add_option("--attention", fwd.attention, attention_help)->capture_default_str();
  fw->add_option("--dtype", fwd.dtype, "Convert the weights to float32 or float64");

  cli::GradsArgs grads;
  auto* gr = app.add_subcommand(
      "grads",
      "Write the gradient of the mean cross-entropy w.r.t. every weight, by name.");
  gr->add_option("dir", grads.dir, "Checkpoint folder")->required();
  gr->add_option("--tokens", grads.tokens, "Token ids, e.g. 4,5,6")->required();
  gr->add_option("--targets", grads.targets, "One target id per token (-100: ignored)")
      ->required();
  gr->add_option("--out", grads.out, "Output .safetensors file")->required();
  gr->add_option("--attention", grads.attention, attention_help)->capture_default_str();
  gr->add_option("--dtype", grads.dtype, "Convert the weights to float32 or float64");

  cli::CheckArgs check;
  auto* ck = app.add_subcommand(
      "check",
      "Run the model's equivalence checks in float64 (incremental == full, repeat_kv == "
      "grouped, concat == preallocated cache, gradient check); non-zero exit on "
      "failure.");
  ck->add_option("dir", check.dir, "Checkpoint folder")->required();
  ck->add_option("--prompt-len", check.prompt_len, "Tokens prefilled")
      ->capture_default_str();
  ck->add_option("--steps", check.steps, "Decode steps compared")->capture_default_str();

  cli::GenerateArgs gen;
  auto* ge = app.add_subcommand("generate", "Continue a text prompt.");
  ge->add_option("dir", gen.dir, "Checkpoint folder (with its tokenizer)")->required();
  ge->add_option("--prompt", gen.prompt, "Text to continue")->required();
  ge->add_option("--max-new-tokens", gen.max_new_tokens, "Tokens to generate")
      ->capture_default_str();
  ge->add_option("--temperature", gen.temperature, "0: greedy; > 0: sample")
      ->capture_default_str();
  ge->add_option("--top-k", gen.top_k, "Sample among the k most likely tokens (0: all)")
      ->capture_default_str();
  ge->add_option("--seed", gen.seed, "Sampling seed")->capture_default_str();
  ge->add_option("--attention", gen.attention, attention_help)->capture_default_str();
  ge->add_option("--cache", gen.cache, "concat or preallocated")->capture_default_str();

  cli::TraceArgs trace;
  auto* tc = app.add_subcommand(
      "trace",
      "Generate from a prompt and record every step (tokens, per-layer attention "
      "snapshots, top-k, cache, op graph) as JSON for the inspector.");
  tc->add_option("dir", trace.dir, "Checkpoint folder (default: the bundled model)");
  tc->add_option("--prompt", trace.prompt, "Text to continue")->required();
  tc->add_option("--out", trace.out, "Output .json file");
  tc->add_option("--html", trace.html,
                 "Also (or instead) write the inspector as one self-contained .html page "
                 "holding the trace");
  tc->add_option("--steps", trace.steps, "Decode steps after the prefill")
      ->capture_default_str();
  tc->add_option("--attention", trace.attention, attention_help)->capture_default_str();
  tc->add_flag("--grads", trace.grads,
               "Also record d log p(next token) / d snapshot for every snapshot");
  tc->add_option("--layers", trace.layers, "Blocks to snapshot, e.g. 0,3 (default: all)");
  tc->add_option("--heads", trace.heads,
                 "Query heads to snapshot, e.g. 0,2 (default: all)");
  tc->add_option("--precision", trace.precision, "Significant digits (0: exact)")
      ->capture_default_str();
  tc->add_option("--top-k", trace.top_k, "Next-token candidates per step")
      ->capture_default_str();

  cli::MemoryArgs mem;
  auto* me = app.add_subcommand(
      "memory",
      "Bytes one decode step moves: the K/V cache, and what repeat_kv copies on each "
      "K/V path (counted on a recorded decode step).");
  me->add_option("--preset", mem.preset, "A model shape: exaone-4.0-1.2b");
  me->add_option("--n-layers", mem.n_layers, "Transformer blocks")->capture_default_str();
  me->add_option("--n-heads", mem.n_heads, "Query heads")->capture_default_str();
  me->add_option("--n-kv-heads", mem.n_kv_heads, "Key/value heads")
      ->capture_default_str();
  me->add_option("--head-dim", mem.head_dim, "Head dimension")->capture_default_str();
  me->add_option("--ctx", mem.ctx,
                 "Positions in the cache (default: the preset's, else 128)");
  me->add_option("--dtype", mem.dtype, "float16, float32 or float64")
      ->capture_default_str();

  cli::BenchArgs bench;
  auto* be = app.add_subcommand(
      "bench",
      "Measure ops, matrix products and the model (prefill, decode, training step).");
  be->add_flag("--json", bench.json, "Print one flat JSON object of named figures");
  be->add_option("--runs", bench.runs,
                 "Repetitions per figure (default: each one's own)");

  cli::TrainArgs tr;
  auto* ta = app.add_subcommand(
      "train",
      "Train a model on a synthetic task or a text file, with checkpoints, held-out "
      "evaluation and --resume. Ctrl-C saves and exits (status 130).");
  ta->add_option("--task", tr.task, "copy, reverse, sort, add, mix or text:FILE");
  ta->add_option("--out", tr.out,
                 "The run's folder (a checkpoint plus optimizer state and metrics)")
      ->required();
  ta->add_flag("--resume", tr.resume,
               "Continue the run in --out; flags given override its saved options");
  ta->add_option("--steps", tr.steps, "Total optimizer steps (default 2000)");
  ta->add_option("--batch-size", tr.batch_size, "Rows per step (default 16)");
  ta->add_option("--lr", tr.lr, "Peak learning rate (default 1e-3)");
  ta->add_option("--warmup", tr.warmup, "Linear warm-up steps (default 100)");
  ta->add_option("--min-lr-ratio", tr.min_lr_ratio,
                 "Cosine decays to lr * this (default 0.1)");
  ta->add_option("--optimizer", tr.optimizer, "adamw or sgd (default adamw)");
  ta->add_option("--weight-decay", tr.weight_decay,
                 "AdamW decoupled decay; SGD L2 (default 0.1)");
  ta->add_option("--momentum", tr.momentum, "SGD momentum (default 0.9)");
  ta->add_option("--clip", tr.clip, "Max global gradient norm, <= 0: off (default 1)");
  ta->add_option("--seed", tr.seed, "Initialisation and data seed (default 0)");
  ta->add_option("--dtype", tr.dtype, "float32 or float64 (default float32)");
  ta->add_option("--log-every", tr.log_every, "Metrics line every N steps (default 10)");
  ta->add_option("--eval-every", tr.eval_every,
                 "Held-out evaluation every N steps (default 100)");
  ta->add_option("--eval-batches", tr.eval_batches,
                 "Held-out batches per evaluation (default 4)");
  ta->add_option("--save-every", tr.save_every, "Checkpoint every N steps (default 500)");
  ta->add_option("--d-model", tr.d_model, "Residual width (default 128)");
  ta->add_option("--n-layers", tr.n_layers, "Transformer blocks (default 4)");
  ta->add_option("--n-heads", tr.n_heads, "Query heads (default 4)");
  ta->add_option("--n-kv-heads", tr.n_kv_heads, "Key/value heads (default 2)");
  ta->add_option("--d-ff", tr.d_ff, "Hidden width of the MLP (default 384)");
  ta->add_option("--max-len", tr.max_len, "Tokens per row (default 128)");
  ta->add_option("--threads", tr.threads,
                 "BLAS threads (default: GLASSLLM_THREADS or every core)");

  cli::EvalArgs ev;
  auto* ea = app.add_subcommand(
      "eval", "Print a checkpoint's held-out loss and exact-match accuracy.");
  ea->add_option("dir", ev.dir, "Checkpoint folder")->required();
  ea->add_option("--task", ev.task, "Task (default: the run's)");
  ea->add_option("--seed", ev.seed, "Data seed (default: the run's, else 0)");
  ea->add_option("--batches", ev.batches, "Held-out batches")->capture_default_str();
  ea->add_option("--batch-size", ev.batch_size, "Rows per batch")->capture_default_str();
  ea->add_option("--threads", ev.threads, "BLAS threads");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  try {
    if (*gc) return cli::gradcheck(gradcheck);
    if (*in) return cli::init(init);
    if (*fw) return cli::forward(fwd);
    if (*gr) return cli::grads(grads);
    if (*ck) return cli::check(check);
    if (*ge) return cli::generate(gen);
    if (*be) return cli::bench(bench);
    if (*ta) return cli::train(tr);
    if (*ea) return cli::eval(ev);
    if (*tc) return cli::trace(trace);
    if (*me) return cli::memory(mem);
  } catch (const std::exception& e) {
    std::cerr << "glassllm: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
