// doccheck: keeps the code and output shown in docs/ equal to the programs in
// examples/ and to what they print.
//
// In a docs page, a fenced block preceded by
//     <!-- quote: examples/NAME.cpp#REGION -->
// must equal the lines of examples/NAME.cpp between `// doc:begin REGION` and
// `// doc:end REGION` (the markers themselves excluded), and a fenced block
// preceded by
//     <!-- output: examples/NAME.cpp -->
// must match what the built program BUILD/examples/NAME prints on stdout.
// "Match" is the rule in docs/README.md, "Contributing to the docs": text
// exactly, floating-point numbers by their size (floats_match() below). The
// marker may raise the rounding level for one block:
//     <!-- output: examples/NAME.cpp, rounding level below 1e-4 -->
//
// Usage: doccheck SOURCE_DIR BUILD_DIR [--update]
// Without --update it reports every stale block and exits 1; with --update it
// rewrites the stale blocks in place (through a temporary file and a rename)
// and leaves the others as they are.
//
// A block preceded by <!-- command: glassllm ARGS --> must match what the
// tool prints (command_output), by the same rule. A training run's figures
// differ from machine to machine, so its block is checked by a looser rule
// (the marker ends with ", a training run"; see training_lines_match).
// doccheck also checks every relative link and #anchor of README.md and docs/
// (check_links).
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

std::vector<std::string> read_lines(const fs::path& p) {
  std::ifstream in(p);
  if (!in) throw std::runtime_error("cannot read " + p.string());
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> region(const fs::path& file, const std::string& name) {
  std::vector<std::string> lines = read_lines(file), out;
  bool inside = false, found = false;
  for (const std::string& line : lines) {
    std::string t = line.substr(line.find_first_not_of(' ') == std::string::npos
                                    ? 0
                                    : line.find_first_not_of(' '));
    if (t == "// doc:begin " + name) {
      inside = found = true;
      continue;
    }
    if (t == "// doc:end " + name) {
      inside = false;
      continue;
    }
    if (inside) out.push_back(line);
  }
  if (!found) throw std::runtime_error(file.string() + ": no region '" + name + "'");
  // Remove the region's common indentation, as the reader sees it in the page.
  std::size_t indent = std::string::npos;
  for (const auto& l : out)
    if (l.find_first_not_of(' ') != std::string::npos)
      indent = std::min(indent, l.find_first_not_of(' '));
  if (indent != std::string::npos)
    for (auto& l : out) l = l.size() >= indent ? l.substr(indent) : "";
  return out;
}

std::vector<std::string> program_output(const fs::path& build,
                                        const std::string& source) {
  std::string name = fs::path(source).stem().string();
  fs::path exe = build / "examples" / name;
  if (!fs::exists(exe)) throw std::runtime_error("example not built: " + exe.string());
  std::string cmd = "'" + exe.string() + "'";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  if (!pipe) throw std::runtime_error("cannot run " + exe.string());
  std::string text;
  std::array<char, 4096> buf{};
  while (std::size_t n = fread(buf.data(), 1, buf.size(), pipe.get()))
    text.append(buf.data(), n);
  int status = pclose(pipe.release());
  if (status != 0)
    throw std::runtime_error(exe.string() + " exited with status " +
                             std::to_string(status));
  return split_lines(text);
}

// ---- comparing a shown output block with the program's output ----------------
//
// The rule (docs/README.md, "Contributing to the docs"): outside numbers the
// text must be identical; an integer (no '.' and no exponent) must be
// identical; a floating-point number x shown on the page and y printed now
// compare as
//   - rounding level (|x| or |y| below the block's rounding level, 1e-6
//     unless the marker says otherwise): by order of magnitude, so
//     max(|x|,|y|) <= 10 * min(|x|,|y|) (signs ignored; zero, the noise
//     vanishing, matches any rounding-level number). Such numbers are rounding noise
//     whose digits depend on the CPU, the BLAS kernels and the compiler; their size does
//     not.
//   - otherwise: to the digits printed, |x - y| at most one unit in the last
//     place the page shows (a value on a rounding boundary may print either way).

constexpr double kRoundingLevel = 1e-6;

struct Token {
  std::string text;
  bool number = false;    // a number standing alone (not part of a name like float64)
  bool floating = false;  // has a '.' or an exponent
  double value = 0;
};

bool name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}

