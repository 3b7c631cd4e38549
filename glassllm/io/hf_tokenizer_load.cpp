// hf_tokenizer_load.cpp: reading a Hugging Face tokenizer.json (and
// tokenizer_config.json) into HFTokenizer::Impl (hf_tokenizer_impl.h). Each
// part is parsed into a small struct; anything unknown is refused by name.
#include <filesystem>
#include <map>

#include "glassllm/io/checkpoint_internal.h"
#include "glassllm/io/files.h"
#include "glassllm/io/hf_tokenizer_impl.h"

namespace glassllm {

void HFTokenizer::Impl::load_model(const json& model) {
  part_type(model, "model", where, {"BPE"});
  require_value(model, "dropout", "BPE", where, {0.0});
  require_value(model, "continuing_subword_prefix", "BPE", where, {""});
  require_value(model, "end_of_word_suffix", "BPE", where, {""});
  byte_fallback = model.value("byte_fallback", false);
  fuse_unk = model.value("fuse_unk", false);
  ignore_merges = model.value("ignore_merges", false);
  if (!model.contains("vocab") || !model["vocab"].is_object())
    throw std::runtime_error(where + ": model \"vocab\" must be an object");
  for (const auto& [token, id] : model["vocab"].items()) {
    if (!id.is_number_integer() || id.get<std::int64_t>() < 0)
      throw std::runtime_error(where + ": model \"vocab\" entry " + json(token).dump() +
                               " has id " + id.dump() + " (must be an integer >= 0)");
    vocab[token] = id.get<std::int64_t>();
    set_token(id.get<std::int64_t>(), token);
  }
  if (!model.contains("merges") || !model["merges"].is_array())
    throw std::runtime_error(where + ": model \"merges\" must be a list");
  std::int64_t rank = 0;
  for (const json& m : model["merges"]) {
    // Two spellings: "a b" (older files) or ["a", "b"] (tokenizers >= 0.20).
    std::string left, right;
    if (m.is_string()) {
      std::string s = m.get<std::string>();
      std::size_t space = s.find(' ');
      if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos)
        throw std::runtime_error(where + ": merge " + std::to_string(rank) + " " +
                                 json(s).dump() +
                                 " is not two tokens separated by a space");
      left = s.substr(0, space);
      right = s.substr(space + 1);
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      left = m[0].get<std::string>();
      right = m[1].get<std::string>();
    } else {
      throw std::runtime_error(where + ": merge " + std::to_string(rank) + " " +
                               m.dump() + " is not a pair of tokens");
    }
    auto l = vocab.find(left), r = vocab.find(right), result = vocab.find(left + right);
    if (l == vocab.end() || r == vocab.end() || result == vocab.end())
      throw std::runtime_error(where + ": merge " + std::to_string(rank) + " (" +
                               json(left).dump() + ", " + json(right).dump() +
                               ") uses a token missing from the vocabulary");
    merges.emplace(pair_key(l->second, r->second), Merge{rank, result->second});
    ++rank;
  }
  if (model.contains("unk_token") && !model["unk_token"].is_null()) {
    std::string unk = model["unk_token"].get<std::string>();
    auto it = vocab.find(unk);
    if (it == vocab.end())
      throw std::runtime_error(where + ": model \"unk_token\" " + json(unk).dump() +
                               " is not in the vocabulary");
    unk_id = it->second;
  }
}

void HFTokenizer::Impl::set_token(std::int64_t id, const std::string& token) {
  if (std::size_t(id) >= id_to_token.size()) id_to_token.resize(std::size_t(id) + 1);
  id_to_token[std::size_t(id)] = token;
}

void HFTokenizer::Impl::load_added_tokens(const json& list) {
  if (list.is_null()) return;
  if (!list.is_array())
    throw std::runtime_error(where + ": \"added_tokens\" must be a list");
  for (const json& t : list) {
    if (!t.is_object() || !t.contains("id") || !t.contains("content"))
      throw std::runtime_error(where + ": added token " + t.dump() +
                               " needs \"id\" and \"content\"");
    AddedToken a{t["content"].get<std::string>(), t["id"].get<std::int64_t>(),
                 t.value("special", false), t.value("lstrip", false),
                 t.value("rstrip", false)};
    if (t.value("single_word", false))
      throw std::runtime_error(where + ": added token " + json(a.content).dump() +
                               " has \"single_word\": true, which is not supported");
    if (a.content.empty() || a.id < 0)
      throw std::runtime_error(where + ": added token " + t.dump() +
                               " needs a non-empty content and an id >= 0");
    set_token(a.id, a.content);
    added.push_back(a);
  }
  std::stable_sort(added.begin(), added.end(),
                   [](const AddedToken& a, const AddedToken& b) {
                     return a.content.size() > b.content.size();
                   });
  special.assign(id_to_token.size(), false);
  for (const AddedToken& a : added) special[std::size_t(a.id)] = a.special;
}

