// doccheck: keeps the code and output shown in docs/ equal to the programs in
// examples/ and to what the commands print.
//
// In a docs page, a fenced block preceded by
//     <!-- quote: examples/NAME.cpp#REGION -->
// must equal the lines of examples/NAME.cpp between `// doc:begin REGION` and
// `// doc:end REGION` (the markers themselves excluded). A block that opens
// with ```console and whose first line is a command as a reader types it,
//     $ ./build/examples/NAME        or      $ ./build/glassllm ARGS
// (optionally after variables for it, `$ GLASSLLM_LANG=pt ./build/...`)
// must continue with what that command prints (see command_output).
// "Match" is the rule in docs/README.md, "Contributing to the docs": text
// exactly, floating-point numbers by their size (floats_match() below). The
// fence may raise the rounding level for one block:
//     ```console rounding level below 1e-4
// A training run's figures differ from machine to machine, so its block is
// checked by a looser rule (training_lines_match). In the lesson plans,
// docs/teaching/ and their Portuguese edition docs/pt/ensino/ (shown on a
// projector), no line of a command block may be wider than 100 columns.
//
// Usage: doccheck SOURCE_DIR BUILD_DIR [--update]
// Without --update it reports every stale block and exits 1; with --update it
// rewrites the stale blocks in place (through a temporary file and a rename)
// and leaves the others as they are.
//
// doccheck also checks every relative link and #anchor of README.md and docs/
// (doccheck_links.cpp), and that the pages of docs/pt/ and their English pages
// link to each other (doccheck_translations.cpp).
#include "doccheck.h"

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
using doccheck::read_lines;

