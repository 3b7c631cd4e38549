// messages.h: every text the exercises' graders print, in one table per
// language (messages.cpp), looked up by id. The graders speak Brazilian
// Portuguese when GLASSLLM_LANG starts with "pt", or, with GLASSLLM_LANG
// unset, when the locale does (LC_ALL, else LC_MESSAGES, else LANG, as the
// C library chooses a locale); English otherwise (GLASSLLM_LANG=en forces it).
// A text's {name} placeholders are filled by tr(); each id has the same
// placeholders in every language (tests/test_exercises.cpp checks it).
#pragma once

#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <utility>

namespace glassllm::exercises {

enum class Language { en, pt };

/// The language the four variables choose (each may be null or empty).
Language language_from(const char* glassllm_lang, const char* lc_all,
                       const char* lc_messages, const char* lang);
/// The language of this process's environment, read at each call.
Language current_language();

using MessageArgs = std::initializer_list<std::pair<std::string_view, std::string>>;

/// The text `id` in `language`, its {name} placeholders replaced by args.
/// An unknown id or placeholder is a programming error: std::logic_error.
std::string tr(Language language, std::string_view id, MessageArgs args = {});
/// The same in current_language().
std::string tr(std::string_view id, MessageArgs args = {});

/// One language's whole table: id -> text with its placeholders.
const std::map<std::string, std::string, std::less<>>& message_table(Language language);

}  // namespace glassllm::exercises
