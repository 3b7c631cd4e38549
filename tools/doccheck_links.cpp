// doccheck's check of links: every relative link of README.md and docs/
// must lead somewhere (tools/doccheck.cpp runs it after the blocks).
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "doccheck.h"

namespace fs = std::filesystem;
using doccheck::read_lines;

namespace {

// ---- links ------------------------------------------------------------------
//
// Every relative link in README.md and docs/ must lead somewhere: the file
// must exist and, for a link with #anchor into a Markdown page (or within
// the page itself), the page must have that anchor. Anchors are those GitHub
// makes from headings (lower case; letters, digits, spaces, '-' and '_'
// kept, everything else dropped; spaces become '-'; a repeated heading gets
// -1, -2, ...) and explicit <a id="..."> / <a name="..."> tags.

// GitHub's anchor for a heading's text.
std::string heading_anchor(const std::string& heading) {
  std::string slug;
  for (unsigned char c : heading) {
    if (std::isalnum(c) || c == '-' || c == '_' || c >= 0x80)
      slug += char(std::tolower(c));
    else if (c == ' ')
      slug += '-';
  }
  return slug;
}

// Text without `inline code` (links inside code are not links).
std::string without_code_spans(const std::string& line) {
  std::string out;
  bool code = false;
  for (char c : line) {
    if (c == '`') {
      code = !code;
      continue;
    }
    if (!code) out += c;
  }
  return out;
}

// The anchors a Markdown page defines.
std::vector<std::string> page_anchors(const fs::path& page) {
  std::vector<std::string> anchors;
  std::vector<std::string> seen;  // heading slugs so far, for the -1, -2 suffixes
  bool fenced = false;
  for (const std::string& line : read_lines(page)) {
    if (line.rfind("```", 0) == 0) fenced = !fenced;
    if (fenced) continue;
    for (const char* attr : {"<a id=\"", "<a name=\""}) {
      for (std::size_t at = line.find(attr); at != std::string::npos;
           at = line.find(attr, at + 1)) {
        std::size_t begin = at + std::string(attr).size();
        std::size_t end = line.find('"', begin);
        if (end != std::string::npos) anchors.push_back(line.substr(begin, end - begin));
      }
    }
    if (line.empty() || line[0] != '#') continue;
    std::size_t text = line.find_first_not_of('#');
    if (text == std::string::npos || line[text] != ' ') continue;
    std::string heading = without_code_spans(line.substr(text + 1));
    // Code spans keep their text in GitHub's anchors; only the backticks go.
    heading.clear();
    for (char c : line.substr(text + 1))
      if (c != '`') heading += c;
    std::string slug = heading_anchor(heading);
    std::size_t repeats = std::size_t(std::count(seen.begin(), seen.end(), slug));
    seen.push_back(slug);
    anchors.push_back(repeats ? slug + "-" + std::to_string(repeats) : slug);
  }
  return anchors;
}

// Relative link targets "path#anchor" of a page, with their line numbers:
// [text](target) and [text]: target, outside fenced blocks and code spans.
std::vector<std::pair<std::size_t, std::string>> relative_links(const fs::path& page) {
  std::vector<std::pair<std::size_t, std::string>> links;
  std::vector<std::string> lines = read_lines(page);
  bool fenced = false;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("```", 0) == 0) fenced = !fenced;
    if (fenced) continue;
    const std::string line = without_code_spans(lines[i]);
    std::vector<std::string> targets;
    for (std::size_t at = line.find("]("); at != std::string::npos;
         at = line.find("](", at + 2)) {
      std::size_t end = line.find(')', at + 2);
      if (end != std::string::npos) targets.push_back(line.substr(at + 2, end - at - 2));
    }
    if (line.rfind("[", 0) == 0 && line.find("]: ") != std::string::npos)
      targets.push_back(line.substr(line.find("]: ") + 3));
    for (std::string t : targets) {
      t = t.substr(0, t.find(' '));  // drop a "title"
      if (t.empty() || t.find("://") != std::string::npos || t.rfind("mailto:", 0) == 0)
        continue;
      links.emplace_back(i + 1, t);
    }
  }
  return links;
}

}  // namespace

int doccheck::check_links(const fs::path& src, int& checked) {
  std::vector<fs::path> pages;
  if (fs::exists(src / "README.md")) pages.push_back(src / "README.md");
  for (const auto& entry : fs::recursive_directory_iterator(src / "docs"))
    if (entry.path().extension() == ".md") pages.push_back(entry.path());
  int broken = 0;
  for (const fs::path& page : pages) {
    for (const auto& [line, target] : relative_links(page)) {
      ++checked;
      const std::size_t hash = target.find('#');
      const std::string file = target.substr(0, hash);
      const fs::path dest = file.empty() ? page : page.parent_path() / file;
      std::string why;
      if (!fs::exists(dest)) {
        why = "no such file " + dest.lexically_normal().string();
      } else if (hash != std::string::npos && dest.extension() == ".md") {
        const std::string anchor = target.substr(hash + 1);
        std::vector<std::string> anchors = page_anchors(dest);
        if (std::find(anchors.begin(), anchors.end(), anchor) == anchors.end())
          why = "no anchor #" + anchor + " in " + dest.lexically_normal().string();
      }
      if (!why.empty()) {
        ++broken;
        std::cerr << page.string() << ":" << line << ": link '" << target << "': " << why
                  << "\n";
      }
    }
  }
  return broken;
}
