// engine.cpp: the inspector page's engine -- GlassLM compiled to WebAssembly
// (scripts/build-wasm.sh, web/CMakeLists.txt) and called from viewer/live.js.
//
// The page has no files and no command line: the model arrives as bytes
// (config.json, glassllm_tokenizer.json, model.safetensors, embedded in the
// page), and results leave as JSON text. Everything else is the library:
// load_checkpoint_from_memory, GlassLM::generate with a Tracer (the same trace,
// format and version as `glassllm trace`), and target_gradients.
//
// A C interface, because Emscripten exports C functions to JavaScript as they
// are (ccall/cwrap); strings are UTF-8, bytes are a pointer and a length into
// the module's memory. A function that fails returns 0 or nullptr and leaves
// one line in glassllm_error().
#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>

#include "glassllm/io/checkpoint.h"
#include "glassllm/trace/target_gradients.h"
#include "glassllm/trace/tracer.h"

#ifdef __EMSCRIPTEN__
#include <emscripten/emscripten.h>
#define GLASSLLM_EXPORT extern "C" EMSCRIPTEN_KEEPALIVE
#else
#define GLASSLLM_EXPORT extern "C"
#endif

namespace {

std::optional<glassllm::Checkpoint> loaded;  // the page's one model
std::string last_error, last_result;         // what the last call left for the page

// Runs `work`, keeping its text in last_result; on an exception keeps its
// message instead and returns nullptr.
template <class Work>
const char* answer(Work&& work) {
  try {
    last_result = work();
    last_error.clear();
    return last_result.c_str();
  } catch (const std::exception& e) {
    last_error = e.what();
    return nullptr;
  }
}

const glassllm::Checkpoint& model_or_throw() {
  if (!loaded) throw std::invalid_argument("no model is loaded");
  if (!loaded->tokenizer)
    throw std::invalid_argument(
        "the model has no glassllm_tokenizer.json; a text prompt needs one");
  return *loaded;
}

std::string token_text(std::int64_t id) {
  return loaded->tokenizer->token_text(id);
}

}  // namespace

/// The message of the last call that failed.
GLASSLLM_EXPORT const char* glassllm_error() {
  return last_error.c_str();
}

/// Loads a model from its files' contents; returns its config.json-like
/// summary as JSON, or nullptr.
GLASSLLM_EXPORT const char* glassllm_load(const char* config_json,
                                          const char* tokenizer_json,
                                          const std::uint8_t* weights, std::size_t size) {
  return answer([&] {
    loaded.reset();  // the old model's memory first: the page has little
    loaded =
        glassllm::load_checkpoint_from_memory(config_json, tokenizer_json, weights, size);
    const glassllm::Config& c = loaded->model.config();
    return "{\"n_layers\":" + std::to_string(c.n_layers) +
           ",\"n_heads\":" + std::to_string(c.n_heads) +
           ",\"n_kv_heads\":" + std::to_string(c.n_kv_heads) +
           ",\"d_model\":" + std::to_string(c.d_model) +
           ",\"max_len\":" + std::to_string(c.max_len) +
           ",\"vocab_size\":" + std::to_string(c.vocab_size) + "}";
  });
}

/// Generates up to `steps` decode steps after the prompt's prefill with a
/// Tracer active, as `glassllm trace --prompt PROMPT --steps STEPS` does, and
/// returns the trace JSON (format glassllm-trace, version 2). temperature 0
/// is greedy (the command line's only choice); above 0 samples with `seed`.
GLASSLLM_EXPORT const char* glassllm_trace(const char* prompt, int steps,
                                           double temperature, double seed) {
  return answer([&] {
    const glassllm::Checkpoint& ckpt = model_or_throw();
    const std::string text(prompt);
    if (text.empty()) throw std::invalid_argument("the prompt is empty");
    if (steps < 0 || steps > 1000)
      throw std::invalid_argument("steps is " + std::to_string(steps) +
                                  "; use 0 to 1000");
    if (!(temperature >= 0 && temperature <= 100))
      throw std::invalid_argument("temperature is " + std::to_string(temperature) +
                                  "; use 0 (greedy) to 100");
    glassllm::Tracer tracer({}, token_text);
    glassllm::GenerateOptions gen;
    gen.max_new_tokens =
        std::size_t(steps) + 1;  // the prefill's token, then one per step
    gen.eos_token_ids = ckpt.eos_token_ids;
    gen.temperature = temperature;
    gen.seed = std::uint64_t(seed);
    gen.on_step = [&](const glassllm::Tensor&, std::int64_t next) {
      tracer.set_next_token(next);
    };
    ckpt.model.generate(ckpt.tokenizer->encode(text), gen);
    return tracer.to_json();
  });
}

/// The loss of `target` after `prompt` (teacher forcing) and its gradient by
/// input position, as target_gradients.h's JSON.
GLASSLLM_EXPORT const char* glassllm_gradients(const char* prompt, const char* target) {
  return answer([&] {
    const glassllm::Checkpoint& ckpt = model_or_throw();
    const glassllm::Tokenizer& tok = *ckpt.tokenizer;
    return glassllm::to_json(glassllm::target_gradients(ckpt.model, tok.encode(prompt),
                                                        tok.encode(target), token_text));
  });
}
