// json_reader.cpp: the bounded, strict JSON reader (json_reader.h).
//
// nlohmann's parser is itself a loop, not a recursion, and it calls a
// callback as each object, list, key and value is read. The callback keeps
// the path to the value being read (for messages), refuses an object or list
// that opens deeper than kMaxJsonDepth before anything is built inside it,
// and refuses a key an object already has (nlohmann would keep the last one
// silently). The library's own exceptions are caught here and replaced by a
// message that says where and what, in our words.
#include "glassllm/io/json_reader.h"

#include <cctype>
#include <cstdio>
#include <set>
#include <vector>

#include "glassllm/io/files.h"

namespace glassllm {

// Named rather than anonymous: the parser's callback (a lambda in a template
// with external linkage) holds these.
namespace json_reading {

// One open object or list while parsing.
struct OpenValue {
  bool is_list = false;
  std::size_t index = 0;  // a list: the item being read
  std::string key;        // an object: the last key read
  bool has_key = false;
  std::set<std::string> keys;  // an object: every key read so far
};

// "model.merges[3]" for the value being read; cut (with "...") when long,
// which only a deeply nested value makes it.
std::string path_of(const std::vector<OpenValue>& open) {
  std::string path;
  for (const OpenValue& v : open) {
    if (v.is_list)
      path = json_path(path, v.index);
    else if (v.has_key)
      path = json_path(path, v.key);
    if (path.size() > 120) return path.substr(0, 120) + "...";
  }
  return path;
}

std::string in_path(const std::vector<OpenValue>& open) {
  std::string path = path_of(open);
  return path.empty() ? "" : " (in " + path + ")";
}

// The byte at 1-based `byte` of `text` as a message shows it.
std::string byte_found(std::string_view text, std::size_t byte) {
  if (byte == 0 || byte > text.size()) return "end of the text";
  const unsigned char c = static_cast<unsigned char>(text[byte - 1]);
  char buf[32];
  if (c >= 0x20 && c < 0x7F)
    std::snprintf(buf, sizeof buf, "'%c'", c);
  else
    std::snprintf(buf, sizeof buf, "byte 0x%02X", c);
  return buf;
}

std::string line_and_column(std::string_view text, std::size_t byte) {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i + 1 < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

// After a value (a scalar, or an object or list that just closed) the list
// holding it moves to its next item, the object holding it to its next key.
void value_done(std::vector<OpenValue>& open) {
  if (open.empty()) return;
  if (open.back().is_list)
    ++open.back().index;
  else
    open.back().has_key = false;  // next comes a new key: the path is the object's
}

template <class J>
bool on_event(std::vector<OpenValue>& open, typename J::parse_event_t event, J& parsed) {
  using Event = typename J::parse_event_t;
  switch (event) {
    case Event::object_start:
    case Event::array_start:
      if (open.size() >= kMaxJsonDepth)
        throw std::invalid_argument("nesting deeper than " +
                                    std::to_string(kMaxJsonDepth) + " levels at " +
                                    path_of(open) + "; at most " +
                                    std::to_string(kMaxJsonDepth) + " are allowed");
      open.emplace_back();
      open.back().is_list = event == Event::array_start;
      break;
    case Event::object_end:
    case Event::array_end:
      open.pop_back();
      value_done(open);
      break;
    case Event::key: {
      OpenValue& object = open.back();
      object.key = parsed.template get<std::string>();
      object.has_key = true;
      if (!object.keys.insert(object.key).second) {
        object.has_key = false;  // the path is the object's, not the repeated key's
        std::string where = path_of(open);
        throw std::invalid_argument("duplicate key " + json_preview(J(object.key)) +
                                    (where.empty() ? "" : " in " + where));
      }
      break;
    }
    case Event::value:
      value_done(open);
      break;
  }
  return true;
}

}  // namespace json_reading

template <class J>
J parse_json_bounded(std::string_view text) {
  using namespace json_reading;
  std::vector<OpenValue> open;
  auto callback = [&open](int /*depth*/, typename J::parse_event_t event, J& parsed) {
    return on_event<J>(open, event, parsed);
  };
  try {
    return J::parse(text.begin(), text.end(), callback);
  } catch (const typename J::parse_error& e) {
    // e.byte is the 1-based position of the byte that did not fit.
    const std::size_t byte = e.byte;
    const bool at_end = byte > text.size();
    throw std::invalid_argument(
        "invalid JSON at " + line_and_column(text, at_end ? text.size() + 1 : byte) +
        in_path(open) + ": unexpected " + byte_found(text, byte) +
        (at_end ? " (the text stops before the JSON value is complete)" : ""));
  } catch (const typename J::out_of_range&) {
    // The one out_of_range the parser raises: a number beyond a double (1E400).
    throw std::invalid_argument("invalid JSON" + in_path(open) +
                                ": a number too large for a 64-bit float");
  } catch (const typename J::exception&) {
    throw std::invalid_argument("invalid JSON" + in_path(open));
  }
}

template nlohmann::json parse_json_bounded<nlohmann::json>(std::string_view);
template nlohmann::ordered_json parse_json_bounded<nlohmann::ordered_json>(
    std::string_view);

nlohmann::ordered_json read_json_file(const std::string& path, std::uint64_t max_bytes,
                                      const char* kind) {
  const std::string text = read_regular_file(path, max_bytes, kind);
  try {
    return parse_json_bounded<nlohmann::ordered_json>(text);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

namespace {

bool plain_key(const std::string& key) {
  if (key.empty()) return false;
  for (char c : key)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'))
      return false;
  return true;
}

// A string quoted for a message: control characters, quotes and backslashes
// escaped, cut to `limit` bytes on a character boundary.
std::string quoted(const std::string& s, std::size_t limit = 60) {
  std::size_t n = s.size();
  bool cut = n > limit;
  if (cut) {
    n = limit;
    while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  }
  std::string out = "\"";
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20 || c == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04X", c);
      out += buf;
    } else {
      out += char(c);
    }
  }
  return out + (cut ? "...\"" : "\"");
}

template <class J>
std::string preview(const J& value) {
  if (value.is_string()) return quoted(value.template get_ref<const std::string&>());
  if (value.is_object())
    return "an object of " + std::to_string(value.size()) +
           (value.size() == 1 ? " key" : " keys");
  if (value.is_array())
    return "a list of " + std::to_string(value.size()) +
           (value.size() == 1 ? " item" : " items");
  if (value.is_discarded()) return "nothing";
  return value.dump();  // a number, true, false or null: short, never throws
}

}  // namespace

std::string json_path(const std::string& parent, const std::string& key) {
  if (plain_key(key)) return parent.empty() ? key : parent + "." + key;
  return parent + "[" + quoted(key, 40) + "]";
}

std::string json_path(const std::string& parent, std::size_t index) {
  return parent + "[" + std::to_string(index) + "]";
}

std::string json_preview(const nlohmann::json& value) {
  return preview(value);
}
std::string json_preview(const nlohmann::ordered_json& value) {
  return preview(value);
}

}  // namespace glassllm
