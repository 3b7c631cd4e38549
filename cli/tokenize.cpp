// tokenize.cpp: `glassllm tokenize`, a Hugging Face tokenizer.json folder's
// encoding and decoding on the command line.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/cli.h"
#include "glassllm/io/files.h"
#include "glassllm/io/hf_tokenizer.h"
#include "glassllm/io/json_reader.h"

namespace glassllm::cli {

namespace {

// A --jsonl file larger than this is not a list of texts to tokenize.
constexpr std::uint64_t kMaxJsonlBytes = 256ull << 20;

struct TokenizeArgs {
  std::string dir, text, ids, jsonl;
  bool no_special = false, skip_special = false;
};

std::string join_ids(const std::vector<std::int64_t>& ids) {
  std::string out;
  for (std::size_t i = 0; i < ids.size(); ++i)
    out += (i ? "," : "") + std::to_string(ids[i]);
  return out;
}

int tokenize(const TokenizeArgs& a) {
  int given = !a.text.empty() + !a.ids.empty() + !a.jsonl.empty();
  if (given != 1)
    throw std::invalid_argument(
        "tokenize: give exactly one of --text, --ids and --jsonl (got " +
        std::to_string(given) + ")");
  HFTokenizer tok = HFTokenizer::load(a.dir);
  if (!a.text.empty()) {
    std::cout << join_ids(tok.encode(a.text, !a.no_special)) << "\n";
  } else if (!a.ids.empty()) {
    // A token can hold any bytes (ESC, BEL, ...): printed escaped, so a
    // tokenizer cannot move the cursor or retitle the terminal.
    std::cout << printable(tok.decode(parse_ids(a.ids, "--ids"), a.skip_special), true)
              << "\n";
  } else {
    // One JSON string per line in, one {"ids": [...], "text": ...} per line
    // out: many texts for one load of the tokenizer (the parity test's way).
    // Read as every input is: a regular file of bounded size (a FIFO, a
    // folder or /dev/zero is refused before it is read).
    std::istringstream in(
        read_regular_file(a.jsonl, kMaxJsonlBytes, "a JSON-lines file"));
    std::string line;
    for (std::size_t n = 1; std::getline(in, line); ++n) {
      nlohmann::json text;
      try {
        text = parse_json_bounded<nlohmann::json>(line);
      } catch (const std::invalid_argument& e) {
        throw std::runtime_error(a.jsonl + ": line " + std::to_string(n) + ": " +
                                 e.what());
      }
      if (!text.is_string())
        throw std::runtime_error(a.jsonl + ": line " + std::to_string(n) + " is " +
                                 json_preview(text) + ", expected a JSON string");
      std::vector<std::int64_t> ids = tok.encode(text.get<std::string>(), !a.no_special);
      nlohmann::json out = {{"ids", ids}, {"text", tok.decode(ids, true)}};
      std::cout << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                << "\n";
    }
  }
  return 0;
}

}  // namespace

Command register_tokenize(CLI::App& app) {
  auto args = std::make_shared<TokenizeArgs>();
  CLI::App* sub = app.add_subcommand(
      "tokenize",
      "Encode text to token ids, or decode ids to text, with a Hugging Face "
      "tokenizer.json (and tokenizer_config.json) folder.");
  sub->add_option("dir", args->dir, "Folder with tokenizer.json")->required();
  sub->add_option("--text", args->text, "Text to encode; prints ids like 1,2,3");
  sub->add_option("--ids", args->ids, "Ids to decode, e.g. 1,2,3; prints the text");
  sub->add_option("--jsonl", args->jsonl,
                  "File of JSON strings, one per line; prints {\"ids\": [...], \"text\": "
                  "decoded without special tokens} per line");
  sub->add_flag("--no-special", args->no_special,
                "Encode without the special tokens the tokenizer adds (e.g. BOS)");
  sub->add_flag("--skip-special", args->skip_special,
                "Decode without the special tokens (BOS, EOS, ...)");
  return {sub, [args] { return tokenize(*args); }};
}

}  // namespace glassllm::cli