namespace {

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
// A `$ ./build/glassllm train ... --out FOLDER` block shows the evaluation
// lines of a training run and the sample answers under them:
//     eval at step 200: loss 0.3358 | accuracy 42.5% (copy 42.5%)
//       C 5mtcl9Xg2o= -> 5mtcl9Xg2o   right
// Training repeats on one machine but not across machines (other BLAS
// kernels round differently, and the difference grows with every step), so
// such a block is checked for what stays the same everywhere: which steps are
// evaluated, the text and integers of each line, and the held-out questions;
// the floating-point figures and the model's answers are not compared. The
// run writes into a fresh temporary folder instead of FOLDER (removed
// afterwards); the progress lines between evaluations are dropped.

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

// "```console rounding level below 1e-4" -> 1e-4; the default without it.
double rounding_level_of(const std::string& fence, const std::string& where) {
  const std::string key = "rounding level below ";
  std::size_t at = fence.find(key);
  if (at == std::string::npos) return kRoundingLevel;
  std::string value = fence.substr(at + key.size());
  char* end = nullptr;
  double level = std::strtod(value.c_str(), &end);
  if (end == value.c_str() || *end != '\0' || !(level > 0))
    throw std::runtime_error(where + ": rounding level '" + value +
                             "' is not a positive number (e.g. 1e-4)");
  return level;
}

// ---- commands ---------------------------------------------------------------
//
// A block that opens with ```console and whose first line is
//     $ ./build/PROGRAM ARGS
// shows a command as a reader types it in the repository's folder after the
// README's two commands (./build/glassllm check models/demo,
// ./build/examples/causal_attention), and under it what the command prints
// (stdout and stderr). doccheck runs that very line through the shell, from
// SOURCE_DIR, with ./build/ standing for BUILD_DIR, so the command a reader
// sees is the command checked. A `./build/glassllm train` run is a training
// run (training_lines_match): its --out folder becomes a fresh temporary one.
// The line may set variables for the command first, as a shell does
// (`$ GLASSLLM_LANG=pt ./build/exercises/...`: NAME=VALUE, VALUE of letters,
// digits and _.-). Every command runs with GLASSLLM_LANG=en unless its line
// sets it, so that what the graders print does not depend on the locale the
// docs are checked in (exercises/messages.h).
const std::string kPrompt = "$ ./build/";

// A command line of a page, split: the variables it sets ("NAME=VALUE ..."),
// and the command from ./build/ on. `found` is false for any other line.
struct CommandLine {
  bool found = false;
  std::string variables, command;
};

CommandLine parse_command_line(const std::string& line) {
  CommandLine c;
  if (line.rfind("$ ", 0) != 0) return c;
  std::size_t at = 2;
  while (line.compare(at, kPrompt.size() - 2, kPrompt.substr(2)) != 0) {
    const std::size_t space = line.find(' ', at);
    if (space == std::string::npos) return c;
    const std::string word = line.substr(at, space - at);
    const std::size_t eq = word.find('=');
    if (eq == 0 || eq == std::string::npos) return c;
    for (std::size_t k = 0; k < word.size(); ++k) {
      const unsigned char ch = static_cast<unsigned char>(word[k]);
      const bool ok = k < eq
                          ? (std::isupper(ch) || ch == '_' || (k > 0 && std::isdigit(ch)))
                          : (k == eq || std::isalnum(ch) || std::strchr("_.-", ch));
      if (!ok) return c;
    }
    c.variables += word + " ";
    at = space + 1;
  }
  c.found = true;
  c.command = line.substr(at);
  return c;
}

// Lessons are shown on a projector: a line wider than this wraps there.
constexpr std::size_t kProjectorColumns = 100;

// The value of `--out VALUE` in a command, as it is written ("" if none).
std::string out_argument(const std::string& command) {
  std::istringstream words(command);
  for (std::string w; words >> w;)
    if (w == "--out" && words >> w) return w;
  return "";
}

std::vector<std::string> command_output(const fs::path& src, const fs::path& build,
                                        const std::string& command, bool training,
                                        const std::string& variables) {
  const std::string program = command.substr(0, command.find(' '));
  const fs::path exe = build / program.substr(kPrompt.size() - 2);
  if (!fs::exists(exe)) throw std::runtime_error("not built: " + exe.string());
  std::string args = command.substr(program.size());
  fs::path run_parent;
  if (training) {
    std::string out = out_argument(args);
    if (out.empty())
      throw std::runtime_error("training run '" + command + "' has no --out");
    std::string pattern = (fs::temp_directory_path() / "doccheck-run-XXXXXX").string();
    if (!mkdtemp(pattern.data()))
      throw std::runtime_error("cannot make a temporary folder for " + command);
    run_parent = pattern;
    args.replace(args.find(" " + out) + 1, out.size(),
                 "'" + (run_parent / "run").string() + "'");
  }
  std::string cmd = "cd '" + src.string() + "' && GLASSLLM_LANG=en " + variables + "'" +
                    exe.string() + "'" + args + " 2>&1";
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

// The old hidden markers kept the command out of sight; they are refused so
// that no page goes back to them.
void refuse_hidden_marker(const std::string& line, const std::string& where) {
  for (const char* old : {"<!-- output: ", "<!-- command: "})
    if (line.rfind(old, 0) == 0)
      throw std::runtime_error(where + ": hidden command marker '" + line.substr(0, 40) +
                               "...'; show the command instead, as the first line of a "
                               "```console block: $ ./build/...");
}

// A lesson plan, shown on a projector: a page of docs/teaching/ or of its
// Portuguese edition, docs/pt/ensino/.
bool lesson_page(const fs::path& page) {
  const fs::path folder = page.parent_path();
  return folder.filename() == "teaching" ||
         (folder.filename() == "ensino" && folder.parent_path().filename() == "pt");
}

// Lines of a lesson plan's command block wider than a projector shows.
int too_wide(const fs::path& page, std::size_t open,
             const std::vector<std::string>& shown) {
  if (!lesson_page(page)) return 0;
  int wide = 0;
  for (std::size_t k = 0; k < shown.size(); ++k)
    if (shown[k].size() > kProjectorColumns) {
      ++wide;
      std::cerr << page.string() << ":" << open + 2 + k << ": " << shown[k].size()
                << " columns; a lesson's command must print at most " << kProjectorColumns
                << " (keep wider output behind a flag such as --wide)\n";
    }
  return wide;
}

struct Block {
  std::size_t open = 0, close = 0;  // the fence lines
  std::vector<std::string> shown;   // the lines between them
};

// The fenced block whose opening fence is lines[open].
Block block_at(const std::vector<std::string>& lines, std::size_t open) {
  Block b;
  b.open = open;
  b.close = open + 1;
  while (b.close < lines.size() && lines[b.close] != "```") ++b.close;
  b.shown.assign(lines.begin() + std::ptrdiff_t(open + 1),
                 lines.begin() + std::ptrdiff_t(std::min(b.close, lines.size())));
  return b;
}

struct Tally {
  int checked = 0, stale = 0, wide = 0;
};

void report_stale(const fs::path& page, std::size_t open, const std::string& what,
                  bool quote) {
  std::cerr << page.string() << ":" << open + 1 << ": block for '" << what
            << "' differs from the " << (quote ? "source" : "program's output") << "\n";
}

// Checks (and with update, rewrites) the quote and command blocks of one page.
void check_page(const fs::path& src, const fs::path& build, const fs::path& page,
                bool update, Tally& tally) {
  std::vector<std::string> lines = read_lines(page), out;
  bool changed = false;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    out.push_back(lines[i]);
    const std::string& l = lines[i];
    const std::string where = page.string() + ":" + std::to_string(i + 1);
    refuse_hidden_marker(l, where);
    const bool quote = l.rfind("<!-- quote: ", 0) == 0;
    const bool command = l.rfind("```console", 0) == 0 && i + 1 < lines.size() &&
                         parse_command_line(lines[i + 1]).found;
    if (!quote && !command) {
      if (l.rfind("```", 0) == 0) {  // copy any other block as it is
        Block b = block_at(lines, i);
        for (std::size_t k = i + 1; k <= b.close && k < lines.size(); ++k)
          out.push_back(lines[k]);
        i = b.close;
      }
      continue;
    }
    std::vector<std::string> expected;
    std::string what;
    Block b;
    bool same = false;
    if (quote) {
      what = l.substr(12, l.find(" -->") - 12);
      auto hash = what.find('#');
      if (hash == std::string::npos)
        throw std::runtime_error(where + ": quote needs FILE#REGION");
      expected = region(src / what.substr(0, hash), what.substr(hash + 1));
      if (i + 1 >= lines.size() || lines[i + 1].rfind("```", 0) != 0)
        throw std::runtime_error(page.string() + ":" + std::to_string(i + 2) +
                                 ": expected a ``` block after the marker");
      b = block_at(lines, i + 1);
      out.push_back(lines[b.open]);
      same = b.shown == expected;
    } else {
      b = block_at(lines, i);
      const CommandLine c = parse_command_line(lines[i + 1]);
      what = lines[i + 1].substr(2);
      const bool training = c.command.rfind("./build/glassllm train ", 0) == 0;
      expected = command_output(src, build, c.command, training, c.variables);
      std::vector<std::string> shown(b.shown.begin() + 1, b.shown.end());
      same = training ? training_blocks_match(shown, expected)
                      : blocks_match(shown, expected, rounding_level_of(l, where));
      tally.wide += too_wide(page, b.open, b.shown);
      expected.insert(expected.begin(), lines[i + 1]);
    }
    ++tally.checked;
    if (!same) {
      ++tally.stale;
      changed = true;
      report_stale(page, b.open, what, quote);
    }
    for (const auto& e : same ? b.shown : expected) out.push_back(e);
    out.push_back("```");
    i = b.close;
  }
  if (update && changed) {
    fs::path tmp = page;
    tmp += ".tmp";
    {
      std::ofstream o(tmp);
      for (const auto& line : out) o << line << "\n";
    }
    fs::rename(tmp, page);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: doccheck SOURCE_DIR BUILD_DIR [--update]\n";
    return 2;
  }
  fs::path src = argv[1], build = argv[2];
  bool update = argc > 3 && std::string(argv[3]) == "--update";
  Tally tally;
  try {
    for (const auto& entry : fs::recursive_directory_iterator(src / "docs"))
      if (entry.path().extension() == ".md")
        check_page(src, build, entry.path(), update, tally);
  } catch (const std::exception& e) {
    std::cerr << "doccheck: " << e.what() << "\n";
    return 1;
  }
  std::cout << "doccheck: " << tally.checked << " blocks, " << tally.stale << " stale"
            << (update && tally.stale ? " (rewritten)" : "") << "\n";
  if (tally.wide)
    std::cout << "doccheck: " << tally.wide << " lesson lines over " << kProjectorColumns
              << " columns\n";
  int links = 0, broken = 0, paired = 0, unpaired = 0;
  try {
    broken = doccheck::check_links(src, links);
    unpaired = doccheck::check_translations(src, paired);
  } catch (const std::exception& e) {
    std::cerr << "doccheck: " << e.what() << "\n";
    return 1;
  }
  if (links)
    std::cout << "doccheck: " << links << " relative links, " << broken << " broken\n";
  if (paired)
    std::cout << "doccheck: " << paired << " translated pages and links, " << unpaired
              << " without their partner's link\n";
  if (broken || tally.wide || unpaired) return 1;  // --update can fix none of them
  return tally.stale && !update ? 1 : 0;
}