void HFTokenizer::Impl::load_normalizer(const json& n) {
  if (n.is_null()) return;
  std::string type =
      part_type(n, "normalizer", where,
                {"Sequence", "NFC", "NFD", "NFKC", "NFKD", "Prepend", "Replace"});
  UErrorCode status = U_ZERO_ERROR;
  if (type == "Sequence") {
    for (const json& step : n.value("normalizers", json::array())) load_normalizer(step);
  } else if (type == "Prepend") {
    normalizer.push_back({NormalizerStep::prepend, nullptr, n.value("prepend", ""), ""});
  } else if (type == "Replace") {
    normalizer.push_back({NormalizerStep::replace, nullptr,
                          pattern_string(n["pattern"], "normalizer Replace", where),
                          n.value("content", "")});
  } else {
    const icu::Normalizer2* form =
        type == "NFC"    ? icu::Normalizer2::getNFCInstance(status)
        : type == "NFD"  ? icu::Normalizer2::getNFDInstance(status)
        : type == "NFKC" ? icu::Normalizer2::getNFKCInstance(status)
                         : icu::Normalizer2::getNFKDInstance(status);
    if (U_FAILURE(status))
      throw std::runtime_error(where + ": ICU has no " + type +
                               " data: " + u_errorName(status));
    normalizer.push_back({NormalizerStep::unicode_form, form, "", ""});
  }
}

void HFTokenizer::Impl::load_pre_tokenizer(const json& p) {
  if (p.is_null()) return;
  std::string type = part_type(p, "pre_tokenizer", where,
                               {"Sequence", "Split", "ByteLevel", "Digits", "Metaspace"});
  PreTokenizerStep step{};
  if (type == "Sequence") {
    for (const json& s : p.value("pretokenizers", json::array())) load_pre_tokenizer(s);
    return;
  } else if (type == "Split") {
    require_value(p, "behavior", "pre_tokenizer Split", where, {"Isolated"});
    require_value(p, "invert", "pre_tokenizer Split", where, {false});
    step.kind = PreTokenizerStep::split;
    step.regex = pattern_regex(p["pattern"], "pre_tokenizer Split", where);
  } else if (type == "ByteLevel") {
    step.kind = PreTokenizerStep::byte_level;
    step.add_prefix_space = p.value("add_prefix_space", false);
    // GPT-2's own split, used when the ByteLevel step is the only one.
    if (p.value("use_regex", true))
      step.regex = compile_regex(
          R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)",
          "ByteLevel", where);
  } else if (type == "Digits") {
    step.kind = PreTokenizerStep::digits;
    step.regex = compile_regex(
        p.value("individual_digits", false) ? R"(\p{N})" : R"(\p{N}+)", "Digits", where);
  } else {  // Metaspace
    step.kind = PreTokenizerStep::metaspace;
    step.replacement = p.value("replacement", "\u2581");
    step.prepend_scheme = parse_prepend_scheme(p, where);
    step.split_words = p.value("split", true);
    if (split_chars(step.replacement).size() != 1)
      throw std::runtime_error(where +
                               ": Metaspace \"replacement\" must be one character");
  }
  pre_tokenizer.push_back(step);
}

