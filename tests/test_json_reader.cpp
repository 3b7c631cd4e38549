// Tests for json_reader.h: the nesting limit, the size of what messages
// show, and messages that say where (line, column, JSON path) and what, in
// our words. Positions and paths below are counted by hand in the texts.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "glassllm/io/checkpoint.h"
#include "glassllm/io/files.h"
#include "glassllm/io/hf_tokenizer.h"
#include "glassllm/io/json_reader.h"
#include "glassllm/io/tokenizer.h"

using glassllm::json_path;
using glassllm::json_preview;
using glassllm::kMaxJsonDepth;
using glassllm::parse_json_bounded;
using nlohmann::json;
using nlohmann::ordered_json;

namespace {

std::string nested_lists(std::size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

template <class J = ordered_json>
std::string error_of(const std::string& text) {
  try {
    parse_json_bounded<J>(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(parsed)";
}

}  // namespace

TEST_CASE("json_reader: nesting up to the limit parses, one level more is refused") {
  CHECK(kMaxJsonDepth == 256);
  ordered_json j = parse_json_bounded<ordered_json>(nested_lists(256));
  std::size_t depth = 0;
  for (const ordered_json* v = &j; v->is_array(); v = v->empty() ? nullptr : &(*v)[0]) {
    ++depth;
    if (v->empty()) break;
  }
  CHECK(depth == 256);
  // 257 lists: the 257th opens inside 256 lists, each at index 0.
  std::string path;
  for (int i = 0; i < 256; ++i) path += "[0]";
  const std::string msg = error_of(nested_lists(257));
  CHECK(msg.rfind("nesting deeper than 256 levels at " + path.substr(0, 120) + "...",
                  0) == 0);
  CHECK(msg.find("; at most 256 are allowed") != std::string::npos);
}

TEST_CASE("json_reader: 100,000 levels followed by a key neither crash nor recurse") {
  // The shape that overflowed the stack: a deep value, then another key
  // (which made the ordered map copy the deep value).
  std::string deep =
      "{\"a\": " + std::string(100000, '[') + std::string(100000, ']') + ", \"b\": 1}";
  CHECK(error_of(deep).rfind("nesting deeper than 256 levels at a[0][0]", 0) == 0);
  std::string objects;
  for (int i = 0; i < 100000; ++i) objects += "{\"k\": ";
  objects += "1" + std::string(100000, '}');
  CHECK(error_of<json>(objects).rfind("nesting deeper than 256 levels at k.k.k.k", 0) ==
        0);
}

TEST_CASE("json_reader: syntax errors give the line, column, path and what was found") {
  // Line 2 is `  "a": }`: the '}' is its 8th character.
  CHECK(error_of("{\n  \"a\": }") ==
        "invalid JSON at line 2, column 8 (in a): unexpected '}'");
  CHECK(error_of("{\"m\": [1, 2, tru") ==
        "invalid JSON at line 1, column 17 (in m[2]): unexpected end of the text "
        "(the text stops before the JSON value is complete)");
  CHECK(error_of("[1E400]") ==
        "invalid JSON (in [0]): a number too large for a 64-bit float");
  CHECK(error_of("\x01") == "invalid JSON at line 1, column 1: unexpected byte 0x01");
}

TEST_CASE("json_reader: a repeated key is refused with the object's path") {
  CHECK(error_of("{\"model\": {\"vocab\": {\"a\": 1, \"a\": 2}}}") ==
        "duplicate key \"a\" in model.vocab");
  CHECK(error_of<json>("{\"x\": 1, \"x\": 1}") == "duplicate key \"x\"");
  // The same key in two objects is fine.
  CHECK(parse_json_bounded<json>("[{\"x\": 1}, {\"x\": 2}]")[1]["x"] == 2);
}

TEST_CASE("json_reader: paths and previews for messages") {
  CHECK(json_path("model", "merges") == "model.merges");
  CHECK(json_path(json_path("model", "merges"), 3) == "model.merges[3]");
  CHECK(json_path("", "vocab") == "vocab");
  CHECK(json_path("model.vocab", "a b") == "model.vocab[\"a b\"]");
  CHECK(json_preview(json("a\x1b[31m\"")) == "\"a\\u001B[31m\\\"\"");
  CHECK(json_preview(json(std::string(100, 'x'))) ==
        "\"" + std::string(60, 'x') + "...\"");
  // A cut never splits a character: 30 two-byte characters and one more.
  std::string e_acute;
  for (int i = 0; i < 31; ++i) e_acute += "\xC3\xA9";
  CHECK(json_preview(json(e_acute)) == "\"" + e_acute.substr(0, 60) + "...\"");
  CHECK(json_preview(json::array({1, 2})) == "a list of 2 items");
  CHECK(json_preview(json::object({{"a", 1}})) == "an object of 1 key");
  CHECK(json_preview(json(-5)) == "-5");
}

TEST_CASE("json_reader: read_json_file names the file and refuses what is not one") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "glassllm_json_reader_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string file = (dir / "c.json").string();
  std::ofstream(file) << "{\"a\": [1,]}";
  try {
    glassllm::read_json_file(file, 1 << 20, "a config file");
    FAIL("parsed");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()) ==
          file + ": invalid JSON at line 1, column 10 (in a[1]): unexpected ']'");
  }
  CHECK_THROWS_WITH(
      glassllm::read_json_file(dir.string(), 1 << 20, "a config file"),
      (dir.string() + ": cannot read: it is a folder; expected a regular file").c_str());
  CHECK_THROWS_WITH(
      glassllm::read_json_file(file, 4, "a config file"),
      (file + ": cannot read: 11 bytes, more than the 4 a config file may have").c_str());
  fs::remove_all(dir);
}

TEST_CASE("json_reader: every fuzz seed is refused or read, with a one-line message") {
  // The fuzz targets' seeds (fuzz/run.sh), deep-nesting and long-string ones
  // included, through the readers the targets call: each gives a value or a
  // one-line message of ours, never a crash or the library's text.
  namespace fs = std::filesystem;
  const fs::path data(GLASSLLM_TEST_DATA);
  std::size_t seeds = 0;
  auto check_message = [](const std::string& msg) {
    CHECK(msg.find('\n') == std::string::npos);
    CHECK(msg.find("json.exception") == std::string::npos);
  };
  for (const char* corpus :
       {"fuzz/config", "fuzz/tokenizer", "fuzz/hf_tokenizer", "checkpoint_corpus"}) {
    for (const auto& entry : fs::directory_iterator(data / corpus)) {
      const std::string path = entry.path().string();
      const std::string text = glassllm::read_regular_file(path);
      CAPTURE(path);
      ++seeds;
      try {
        if (entry.path().extension() == ".safetensors")
          glassllm::read_safetensors(path);
        else if (std::string(corpus) == "fuzz/hf_tokenizer")
          glassllm::HFTokenizer::from_json(text, "", "seed");
        else if (std::string(corpus) == "fuzz/tokenizer")
          glassllm::Tokenizer::from_json(text);
        else
          glassllm::config_from_json(text);
      } catch (const std::exception& e) {
        check_message(e.what());
      }
    }
  }
  CHECK(seeds > 40);
}