// Splits a line into numbers and the text between them.
std::vector<Token> tokenize(const std::string& line) {
  std::vector<Token> tokens;
  std::string text;
  std::size_t i = 0;
  while (i < line.size()) {
    char c = line[i];
    bool digit_next =
        i + 1 < line.size() && std::isdigit(static_cast<unsigned char>(line[i + 1]));
    bool starts = std::isdigit(static_cast<unsigned char>(c)) ||
                  ((c == '-' || c == '+' || c == '.') && digit_next);
    if (starts && (i == 0 || !name_char(line[i - 1]))) {
      std::size_t end = i;
      while (end < line.size() && std::strchr("0123456789.eE+-", line[end])) ++end;
      // strtod takes the longest number in the span ("1e-10" out of "1e-10-"),
      // and the number must not run into a name or another dot ("0.3.21").
      std::string span = line.substr(i, end - i);
      char* stop = nullptr;
      double v = std::strtod(span.c_str(), &stop);
      std::size_t len = std::size_t(stop - span.c_str());
      bool alone = len > 0 && (i + len == line.size() || !name_char(line[i + len]));
      if (alone) {
        if (!text.empty()) tokens.push_back({text, false, false, 0});
        text.clear();
        std::string t = line.substr(i, len);
        tokens.push_back({t, true, t.find_first_of(".eE") != std::string::npos, v});
        i += len;
        continue;
      }
    }
    text += c;
    ++i;
  }
  if (!text.empty()) tokens.push_back({text, false, false, 0});
  return tokens;
}

// One unit in the last place of a number as printed: 1e-4 for "4.5911", 1 for
// "3.6e+01" (36 shown to a tenth of its exponent's 10).
double last_place(const std::string& printed) {
  std::size_t e = printed.find_first_of("eE");
  std::string mantissa = printed.substr(0, e);
  int exponent = e == std::string::npos ? 0 : std::atoi(printed.c_str() + e + 1);
  std::size_t dot = mantissa.find('.');
  int decimals = dot == std::string::npos ? 0 : int(mantissa.size() - dot - 1);
  return std::pow(10.0, exponent - decimals);
}

bool floats_match(const Token& shown, const Token& now, double rounding_level) {
  double a = std::fabs(shown.value), b = std::fabs(now.value);
  if (a < rounding_level || b < rounding_level) {
    // Rounding noise can also vanish: zero matches any rounding-level number.
    if (a == 0 || b == 0) return std::max(a, b) < rounding_level;
    return std::max(a, b) <= 10 * std::min(a, b);
  }
  double ulp = std::max(last_place(shown.text), last_place(now.text));
  return std::fabs(shown.value - now.value) <= ulp * (1 + 1e-9);
}

bool lines_match(const std::string& shown, const std::string& now,
                 double rounding_level) {
  if (shown == now) return true;
  std::vector<Token> s = tokenize(shown), n = tokenize(now);
  if (s.size() != n.size()) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i].number != n[i].number || s[i].floating != n[i].floating) return false;
    if (s[i].number && s[i].floating) {
      if (!floats_match(s[i], n[i], rounding_level)) return false;
    } else if (s[i].text != n[i].text) {
      return false;
    }
  }
  return true;
}

bool blocks_match(const std::vector<std::string>& shown,
                  const std::vector<std::string>& now, double rounding_level) {
  if (shown.size() != now.size()) return false;
  for (std::size_t i = 0; i < shown.size(); ++i)
    if (!lines_match(shown[i], now[i], rounding_level)) return false;
  return true;
}

// ---- training runs ------------------------------------------------------------
//
// A marker ending in ", a training run" shows the evaluation lines of a
// `glassllm train` run and the sample answers under them:
//     eval at step 200: loss 0.3358 | accuracy 42.5% (copy 42.5%)
//       C 5mtcl9Xg2o= -> 5mtcl9Xg2o   right
// Training repeats on one machine but not across machines (other BLAS
// kernels round differently, and the difference grows with every step), so
// such a block is checked for what stays the same everywhere: which steps are
// evaluated, the text and integers of each line, and the held-out questions;
// the floating-point figures and the model's answers are not compared. The
// command may name a fresh run folder as "$DOCCHECK_RUN" (a temporary folder,
// removed afterwards); the progress lines between evaluations are dropped.

