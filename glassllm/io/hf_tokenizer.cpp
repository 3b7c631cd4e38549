// hf_tokenizer.cpp: Hugging Face tokenizer.json BPE tokenizers (see
// hf_tokenizer.h for the pipeline and what is supported): encoding (added
// tokens, normalizer, pre-tokenizer, BPE, post-processor) and decoding.
// Loading is hf_tokenizer_load.cpp's; the parts they share are in
// hf_tokenizer_impl.h. Regular expressions and Unicode normalization come
// from ICU, which works on UTF-16 strings (icu::UnicodeString); everything
// else here is UTF-8.
#include "glassllm/io/hf_tokenizer.h"

#include <unicode/normalizer2.h>
#include <unicode/regex.h>
#include <unicode/unistr.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <queue>
#include <stdexcept>
#include <unordered_map>

#include "glassllm/io/checkpoint_internal.h"
#include "glassllm/io/files.h"
#include "glassllm/io/hf_tokenizer_impl.h"
#include "glassllm/io/json_reader.h"

namespace glassllm {

std::uint64_t HFTokenizer::Impl::pair_key(std::int64_t a, std::int64_t b) {
  return (std::uint64_t(a) << 32) | std::uint64_t(b);
}

std::vector<HFTokenizer::Impl::Section> HFTokenizer::Impl::split_added(
    const std::string& text) const {
  std::vector<Section> sections;
  std::string plain;
  std::size_t i = 0;
  while (i < text.size()) {
    const AddedToken* match = nullptr;
    for (const AddedToken& a : added)  // longest first
      if (text.compare(i, a.content.size(), a.content) == 0) {
        match = &a;
        break;
      }
    if (!match) {
      plain += text[i++];
      continue;
    }
    if (match->lstrip)
      while (!plain.empty() && std::isspace(static_cast<unsigned char>(plain.back())))
        plain.pop_back();
    if (!plain.empty()) sections.push_back({plain, -1});
    plain.clear();
    sections.push_back({match->content, match->id});
    i += match->content.size();
    if (match->rstrip)
      while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  }
  if (!plain.empty()) sections.push_back({plain, -1});
  return sections;
}

std::string HFTokenizer::Impl::normalize(std::string s) const {
  for (const NormalizerStep& step : normalizer) {
    if (step.kind == NormalizerStep::unicode_form) {
      UErrorCode status = U_ZERO_ERROR;
      s = to_utf8(step.form->normalize(to_utf16(s), status));
    } else if (step.kind == NormalizerStep::prepend) {
      if (!s.empty()) s = step.text + s;
    } else {
      replace_all(s, step.text, step.content);
    }
  }
  return s;
}

std::vector<std::int64_t> HFTokenizer::Impl::initial_symbols(
    const std::string& piece) const {
  std::vector<std::int64_t> symbols;
  bool last_was_unk = false;
  for (const std::string& c : split_chars(piece)) {
    auto it = vocab.find(c);
    if (it != vocab.end()) {
      symbols.push_back(it->second);
      last_was_unk = false;
      continue;
    }
    if (byte_fallback) {
      std::vector<std::int64_t> bytes;
      for (unsigned char b : c) {
        auto bt = vocab.find(byte_token(b));
        if (bt == vocab.end()) break;
        bytes.push_back(bt->second);
      }
      if (bytes.size() == c.size()) {
        symbols.insert(symbols.end(), bytes.begin(), bytes.end());
        last_was_unk = false;
        continue;
      }
    }
    if (!unk_id)
      throw std::invalid_argument("tokenize: character " + json(c).dump() +
                                  " is not in the vocabulary and the tokenizer has no "
                                  "unk_token");
    if (!(fuse_unk && last_was_unk)) symbols.push_back(*unk_id);
    last_was_unk = true;
  }
  return symbols;
}

std::vector<std::int64_t> HFTokenizer::Impl::apply_merges(
    const std::vector<std::int64_t>& symbols) const {
  struct Symbol {
    std::int64_t id;
    int prev, next;  // neighbours in the current word (-1: none)
    bool alive;
  };
  std::vector<Symbol> word;
  for (std::size_t i = 0; i < symbols.size(); ++i)
    word.push_back(
        {symbols[i], int(i) - 1, i + 1 < symbols.size() ? int(i) + 1 : -1, true});

  // (rank, position of the left symbol, resulting id); smallest first.
  using Candidate = std::tuple<std::int64_t, int, std::int64_t>;
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
  auto consider = [&](int left) {
    if (left < 0 || word[std::size_t(left)].next < 0) return;
    auto it = merges.find(pair_key(word[std::size_t(left)].id,
                                   word[std::size_t(word[std::size_t(left)].next)].id));
    if (it != merges.end()) queue.emplace(it->second.rank, left, it->second.result);
  };
  for (int i = 0; i + 1 < int(word.size()); ++i) consider(i);
  while (!queue.empty()) {
    auto [rank, left, result] = queue.top();
    queue.pop();
    Symbol& a = word[std::size_t(left)];
    if (!a.alive || a.next < 0) continue;
    auto it = merges.find(pair_key(a.id, word[std::size_t(a.next)].id));
    if (it == merges.end() || it->second.result != result) continue;  // stale
    Symbol& b = word[std::size_t(a.next)];
    a.id = result;
    b.alive = false;
    a.next = b.next;
    if (b.next >= 0) word[std::size_t(b.next)].prev = left;
    consider(a.prev);
    consider(left);
  }
  std::vector<std::int64_t> merged;
  for (const Symbol& s : word)
    if (s.alive) merged.push_back(s.id);
  return merged;
}

void HFTokenizer::Impl::bpe(const std::string& piece,
                            std::vector<std::int64_t>& out) const {
  if (piece.empty()) return;
  if (ignore_merges) {
    auto it = vocab.find(piece);
    if (it != vocab.end()) {
      out.push_back(it->second);
      return;
    }
  }
  const std::vector<std::int64_t> merged = apply_merges(initial_symbols(piece));
  out.insert(out.end(), merged.begin(), merged.end());
}

namespace {

using Tokens = std::vector<std::string>;

// ByteLevel: every character back to its byte; a token with a character
// outside the table (an added token such as "<|eot_id|>" is inside it) keeps
// its own UTF-8 bytes. Then the bytes as text, all tokens at once, so a
// character split over two tokens comes back whole.
Tokens decode_byte_level(const Tokens& tokens) {
  std::string bytes;
  for (const std::string& t : tokens) {
    std::string these;
    bool all_mapped = true;
    for (const std::string& c : split_chars(t)) {
      auto it = byte_table().char_to_byte.find(c);
      if (it == byte_table().char_to_byte.end()) {
        all_mapped = false;
        break;
      }
      these += char(it->second);
    }
    bytes += all_mapped ? these : t;
  }
  return {utf8_lossy(bytes)};
}

// ByteFallback: runs of byte tokens ("<0xE2>", "<0x82>", "<0xAC>") become
// text ("€"); bytes that are not UTF-8 become one U+FFFD each, as in
// `tokenizers`.
Tokens decode_byte_fallback(const Tokens& tokens) {
  Tokens next;
  std::string run;
  auto flush = [&] {
    if (run.empty()) return;
    std::string text = utf8_lossy(run);
    if (text.find("\uFFFD") != std::string::npos) {
      text.clear();
      for (std::size_t k = 0; k < run.size(); ++k) text += "\uFFFD";
    }
    next.push_back(text);
    run.clear();
  };
  for (const std::string& t : tokens) {
    int b = byte_of_token(t);
    if (b >= 0) {
      run += char(b);
    } else {
      flush();
      next.push_back(t);
    }
  }
  flush();
  return next;
}

// Strip: up to `start` copies of `content` off each token's front (not for a
// token decoded alone) and up to `stop` off its end.
Tokens decode_strip(const DecoderStep& step, const Tokens& tokens, bool alone) {
  Tokens next;
  const std::size_t n = step.content.size();
  for (const std::string& t : tokens) {
    std::size_t start = 0, stop = t.size();
    if (!alone)
      for (std::size_t k = 0; k < step.start && t.compare(start, n, step.content) == 0;
           ++k)
        start += n;
    for (std::size_t k = 0;
         k < step.stop && stop >= start + n && t.compare(stop - n, n, step.content) == 0;
         ++k)
      stop -= n;
    next.push_back(t.substr(start, stop - start));
  }
  return next;
}

Tokens decode_step(const DecoderStep& step, const Tokens& tokens, bool alone) {
  Tokens next;
  switch (step.kind) {
    case DecoderStep::byte_level:
      return decode_byte_level(tokens);
    case DecoderStep::metaspace:
      for (std::size_t i = 0; i < tokens.size(); ++i) {
        std::string t = tokens[i];
        bool drop = i == 0 && !alone && step.prepend_scheme != Prepend::never;
        replace_all(t, step.replacement, drop ? "" : " ");
        next.push_back(t);
      }
      return next;
    case DecoderStep::replace:
      for (std::string t : tokens) {
        replace_all(t, step.text, step.content);
        next.push_back(t);
      }
      return next;
    case DecoderStep::byte_fallback:
      return decode_byte_fallback(tokens);
    case DecoderStep::fuse: {
      std::string all;
      for (const std::string& t : tokens) all += t;
      return {all};
    }
    case DecoderStep::strip:
      return decode_strip(step, tokens, alone);
  }
  return tokens;
}

}  // namespace

std::string HFTokenizer::Impl::run_decoder(std::vector<std::string> tokens,
                                           bool alone) const {
  if (!has_decoder) {  // `tokenizers` joins the tokens with spaces
    std::string out;
    for (std::size_t i = 0; i < tokens.size(); ++i) out += (i ? " " : "") + tokens[i];
    return out;
  }
  for (const DecoderStep& step : decoder) tokens = decode_step(step, tokens, alone);
  std::string out;
  for (const std::string& t : tokens) out += t;
  return out;
}

void HFTokenizer::Impl::check_id(std::int64_t id) const {
  if (id < 0 || std::size_t(id) >= id_to_token.size())
    throw std::invalid_argument("decode: token id " + std::to_string(id) +
                                " is outside the vocabulary [0, " +
                                std::to_string(id_to_token.size()) + ")");
}

HFTokenizer::HFTokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HFTokenizer::HFTokenizer(HFTokenizer&&) noexcept = default;
HFTokenizer& HFTokenizer::operator=(HFTokenizer&&) noexcept = default;
HFTokenizer::~HFTokenizer() = default;

HFTokenizer HFTokenizer::from_json(const std::string& tokenizer_json,
                                   const std::string& tokenizer_config_json,
                                   const std::string& where) {
  auto impl = std::make_unique<Impl>();
  impl->where = where + "/tokenizer.json";
  json root;
  try {
    root = parse_json_bounded<json>(tokenizer_json);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(impl->where + ": " + e.what());
  }
  try {
    if (!root.is_object() || !root.contains("model"))
      throw std::runtime_error(impl->where + ": no \"model\"");
    require_value(root, "truncation", "tokenizer", impl->where, {});
    require_value(root, "padding", "tokenizer", impl->where, {});
    impl->load_model(root["model"]);
    impl->load_added_tokens(root.value("added_tokens", json::array()));
    impl->load_normalizer(root.value("normalizer", json()));
    impl->load_pre_tokenizer(root.value("pre_tokenizer", json()));
    impl->load_post_processor(root.value("post_processor", json()));
    impl->load_decoder(root.value("decoder", json()));
    impl->special.resize(impl->id_to_token.size(), false);
    if (!tokenizer_config_json.empty()) {
      std::string config_where = where + "/tokenizer_config.json";
      json config;
      try {
        config = parse_json_bounded<json>(tokenizer_config_json);
      } catch (const std::invalid_argument& e) {
        throw std::runtime_error(config_where + ": " + e.what());
      }
      impl->load_config(config, config_where);
    }
  } catch (const json::exception&) {
    // Every field is checked for its type before it is read; this is a
    // last guard, in our words rather than the library's.
    throw std::runtime_error(impl->where +
                             ": a field has a JSON type GlassLM cannot read");
  }
  return HFTokenizer(std::move(impl));
}

std::size_t HFTokenizer::vocab_size() const {
  return impl_->id_to_token.size();
}

std::vector<std::int64_t> HFTokenizer::encode(const std::string& text,
                                              bool add_special_tokens) const {
  return impl_->encode(text, add_special_tokens);
}

std::string HFTokenizer::decode(const std::vector<std::int64_t>& ids,
                                bool skip_special_tokens) const {
  std::vector<std::string> tokens;
  for (std::int64_t id : ids) {
    impl_->check_id(id);
    if (skip_special_tokens && impl_->special[std::size_t(id)]) continue;
    tokens.push_back(impl_->id_to_token[std::size_t(id)]);
  }
  return impl_->run_decoder(tokens, false);
}

std::string HFTokenizer::token_text(std::int64_t id) const {
  impl_->check_id(id);
  return impl_->run_decoder({impl_->id_to_token[std::size_t(id)]}, true);
}

const std::string& HFTokenizer::token(std::int64_t id) const {
  impl_->check_id(id);
  return impl_->id_to_token[std::size_t(id)];
}

std::optional<std::int64_t> HFTokenizer::token_id(const std::string& token) const {
  return impl_->find_id(token);
}

bool HFTokenizer::is_special(std::int64_t id) const {
  impl_->check_id(id);
  return impl_->special[std::size_t(id)];
}

std::optional<std::int64_t> HFTokenizer::bos_id() const {
  return impl_->bos;
}
std::optional<std::int64_t> HFTokenizer::eos_id() const {
  return impl_->eos;
}

}  // namespace glassllm
