// training_step.cpp: one training step on a tiny model: a batch of the copy
// task, then train_step (the loss, backward, gradient clipping, one AdamW
// update), and the loss after it. Quoted by docs/08-training.md; `glassllm
// train` calls the same train_step at every step (glassllm/train/train.cpp).
#include <cstdio>

#include "glassllm/fast/blas.h"
#include "glassllm/glassllm.h"
#include "glassllm/model/model.h"
#include "glassllm/train/optim.h"
#include "glassllm/train/tasks.h"
#include "glassllm/train/train.h"

using namespace glassllm;

int main() {
  set_blas_threads(1);  // the same digits on every machine with this library

  // doc:begin batch
  Tokenizer tok;
  auto task = make_task("copy", tok);
  std::mt19937_64 rng(0);
  Example e = task->sample(rng);
  std::printf("one example: %s", e.text.c_str());
  std::printf("predictable: \"%s\" + newline (characters %zu..%zu)\n", e.answer().c_str(),
              e.answer_begin, e.answer_end - 1);

  // Rows of 40 tokens packed with whole examples; targets are -100 except
  // where the next token is predictable.
  Batch batch = make_batch(*task, tok, /*seed=*/0, /*step=*/0, /*batch_size=*/8,
                           /*max_len=*/40, Split::train);
  std::string row = tok.decode(batch.tokens[0]);
  for (std::size_t at; (at = row.find('\n')) != std::string::npos;)
    row.replace(at, 1, "\\n");
  std::printf("row 0: %s\n", row.c_str());
  std::printf("counted targets: %zu of %zu\n", batch.counted(), 8 * std::size_t(40));
  // doc:end batch

  // doc:begin step
  Config cfg;
  cfg.vocab_size = tok.vocab_size();
  cfg.d_model = 32;
  cfg.n_layers = 2;
  cfg.n_heads = 4;
  cfg.n_kv_heads = 2;
  cfg.d_ff = 64;
  cfg.max_len = 40;
  GlassLM model(cfg, /*seed=*/0);
  // AdamW's other settings: beta1 0.9, beta2 0.95, eps 1e-8, weight_decay 0.1.
  AdamW opt(model.named_parameters(), /*lr=*/1e-2);
  Tensor w = model.parameter("model.layers.0.self_attn.q_proj.weight");
  double before = w.at({0, 0});

  // One step, the one `glassllm train` takes each time (train.h):
  //   1. loss = model.loss(tokens, targets): the mean cross-entropy over the
  //      counted targets, from one full forward;
  //   2. loss.backward(): the gradients of every weight;
  //   3. clip_grad_norm: if their global norm exceeds 0.5, every gradient is
  //      scaled down to norm 0.5;
  //   4. opt.step(), then opt.zero_grad(): one AdamW update, in place.
  StepResult step = train_step(model, opt, batch, /*clip=*/0.5);
  std::printf("loss before: %.4f (ln 98 = 4.5850: every token equally likely)\n",
              step.loss);
  std::printf("gradient norm: %.4f before clipping to 0.5\n", step.grad_norm);
  std::printf(
      "q_proj[0,0]: %+.6f -> %+.6f (the first Adam step moves each weight by about lr)\n",
      before, w.at({0, 0}));
  // The same batch again.
  std::printf("loss after: %.4f\n", model.loss(batch.tokens, batch.targets).item());
  // doc:end step
}