bool strip_suffix(std::string& ref, const std::string& suffix) {
  if (ref.size() < suffix.size() ||
      ref.compare(ref.size() - suffix.size(), suffix.size(), suffix) != 0)
    return false;
  ref.resize(ref.size() - suffix.size());
  return true;
}

// The evaluation lines of a run's output and the answer lines under each.
std::vector<std::string> evaluation_lines(const std::vector<std::string>& output) {
  std::vector<std::string> kept;
  bool in_eval = false;
  for (const auto& line : output) {
    if (line.rfind("eval at step ", 0) == 0) {
      in_eval = true;
      kept.push_back(line);
    } else if (in_eval && line.rfind("  ", 0) == 0) {
      kept.push_back(line);
    } else {
      in_eval = false;
    }
  }
  return kept;
}

bool training_lines_match(const std::string& shown, const std::string& now) {
  // A sample answer: "  QUESTION -> ANSWER   VERDICT"; only the question counts.
  const std::string arrow = " -> ";
  std::size_t a = shown.find(arrow), b = now.find(arrow);
  if (shown.rfind("  ", 0) == 0 || now.rfind("  ", 0) == 0)
    return a != std::string::npos && b != std::string::npos &&
           shown.compare(0, a, now, 0, b) == 0 && a == b;
  std::vector<Token> s = tokenize(shown), n = tokenize(now);
  if (s.size() != n.size()) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i].number != n[i].number || s[i].floating != n[i].floating) return false;
    if (!(s[i].number && s[i].floating) && s[i].text != n[i].text) return false;
  }
  return true;
}

bool training_blocks_match(const std::vector<std::string>& shown,
                           const std::vector<std::string>& now) {
  if (shown.size() != now.size()) return false;
  for (std::size_t i = 0; i < shown.size(); ++i)
    if (!training_lines_match(shown[i], now[i])) return false;
  return true;
}

// "examples/NAME.cpp, rounding level below 1e-4" -> ref and level.
double rounding_level_of(std::string& ref, const std::string& where) {
  const std::string key = ", rounding level below ";
  std::size_t at = ref.find(key);
  if (at == std::string::npos) return kRoundingLevel;
  std::string value = ref.substr(at + key.size());
  ref = ref.substr(0, at);
  char* end = nullptr;
  double level = std::strtod(value.c_str(), &end);
  if (end == value.c_str() || *end != '\0' || !(level > 0))
    throw std::runtime_error(where + ": rounding level '" + value +
                             "' is not a positive number (e.g. 1e-4)");
  return level;
}

// ---- commands ---------------------------------------------------------------
//
// A fenced block preceded by
//     <!-- command: glassllm ARGS -->
// must equal what BUILD/glassllm ARGS prints (stdout and stderr), run from
// SOURCE_DIR through the shell, so ARGS is written as a reader would type
// it: glassllm generate models/demo --prompt "R stressed=". The lesson plans
// show the tool's output this way.
std::vector<std::string> command_output(const fs::path& src, const fs::path& build,
                                        const std::string& command, bool training) {
  const std::string tool = "glassllm ";
  if (command.rfind(tool, 0) != 0)
    throw std::runtime_error("command '" + command + "' does not start with 'glassllm '");
  const fs::path exe = build / "glassllm";
  if (!fs::exists(exe)) throw std::runtime_error("tool not built: " + exe.string());
  std::string cmd = "cd '" + src.string() + "' && '" + exe.string() + "' " +
                    command.substr(tool.size()) + " 2>&1";
  fs::path run_parent;
  if (training) {
    std::string pattern = (fs::temp_directory_path() / "doccheck-run-XXXXXX").string();
    if (!mkdtemp(pattern.data()))
      throw std::runtime_error("cannot make a temporary folder for " + command);
    run_parent = pattern;
    cmd = "DOCCHECK_RUN='" + (run_parent / "run").string() +
          "' && export DOCCHECK_RUN && " + cmd;
  }
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  if (!pipe) throw std::runtime_error("cannot run " + command);
  std::string text;
  std::array<char, 4096> buf{};
  while (std::size_t n = fread(buf.data(), 1, buf.size(), pipe.get()))
    text.append(buf.data(), n);
  pclose(pipe.release());  // a failing command's message is its output
  if (training) {
    fs::remove_all(run_parent);
    return evaluation_lines(split_lines(text));
  }
  return split_lines(text);
}

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

