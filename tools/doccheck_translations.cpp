// doccheck's check of the Portuguese edition: every page of docs/pt/ and its
// English page link to each other (tools/doccheck.cpp runs it after the
// links).
//
// A page of docs/pt/ starts (within its first kTopLines lines) with a line
//     In English: [the English page](../04-the-model.md)
// and the English page it names starts with a line
//     Em português: [a página em português](pt/o-modelo.md)
// that links back to it. Either line may link to more than one page (the
// walkthrough's contents page links to the Portuguese README and glossary);
// every link of one must be answered by the other. A page without such a
// line, or whose partner does not link back, is reported.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "doccheck.h"

namespace fs = std::filesystem;
using doccheck::read_lines;

namespace {

// The marker lines are the page's first lines, under the title at most.
constexpr std::size_t kTopLines = 5;
const std::string kToEnglish = "In English: ";
const std::string kToPortuguese = "Em português: ";

fs::path normal(const fs::path& p) {
  return fs::weakly_canonical(p).lexically_normal();
}

// The pages the line starting with `marker` near the top of `page` links to
// (relative links only, resolved from the page's folder); `found` says
// whether the page has such a line at all.
std::vector<fs::path> marked_links(const fs::path& page, const std::string& marker,
                                   bool& found) {
  std::vector<fs::path> targets;
  found = false;
  std::vector<std::string> lines = read_lines(page);
  for (std::size_t i = 0; i < lines.size() && i < kTopLines; ++i) {
    const std::string& line = lines[i];
    if (line.rfind(marker, 0) != 0) continue;
    found = true;
    for (std::size_t at = line.find("]("); at != std::string::npos;
         at = line.find("](", at + 2)) {
      std::size_t end = line.find(')', at + 2);
      if (end == std::string::npos) break;
      std::string t = line.substr(at + 2, end - at - 2);
      t = t.substr(0, t.find('#'));
      if (t.empty() || t.find("://") != std::string::npos) continue;
      targets.push_back(normal(page.parent_path() / t));
    }
  }
  return targets;
}

bool links_to(const std::vector<fs::path>& targets, const fs::path& page) {
  return std::find(targets.begin(), targets.end(), normal(page)) != targets.end();
}

bool under(const fs::path& page, const fs::path& folder) {
  const std::string p = normal(page).string(), f = normal(folder).string() + "/";
  return p.rfind(f, 0) == 0;
}

}  // namespace

int doccheck::check_translations(const fs::path& src, int& checked) {
  const fs::path pt = src / "docs" / "pt";
  if (!fs::exists(pt)) return 0;
  std::vector<fs::path> portuguese, english;
  if (fs::exists(src / "README.md")) english.push_back(src / "README.md");
  for (const auto& entry : fs::recursive_directory_iterator(src / "docs"))
    if (entry.path().extension() == ".md")
      (under(entry.path(), pt) ? portuguese : english).push_back(entry.path());
  int missing = 0;
  auto report = [&](const fs::path& page, const std::string& why) {
    ++missing;
    std::cerr << page.string() << ": " << why << "\n";
  };
  for (const fs::path& page : portuguese) {
    ++checked;
    bool found = false;
    std::vector<fs::path> originals = marked_links(page, kToEnglish, found);
    if (!found || originals.empty()) {
      report(page, "no '" + kToEnglish + "[...](...)' line in its first " +
                       std::to_string(kTopLines) + " lines linking to its English page");
      continue;
    }
    for (const fs::path& original : originals) {
      bool back = false;
      if (!fs::exists(original) || under(original, pt)) {
        report(page, "'" + kToEnglish + "' links to " + original.string() +
                         ", which is not an English page");
      } else if (!links_to(marked_links(original, kToPortuguese, back), page)) {
        report(original, "links from page " + page.string() + " with '" + kToEnglish +
                             "' but its first " + std::to_string(kTopLines) +
                             " lines have no '" + kToPortuguese +
                             "[...](...)' link back to it");
      }
    }
  }
  for (const fs::path& page : english) {
    bool found = false;
    for (const fs::path& translation : marked_links(page, kToPortuguese, found)) {
      ++checked;
      bool back = false;
      if (!fs::exists(translation) || !under(translation, pt))
        report(page, "'" + kToPortuguese + "' links to " + translation.string() +
                         ", which is not a page of docs/pt/");
      else if (!links_to(marked_links(translation, kToEnglish, back), page))
        report(translation, "'" + kToEnglish + "' does not link back to " +
                                page.string() + ", which links to it with '" +
                                kToPortuguese + "'");
    }
  }
  return missing;
}
