// hf_tokenizer_load.cpp: reading a Hugging Face tokenizer.json (and
// tokenizer_config.json) into HFTokenizer::Impl (hf_tokenizer_impl.h). Each
// part is parsed into a small struct; anything unknown is refused by name.
#include <filesystem>
#include <map>

#include "glassllm/io/checkpoint_internal.h"
#include "glassllm/io/files.h"
#include "glassllm/io/hf_tokenizer_impl.h"

namespace glassllm {

// ---- optional fields, checked for their type ----

namespace {

std::runtime_error wrong_type(const std::string& where, const std::string& field,
                              const json& v, const char* expected) {
  return std::runtime_error(where + ": " + field + " is " + json_preview(v) +
                            ", expected " + expected);
}

}  // namespace

bool HFTokenizer::Impl::flag(const json& part, const std::string& key, bool fallback,
                             const std::string& path) const {
  if (!part.contains(key) || part[key].is_null()) return fallback;
  if (!part[key].is_boolean())
    throw wrong_type(where, json_path(path, key), part[key], "true or false");
  return part[key].get<bool>();
}

std::string HFTokenizer::Impl::text(const json& part, const std::string& key,
                                    const std::string& fallback,
                                    const std::string& path) const {
  if (!part.contains(key) || part[key].is_null()) return fallback;
  if (!part[key].is_string())
    throw wrong_type(where, json_path(path, key), part[key], "a string");
  return part[key].get<std::string>();
}

std::size_t HFTokenizer::Impl::count(const json& part, const std::string& key,
                                     const std::string& path) const {
  if (!part.contains(key) || part[key].is_null()) return 0;
  const json& v = part[key];
  if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<std::int64_t>() < 0))
    throw wrong_type(where, json_path(path, key), v, "an integer >= 0");
  return v.get<std::size_t>();
}

const json& HFTokenizer::Impl::list(const json& part, const std::string& key,
                                    const std::string& path) const {
  static const json empty = json::array();
  if (!part.contains(key) || part[key].is_null()) return empty;
  if (!part[key].is_array())
    throw wrong_type(where, json_path(path, key), part[key], "a list");
  return part[key];
}

const json& HFTokenizer::Impl::sequence(const json& part, const std::string& key,
                                        const std::string& path, int depth) const {
  if (depth >= kMaxSequenceDepth)
    throw std::runtime_error(where + ": " + path + ": Sequences nested more than " +
                             std::to_string(kMaxSequenceDepth) + " deep; at most " +
                             std::to_string(kMaxSequenceDepth) + " are allowed");
  return list(part, key, path);
}

// ---- the model ----

void HFTokenizer::Impl::load_model(const json& model) {
  part_type(model, "model", where, {"BPE"});
  require_value(model, "dropout", "BPE", where, {0.0});
  require_value(model, "continuing_subword_prefix", "BPE", where, {""});
  require_value(model, "end_of_word_suffix", "BPE", where, {""});
  byte_fallback = flag(model, "byte_fallback", false, "model");
  fuse_unk = flag(model, "fuse_unk", false, "model");
  ignore_merges = flag(model, "ignore_merges", false, "model");
  if (!model.contains("vocab") || !model["vocab"].is_object())
    throw std::runtime_error(where + ": model \"vocab\" must be an object");
  load_vocab(model["vocab"]);
  if (!model.contains("merges") || !model["merges"].is_array())
    throw std::runtime_error(where + ": model \"merges\" must be a list");
  load_merges(model["merges"]);
  std::string unk = text(model, "unk_token", "", "model");
  if (model.contains("unk_token") && !model["unk_token"].is_null()) {
    auto it = vocab.find(unk);
    if (it == vocab.end())
      throw std::runtime_error(where + ": model \"unk_token\" " +
                               json_preview(json(unk)) + " is not in the vocabulary");
    unk_id = it->second;
  }
}

