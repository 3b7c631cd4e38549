// copy_head.cpp: lesson 1's copying head in numbers. Traces the bundled
// model on lesson 1's prompt, "C abcXYZ=", and prints for every step where
// head 1 of layer 3 puts its two largest softmax weights, with their raw
// scores (q . k / sqrt(head_dim), before the mask). The answer key of the
// lesson (docs/teaching/answers.md, part 1) quotes it.
//   ./build/examples/copy_head [model folder, default models/demo]
#include <cstdio>
#include <string>
#include <utility>

#include "glassllm/io/checkpoint.h"
#include "glassllm/trace/tracer.h"

using namespace glassllm;

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "models/demo";
  Checkpoint ckpt = load_checkpoint(dir);
  const Tokenizer& tok = *ckpt.tokenizer;

  // doc:begin copy_head
  Tracer tracer({}, &tok);
  GenerateOptions options;
  options.max_new_tokens = 7;  // the prefill's token, then 6 decode steps
  options.eos_token_ids = ckpt.eos_token_ids;
  options.on_step = [&](const Tensor&, std::int64_t next) {
    tracer.set_next_token(next);
  };
  const std::vector<std::int64_t> ids =
      ckpt.model.generate(tok.encode("C abcXYZ="), options);
  auto shown = [&](std::size_t position) {  // the end-of-text token as <eos>
    const std::int64_t id = ids[position];
    return id == tok.eos_id() ? std::string("<eos>") : tok.token_text(id);
  };

  const std::size_t layer = 3, head = 1;
  std::printf(
      "step  query   writes  largest weight: key, p, score   runner-up: key, p, score\n");
  for (const TraceStep& s : tracer.steps()) {
    const Snapshot& probs = s.snapshot("attn.softmax", layer);          // [1, H, rows, m]
    const Snapshot& scores = s.snapshot("attn.scores", layer);          // [1, H, rows, m]
    const std::size_t rows = s.rows_count, m = s.keys, row = rows - 1;  // the last query
    const std::size_t at = (head * rows + row) * m;
    std::size_t best = 0, second = 0;  // the keys of the two largest weights
    for (std::size_t j = 1; j < m; ++j) {
      if (probs.data[at + j] > probs.data[at + best]) {
        second = best;
        best = j;
      } else if (second == best || probs.data[at + j] > probs.data[at + second]) {
        second = j;
      }
    }
    const std::size_t query = s.rows_start + row;
    const std::string step = s.index == 0 ? "P" : "d" + std::to_string(s.index);
    std::printf("%-5s %-2s @%-3zu %-7s", step.c_str(), shown(query).c_str(), query,
                s.next ? shown(query + 1).c_str() : "-");
    for (std::size_t key : {best, second})
      std::printf(" %2s @%-2zu %.2f %5.2f%s", shown(s.key_start + key).c_str(),
                  s.key_start + key, probs.data[at + key], scores.data[at + key],
                  key == best ? "          " : "\n");
  }
  // doc:end copy_head
  return 0;
}