void HFTokenizer::Impl::load_decoder(const json& d) {
  if (d.is_null()) return;
  has_decoder = true;
  std::string type = part_type(
      d, "decoder", where,
      {"Sequence", "ByteLevel", "Metaspace", "Replace", "ByteFallback", "Fuse", "Strip"});
  DecoderStep step{};
  if (type == "Sequence") {
    for (const json& s : d.value("decoders", json::array())) load_decoder(s);
    return;
  } else if (type == "ByteLevel") {
    step.kind = DecoderStep::byte_level;
  } else if (type == "Metaspace") {
    step.kind = DecoderStep::metaspace;
    step.replacement = d.value("replacement", "\u2581");
    step.prepend_scheme = parse_prepend_scheme(d, where);
  } else if (type == "Replace") {
    step.kind = DecoderStep::replace;
    step.text = pattern_string(d["pattern"], "decoder Replace", where);
    step.content = d.value("content", "");
  } else if (type == "ByteFallback") {
    step.kind = DecoderStep::byte_fallback;
  } else if (type == "Fuse") {
    step.kind = DecoderStep::fuse;
  } else {  // Strip
    step.kind = DecoderStep::strip;
    step.content = d.value("content", " ");
    step.start = d.value("start", std::size_t(0));
    step.stop = d.value("stop", std::size_t(0));
  }
  decoder.push_back(step);
}

void HFTokenizer::Impl::load_post_processor(const json& p) {
  if (p.is_null()) return;
  std::string type = part_type(p, "post_processor", where,
                               {"Sequence", "ByteLevel", "TemplateProcessing"});
  if (type == "Sequence") {
    for (const json& s : p.value("processors", json::array())) load_post_processor(s);
  } else if (type == "TemplateProcessing") {
    // Only "single" matters: we never encode pairs of sequences.
    Template t;
    for (const json& item : p.value("single", json::array())) {
      if (item.contains("Sequence")) {
        t.push_back(-1);
      } else if (item.contains("SpecialToken")) {
        std::string name = item["SpecialToken"].value("id", "");
        const json& specials = p.value("special_tokens", json::object());
        if (!specials.contains(name) || !specials[name].contains("ids"))
          throw std::runtime_error(where + ": post_processor template token " +
                                   json(name).dump() + " is not in \"special_tokens\"");
        for (const json& id : specials[name]["ids"]) t.push_back(id.get<std::int64_t>());
      } else {
        throw std::runtime_error(where + ": post_processor template item " + item.dump() +
                                 " is neither a Sequence nor a SpecialToken");
      }
    }
    template_single = t;
  }
  // ByteLevel as a post-processor only trims offsets, which we do not report.
}

void HFTokenizer::Impl::load_config(const json& config, const std::string& config_where) {
  auto id_of = [&](const std::string& key) -> std::optional<std::int64_t> {
    auto name = token_string(config, key, config_where);
    if (!name) return std::nullopt;
    auto id = find_id(*name);
    if (!id)
      throw std::runtime_error(config_where + ": \"" + key + "\" " + json(*name).dump() +
                               " is not a token of tokenizer.json");
    return id;
  };
  bos = id_of("bos_token");
  eos = id_of("eos_token");
  add_bos = config.value("add_bos_token", false);
  add_eos = config.value("add_eos_token", false);
  if (add_bos && !bos)
    throw std::runtime_error(config_where +
                             ": \"add_bos_token\" is true but there is no \"bos_token\"");
  if (add_eos && !eos)
    throw std::runtime_error(config_where +
                             ": \"add_eos_token\" is true but there is no \"eos_token\"");
}

std::optional<std::int64_t> HFTokenizer::Impl::find_id(const std::string& token) const {
  for (const AddedToken& a : added)
    if (a.content == token) return a.id;
  auto it = vocab.find(token);
  if (it != vocab.end()) return it->second;
  return std::nullopt;
}
HFTokenizer HFTokenizer::load(const std::string& dir) {
  namespace fs = std::filesystem;
  std::string tokenizer_path = (fs::path(dir) / "tokenizer.json").string();
  std::string config_path = (fs::path(dir) / "tokenizer_config.json").string();
  if (!fs::exists(tokenizer_path))
    throw std::runtime_error(tokenizer_path +
                             ": no such file (a Hugging Face tokenizer)");
  // A large vocabulary's tokenizer.json is tens of MB; a bigger file is not one.
  constexpr std::uint64_t kMaxBytes = 256ull << 20;
  std::string config = fs::exists(config_path)
                           ? read_regular_file(config_path, kMaxBytes, "a tokenizer file")
                           : "";
  return from_json(read_regular_file(tokenizer_path, kMaxBytes, "a tokenizer file"),
                   config, dir);
}

}  // namespace glassllm