// Ids are positions in a table of every token, so an id is checked against
// the number of tokens the file has before the table grows to hold it (an id
// of 2^62 would otherwise ask for exabytes). Ids run from 0 without holes in
// real files; some slack is left for holes all the same.
namespace {
std::int64_t max_token_id(std::size_t tokens_in_file) {
  return std::int64_t(2 * tokens_in_file + 1024);
}
}  // namespace

void HFTokenizer::Impl::load_vocab(const json& v) {
  const std::int64_t limit = max_token_id(v.size());
  for (const auto& [token, id] : v.items()) {
    if (!id.is_number_integer() ||
        (!id.is_number_unsigned() && id.get<std::int64_t>() < 0))
      throw std::runtime_error(where + ": model \"vocab\" entry " +
                               json_preview(json(token)) + " has id " + json_preview(id) +
                               " (must be an integer >= 0)");
    if (id.is_number_unsigned() && id.get<std::uint64_t>() >= std::uint64_t(limit))
      throw std::runtime_error(
          where + ": model \"vocab\" entry " + json_preview(json(token)) + " has id " +
          id.dump() + ", more than " + std::to_string(limit - 1) +
          " for a vocabulary of " + std::to_string(v.size()) + " tokens");
    vocab[token] = id.get<std::int64_t>();
    set_token(id.get<std::int64_t>(), token);
  }
}

void HFTokenizer::Impl::load_merges(const json& list) {
  std::int64_t rank = 0;
  for (const json& m : list) {
    // Two spellings: "a b" (older files) or ["a", "b"] (tokenizers >= 0.20).
    std::string left, right;
    if (m.is_string()) {
      std::string s = m.get<std::string>();
      std::size_t space = s.find(' ');
      if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos)
        throw std::runtime_error(where + ": merge " + std::to_string(rank) + " " +
                                 json_preview(m) +
                                 " is not two tokens separated by a space");
      left = s.substr(0, space);
      right = s.substr(space + 1);
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      left = m[0].get<std::string>();
      right = m[1].get<std::string>();
    } else {
      throw std::runtime_error(where + ": merge " + std::to_string(rank) + " " +
                               json_preview(m) + " is not a pair of tokens");
    }
    auto l = vocab.find(left), r = vocab.find(right), result = vocab.find(left + right);
    if (l == vocab.end() || r == vocab.end() || result == vocab.end())
      throw std::runtime_error(where + ": merge " + std::to_string(rank) + " (" +
                               json_preview(json(left)) + ", " +
                               json_preview(json(right)) +
                               ") uses a token missing from the vocabulary");
    merges.emplace(pair_key(l->second, r->second), Merge{rank, result->second});
    ++rank;
  }
}

void HFTokenizer::Impl::set_token(std::int64_t id, const std::string& token) {
  if (std::size_t(id) >= id_to_token.size()) id_to_token.resize(std::size_t(id) + 1);
  id_to_token[std::size_t(id)] = token;
}

