// doccheck: keeps the code and output shown in docs/ equal to the programs in
// examples/ and to what they print.
//
// In a docs page, a fenced block preceded by
//     <!-- quote: examples/NAME.cpp#REGION -->
// must equal the lines of examples/NAME.cpp between `// doc:begin REGION` and
// `// doc:end REGION` (the markers themselves excluded), and a fenced block
// preceded by
//     <!-- output: examples/NAME.cpp -->
// must equal what the built program BUILD/examples/NAME prints on stdout.
//
// Usage: doccheck SOURCE_DIR BUILD_DIR [--update]
// Without --update it reports every stale block and exits 1; with --update it
// rewrites the blocks in place (through a temporary file and a rename).
#include <array>
#include <cstdio>
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
             output = l.rfind("<!-- output: ", 0) == 0;
        if (!quote && !output) continue;
        std::string ref = l.substr(l.find(": ") + 2);
        ref = ref.substr(0, ref.find(" -->"));
        std::vector<std::string> expected;
        if (quote) {
          auto hash = ref.find('#');
          if (hash == std::string::npos)
            throw std::runtime_error(entry.path().string() + ":" + std::to_string(i + 1) +
                                     ": quote needs FILE#REGION");
          expected = region(src / ref.substr(0, hash), ref.substr(hash + 1));
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
        if (shown != expected) {
          ++stale;
          changed = true;
          std::cerr << entry.path().string() << ":" << open + 1 << ": block for '" << ref
                    << "' differs from the " << (quote ? "source" : "program's output")
                    << "\n";
        }
        out.push_back(lines[open]);
        for (const auto& e : expected) out.push_back(e);
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
  return stale && !update ? 1 : 0;
}
