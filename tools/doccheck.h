// What tools/doccheck.cpp and tools/doccheck_links.cpp share.
#pragma once

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace doccheck {

inline std::vector<std::string> read_lines(const std::filesystem::path& p) {
  std::ifstream in(p);
  if (!in) throw std::runtime_error("cannot read " + p.string());
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Checks every relative link of README.md and docs/**.md under src; prints
// each broken one as "FILE:LINE: link 'TARGET': why", adds the links seen to
// checked and returns how many are broken.
int check_links(const std::filesystem::path& src, int& checked);

// Checks that every page of docs/pt/ under src and its English page link to
// each other ("In English: " and "Em português: " lines at the top); prints
// each page that lacks its link as "FILE: why", adds the pages and links
// seen to checked and returns how many links are missing.
int check_translations(const std::filesystem::path& src, int& checked);

}  // namespace doccheck