void HFTokenizer::Impl::load_added_tokens(const json& tokens) {
  if (tokens.is_null()) return;
  if (!tokens.is_array())
    throw std::runtime_error(where + ": \"added_tokens\" must be a list");
  const std::int64_t limit = max_token_id(vocab.size() + tokens.size());
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const json& t = tokens[i];
    const std::string path = json_path("added_tokens", i);
    if (!t.is_object() || !t.contains("id") || !t.contains("content"))
      throw std::runtime_error(where + ": added token " + json_preview(t) +
                               " needs \"id\" and \"content\"");
    if (!t["id"].is_number_integer() || t["id"].get<std::int64_t>() < 0 ||
        t["id"].get<std::int64_t>() >= limit)
      throw wrong_type(where, path + ".id", t["id"],
                       ("an integer from 0 to " + std::to_string(limit - 1)).c_str());
    AddedToken a{text(t, "content", "", path), t["id"].get<std::int64_t>(),
                 flag(t, "special", false, path), flag(t, "lstrip", false, path),
                 flag(t, "rstrip", false, path)};
    if (flag(t, "single_word", false, path))
      throw std::runtime_error(where + ": added token " + json_preview(json(a.content)) +
                               " has \"single_word\": true, which is not supported");
    if (a.content.empty())
      throw std::runtime_error(where + ": added token " + json_preview(t) +
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

void HFTokenizer::Impl::load_normalizer(const json& n, const std::string& path,
                                        int depth) {
  if (n.is_null()) return;
  std::string type = part_type(
      n, path, where, {"Sequence", "NFC", "NFD", "NFKC", "NFKD", "Prepend", "Replace"});
  UErrorCode status = U_ZERO_ERROR;
  if (type == "Sequence") {
    const json& steps = sequence(n, "normalizers", path, depth);
    for (std::size_t i = 0; i < steps.size(); ++i)
      load_normalizer(steps[i], json_path(path + ".normalizers", i), depth + 1);
  } else if (type == "Prepend") {
    normalizer.push_back(
        {NormalizerStep::prepend, nullptr, text(n, "prepend", "", path), ""});
  } else if (type == "Replace") {
    normalizer.push_back(
        {NormalizerStep::replace, nullptr,
         pattern_string(n.value("pattern", json()), path + " Replace", where),
         text(n, "content", "", path)});
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

void HFTokenizer::Impl::load_pre_tokenizer(const json& p, const std::string& path,
                                           int depth) {
  if (p.is_null()) return;
  std::string type = part_type(p, "pre_tokenizer", where,
                               {"Sequence", "Split", "ByteLevel", "Digits", "Metaspace"});
  PreTokenizerStep step{};
  if (type == "Sequence") {
    const json& steps = sequence(p, "pretokenizers", path, depth);
    for (std::size_t i = 0; i < steps.size(); ++i)
      load_pre_tokenizer(steps[i], json_path(path + ".pretokenizers", i), depth + 1);
    return;
  } else if (type == "Split") {
    require_value(p, "behavior", "pre_tokenizer Split", where, {"Isolated"});
    require_value(p, "invert", "pre_tokenizer Split", where, {false});
    step.kind = PreTokenizerStep::split;
    step.regex = pattern_regex(p.value("pattern", json()), "pre_tokenizer Split", where);
  } else if (type == "ByteLevel") {
    step.kind = PreTokenizerStep::byte_level;
    step.add_prefix_space = flag(p, "add_prefix_space", false, path);
    // GPT-2's own split, used when the ByteLevel step is the only one.
    if (flag(p, "use_regex", true, path))
      step.regex = compile_regex(
          R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)",
          "ByteLevel", where);
  } else if (type == "Digits") {
    step.kind = PreTokenizerStep::digits;
    step.regex = compile_regex(
        flag(p, "individual_digits", false, path) ? R"(\p{N})" : R"(\p{N}+)", "Digits",
        where);
  } else {  // Metaspace
    step.kind = PreTokenizerStep::metaspace;
    step.replacement = text(p, "replacement", "\u2581", path);
    step.prepend_scheme = parse_prepend_scheme(p, where);
    step.split_words = flag(p, "split", true, path);
    if (split_chars(step.replacement).size() != 1)
      throw std::runtime_error(where +
                               ": Metaspace \"replacement\" must be one character");
  }
  pre_tokenizer.push_back(step);
}

void HFTokenizer::Impl::load_decoder(const json& d, const std::string& path, int depth) {
  if (d.is_null()) return;
  has_decoder = true;
  std::string type = part_type(
      d, "decoder", where,
      {"Sequence", "ByteLevel", "Metaspace", "Replace", "ByteFallback", "Fuse", "Strip"});
  DecoderStep step{};
  if (type == "Sequence") {
    const json& steps = sequence(d, "decoders", path, depth);
    for (std::size_t i = 0; i < steps.size(); ++i)
      load_decoder(steps[i], json_path(path + ".decoders", i), depth + 1);
    return;
  } else if (type == "ByteLevel") {
    step.kind = DecoderStep::byte_level;
  } else if (type == "Metaspace") {
    step.kind = DecoderStep::metaspace;
    step.replacement = text(d, "replacement", "\u2581", path);
    step.prepend_scheme = parse_prepend_scheme(d, where);
  } else if (type == "Replace") {
    step.kind = DecoderStep::replace;
    step.text = pattern_string(d.value("pattern", json()), "decoder Replace", where);
    step.content = text(d, "content", "", path);
  } else if (type == "ByteFallback") {
    step.kind = DecoderStep::byte_fallback;
  } else if (type == "Fuse") {
    step.kind = DecoderStep::fuse;
  } else {  // Strip
    step.kind = DecoderStep::strip;
    step.content = text(d, "content", " ", path);
    step.start = count(d, "start", path);
    step.stop = count(d, "stop", path);
  }
  decoder.push_back(step);
}

void HFTokenizer::Impl::load_post_processor(const json& p, const std::string& path,
                                            int depth) {
  if (p.is_null()) return;
  std::string type = part_type(p, "post_processor", where,
                               {"Sequence", "ByteLevel", "TemplateProcessing"});
  if (type == "Sequence") {
    const json& steps = sequence(p, "processors", path, depth);
    for (std::size_t i = 0; i < steps.size(); ++i)
      load_post_processor(steps[i], json_path(path + ".processors", i), depth + 1);
  } else if (type == "TemplateProcessing") {
    template_single = load_template(p, path);
  }
  // ByteLevel as a post-processor only trims offsets, which we do not report.
}

// TemplateProcessing's "single" (we never encode pairs of sequences): the
// sequence itself (-1) and special tokens' ids, each an id of the vocabulary.
Template HFTokenizer::Impl::load_template(const json& p, const std::string& path) const {
  Template t;
  const json& single = list(p, "single", path);
  const json& specials = p.contains("special_tokens") && p["special_tokens"].is_object()
                             ? p["special_tokens"]
                             : json::object();
  for (const json& item : single) {
    if (item.is_object() && item.contains("Sequence")) {
      t.push_back(-1);
      continue;
    }
    if (!item.is_object() || !item.contains("SpecialToken") ||
        !item["SpecialToken"].is_object())
      throw std::runtime_error(where + ": post_processor template item " +
                               json_preview(item) +
                               " is neither a Sequence nor a SpecialToken");
    std::string name = text(item["SpecialToken"], "id", "", path + ".single");
    if (!specials.contains(name) || !specials[name].is_object() ||
        !specials[name].contains("ids"))
      throw std::runtime_error(where + ": post_processor template token " +
                               json_preview(json(name)) +
                               " is not in \"special_tokens\"");
    const std::string ids_path =
        json_path(json_path(path + ".special_tokens", name), "ids");
    for (const json& id : list(specials[name], "ids", ids_path)) {
      if (!id.is_number_integer() || id.get<std::int64_t>() < 0 ||
          std::size_t(id.get<std::int64_t>()) >= id_to_token.size())
        throw wrong_type(
            where, ids_path, id,
            ("a token id from 0 to " + std::to_string(id_to_token.size() - 1)).c_str());
      t.push_back(id.get<std::int64_t>());
    }
  }
  return t;
}

void HFTokenizer::Impl::load_config(const json& config, const std::string& config_where) {
  if (!config.is_object())
    throw std::runtime_error(config_where + ": the JSON is " + json_preview(config) +
                             ", expected an object");
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
  // flag() names tokenizer.json; these fields are tokenizer_config.json's.
  auto config_flag = [&](const char* key) {
    if (!config.contains(key) || config[key].is_null()) return false;
    if (!config[key].is_boolean())
      throw wrong_type(config_where, key, config[key], "true or false");
    return config[key].get<bool>();
  };
  add_bos = config_flag("add_bos_token");
  add_eos = config_flag("add_eos_token");
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