// Checks every relative link of README.md and docs/**.md; prints each broken
// one as "FILE:LINE: link 'TARGET': why" and returns how many there are.
int check_links(const fs::path& src, int& checked) {
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

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: doccheck SOURCE_DIR BUILD_DIR [--update]\n";
    return 2;
  }
  fs::path src = argv[1], build = argv[2];
  bool update = argc > 3 && std::string(argv[3]) == "--update";
  int stale = 0, checked = 0;
  try {
    for (const auto& entry : fs::recursive_directory_iterator(src / "docs")) {
      if (entry.path().extension() != ".md") continue;
      std::vector<std::string> lines = read_lines(entry.path()), out;
      bool changed = false;
      for (std::size_t i = 0; i < lines.size(); ++i) {
        out.push_back(lines[i]);
        const std::string& l = lines[i];
        bool quote = l.rfind("<!-- quote: ", 0) == 0,
             output = l.rfind("<!-- output: ", 0) == 0,
             command = l.rfind("<!-- command: ", 0) == 0;
        if (!quote && !output && !command) continue;
        std::string ref = l.substr(l.find(": ") + 2);
        ref = ref.substr(0, ref.find(" -->"));
        std::string where = entry.path().string() + ":" + std::to_string(i + 1);
        const bool training = command && strip_suffix(ref, ", a training run");
        double rounding_level = quote ? 0 : rounding_level_of(ref, where);
        std::vector<std::string> expected;
        if (quote) {
          auto hash = ref.find('#');
          if (hash == std::string::npos)
            throw std::runtime_error(entry.path().string() + ":" + std::to_string(i + 1) +
                                     ": quote needs FILE#REGION");
          expected = region(src / ref.substr(0, hash), ref.substr(hash + 1));
        } else if (command) {
          expected = command_output(src, build, ref, training);
        } else {
          expected = program_output(build, ref);
        }
        // The fenced block right after the marker.
        std::size_t open = i + 1;
        if (open >= lines.size() || lines[open].rfind("```", 0) != 0)
          throw std::runtime_error(entry.path().string() + ":" + std::to_string(i + 2) +
                                   ": expected a ``` block after the marker");
        std::size_t close = open + 1;
        while (close < lines.size() && lines[close] != "```") ++close;
        std::vector<std::string> shown(lines.begin() + std::ptrdiff_t(open + 1),
                                       lines.begin() + std::ptrdiff_t(close));
        ++checked;
        bool same = quote      ? shown == expected
                    : training ? training_blocks_match(shown, expected)
                               : blocks_match(shown, expected, rounding_level);
        if (!same) {
          ++stale;
          changed = true;
          std::cerr << entry.path().string() << ":" << open + 1 << ": block for '" << ref
                    << "' differs from the " << (quote ? "source" : "program's output")
                    << "\n";
        }
        out.push_back(lines[open]);
        for (const auto& e : same ? shown : expected) out.push_back(e);
        out.push_back("```");
        i = close;
      }
      if (update && changed) {
        fs::path tmp = entry.path();
        tmp += ".tmp";
        {
          std::ofstream o(tmp);
          for (const auto& line : out) o << line << "\n";
        }
        fs::rename(tmp, entry.path());
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "doccheck: " << e.what() << "\n";
    return 1;
  }
  std::cout << "doccheck: " << checked << " blocks, " << stale << " stale"
            << (update && stale ? " (rewritten)" : "") << "\n";
  int links = 0, broken = 0;
  try {
    broken = check_links(src, links);
  } catch (const std::exception& e) {
    std::cerr << "doccheck: " << e.what() << "\n";
    return 1;
  }
  if (links)
    std::cout << "doccheck: " << links << " relative links, " << broken << " broken\n";
  if (broken) return 1;  // --update cannot guess where a link should go
  return stale && !update ? 1 : 0;
}
