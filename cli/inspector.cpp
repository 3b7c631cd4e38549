// inspector.cpp: `glassllm inspector --out page.html [DIR]`, the inspector page
// with the WebAssembly engine and a model inside and no trace: open it from
// disk, type a prompt, and the page generates and traces live. Also the page
// writing that `glassllm trace --html` shares: the page with a trace and,
// when it can run it, the model.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "cli/cli.h"
#include "glassllm/io/files.h"

namespace glassllm::cli {

namespace {

// The bytes as base64 (RFC 4648, with padding): the page decodes it with atob.
std::string base64(const std::string& bytes) {
  static const char* alphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    auto byte = [&](std::size_t k) {
      return k < bytes.size() ? std::uint32_t((unsigned char)bytes[k]) : 0u;
    };
    const std::uint32_t n = byte(i) << 16 | byte(i + 1) << 8 | byte(i + 2);
    out += alphabet[(n >> 18) & 63];
    out += alphabet[(n >> 12) & 63];
    out += i + 1 < bytes.size() ? alphabet[(n >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? alphabet[n & 63] : '=';
  }
  return out;
}

// Puts `json` inside the page's empty <script type="application/json"
// id="ID"> element. An HTML parser ends that element at the first "</script"
// and treats "<!--" in it specially, whatever JSON thinks of them; '<' only
// ever occurs inside JSON strings, where \u003c means the same character.
// U+2028 and U+2029 are escaped too, as older JavaScript did not allow them
// in string literals.
void fill_slot(std::string& page, const std::string& id, std::string_view json) {
  const std::string slot = "<script type=\"application/json\" id=\"" + id + "\">";
  const std::size_t at = page.find(slot);
  if (at == std::string::npos)
    throw std::logic_error("the inspector page has no " + id + " element");
  std::string escaped;
  escaped.reserve(json.size() + json.size() / 16);
  for (std::size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (c == '<') {
      escaped += "\\u003c";
    } else if (c == '\xE2' && i + 2 < json.size() && json[i + 1] == '\x80' &&
               (json[i + 2] == '\xA8' || json[i + 2] == '\xA9')) {
      escaped += json[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      escaped += c;
    }
  }
  page.insert(at + slot.size(), escaped);
}

struct InspectorArgs {
  std::string dir;  // "": the bundled model
  std::string out;
};

int inspector(const InspectorArgs& a) {
  if (!viewer_page_has_engine())
    throw std::invalid_argument(
        "this glassllm was built without the WebAssembly engine; run "
        "scripts/build-wasm.sh, then scripts/build.sh");
  const std::string dir = a.dir.empty() ? bundled_model_dir() : a.dir;
  refuse_output_over_inputs("--out", a.out, checkpoint_files(dir));
  // The page's engine runs the same checks; a broken folder is named here, once.
  load_model("inspector", dir, std::nullopt, false);
  const std::string page = inspector_page({}, page_model_json(dir));
  write_file_safely(a.out, page);
  std::printf("wrote %s: the inspector with %s and its engine, %zu bytes\n",
              printable(a.out).c_str(), printable(dir).c_str(), page.size());
  return 0;
}

}  // namespace

std::string inspector_page(std::string_view trace_json, std::string_view model_json) {
  std::string page(viewer_page_template());
  fill_slot(page, "trace", trace_json);
  fill_slot(page, "model", model_json);
  return page;
}

std::string page_model_json(const std::string& dir) {
  namespace fs = std::filesystem;
  const fs::path root(dir);
  auto refuse = [&](const std::string& why) {
    return std::invalid_argument("the page cannot run " + dir + ": " + why);
  };
  if (!viewer_page_has_engine()) throw refuse("this glassllm has no WebAssembly engine");
  std::error_code ec;
  if (!fs::exists(root / "glassllm_tokenizer.json", ec))
    throw refuse(fs::exists(root / "tokenizer.json", ec)
                     ? "its tokenizer.json is a Hugging Face tokenizer, which the page's "
                       "engine does not read (it reads glassllm_tokenizer.json)"
                     : "it has no glassllm_tokenizer.json, and the page needs one");
  const std::string weights = (root / "model.safetensors").string();
  if (!fs::exists(weights, ec))
    throw refuse("it has no model.safetensors (the page takes one file, not shards)");
  const std::uintmax_t size = fs::file_size(weights, ec);
  if (!ec && size > kPageModelLimit)
    throw refuse("model.safetensors is " + std::to_string(size >> 20) +
                 " MiB; a page holds a model of at most " +
                 std::to_string(kPageModelLimit >> 20) + " MiB");
  nlohmann::ordered_json j;
  j["folder"] = root.filename().empty() ? dir : root.filename().string();
  j["config"] =
      read_regular_file((root / "config.json").string(), 1 << 20, "a config file");
  j["tokenizer"] = read_regular_file((root / "glassllm_tokenizer.json").string(),
                                     64 << 20, "a tokenizer file");
  j["weights"] = base64(read_regular_file(weights, kPageModelLimit, "a page's model"));
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string page_model_or_refusal(const std::string& dir) {
  if (!viewer_page_has_engine()) return "";
  try {
    return page_model_json(dir);
  } catch (const std::invalid_argument& e) {
    std::cerr << "glassllm trace: note: the page has no live generation: "
              << printable(e.what()) << "\n";
    return nlohmann::json({{"refused", e.what()}}).dump();
  }
}

Command register_inspector(CLI::App& app) {
  auto a = std::make_shared<InspectorArgs>();
  CLI::App* sub = app.add_subcommand(
      "inspector",
      "Write the inspector as one self-contained .html page that runs the model "
      "itself (WebAssembly): type a prompt, and it generates and traces live, "
      "offline. Needs the engine built (scripts/build-wasm.sh).");
  sub->add_option(
      "dir", a->dir,
      "Checkpoint folder with glassllm_tokenizer.json and a model.safetensors "
      "of at most 16 MiB (default: the bundled model)");
  sub->add_option("--out", a->out, "Output .html file")->required();
  return {sub, [a] { return inspector(*a); }};
}

}  // namespace glassllm::cli
