// files.h: reading and writing files so that no input can hang a command,
// exhaust its memory or destroy what the user has. Every file GlassLM reads
// or writes goes through these (checkpoints, config.json, tokenizers, text
// tasks, .npy, traces, run folders).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace glassllm {

/// Thrown when an output cannot be written (disk full, no permission, a
/// missing folder). The old file, if any, is left as it was.
struct WriteError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The whole content of a regular file. Anything else (a FIFO, a device, a
/// folder, a socket) is refused without opening it for long enough to block:
/// the type is checked before the open and again on the open descriptor,
/// which is opened non-blocking. A file larger than `max_bytes` is refused
/// before it is read. Throws std::runtime_error, one line:
///   "<path>: cannot read: it is a FIFO (named pipe); expected a regular file"
///   "<path>: cannot read: 2147483648 bytes, more than the 16777216 a config file may
///   have"
/// `kind` names the file in that last message ("a config file").
std::string read_regular_file(const std::string& path,
                              std::uint64_t max_bytes = std::uint64_t(1) << 40,
                              const char* kind = "this file");

/// Throws std::invalid_argument unless `text` is JSON in which no object
/// has the same key twice, one line: "invalid JSON: <the parser's message,
/// with the position>" or "duplicate key \"x\"" (a JSON parser alone
/// keeps the last of two equal keys, silently). Every JSON file GlassLM
/// reads is checked so.
void check_json(std::string_view text);

/// A regular file open for reading (its descriptor closes with it) and its
/// size: what read_regular_file reads from, and what the safetensors reader
/// maps into memory.
class RegularFile {
 public:
  int fd = -1;
  std::uint64_t size = 0;
  RegularFile(int fd, std::uint64_t size) : fd(fd), size(size) {}
  RegularFile(RegularFile&& other) noexcept : fd(other.fd), size(other.size) {
    other.fd = -1;
  }
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;
  ~RegularFile();
};

/// Opens `path` as read_regular_file does (the type checked before the open
/// and on the descriptor, the open non-blocking, the size limit), with the
/// same errors.
RegularFile open_regular_file(const std::string& path,
                              std::uint64_t max_bytes = std::uint64_t(1) << 40,
                              const char* kind = "this file");

/// Writes `bytes` to `path` safely: into a new temporary file in the same
/// folder (a fresh name, never an existing file), then flush, fsync, a
/// checked close, and a rename over `path`. A reader sees the old file or
/// the new one, never half of one. On any failure the temporary file is
/// removed, `path` is untouched, and WriteError says what failed, e.g.
///   "out.npy: cannot write: writing out.npy.tmp-3f9a1c: No space left on device"
/// An existing `path` that is not a regular file (a folder, a FIFO,
/// /dev/null) is refused, not replaced. An existing file keeps its permissions.
void write_file_safely(const std::string& path, std::string_view bytes);

/// True if `a` and `b` name the same file: the same device and inode when
/// both exist (so hard links and symbolic links count), else the same path
/// once made absolute and normalised (std::filesystem::weakly_canonical).
bool same_file(const std::string& a, const std::string& b);

/// True if `path` is `folder` or lies inside it (both resolved as same_file does).
bool inside_folder(const std::string& path, const std::string& folder);

/// Throws std::invalid_argument if the output `out` (given as `option`, e.g.
/// "--out") is the same file as one of `inputs`:
///   "--out ckpt/model.safetensors is the command's input ckpt/model.safetensors;
///    writing it would destroy it; choose another path"
void refuse_output_over_inputs(const std::string& option, const std::string& out,
                               const std::vector<std::string>& inputs);

/// `text` safe to print on a terminal: control characters (C0 except, with
/// keep_newlines, '\n' and '\t'; DEL; the C1 range U+0080..U+009F) and bytes
/// that are not UTF-8 are written as \xNN, so a file cannot move the cursor,
/// change colours or retitle the window. Printable UTF-8 is kept as it is.
std::string printable(std::string_view text, bool keep_newlines = false);

/// The length of the UTF-8 character starting at text[i] (1 to 4), or 0 if
/// the bytes there are not UTF-8 (a stray continuation byte, an overlong
/// form, a surrogate, a truncated sequence).
std::size_t utf8_length(std::string_view text, std::size_t i);

}  // namespace glassllm
