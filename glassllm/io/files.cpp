// files.cpp: safe reads, safe writes, and printing text that came from a
// file (files.h). POSIX calls rather than iostreams, because the checks that
// matter here (the file's type before it is opened, a non-blocking open,
// fsync, the result of close) are not visible through a stream.
#include "glassllm/io/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace glassllm {

namespace fs = std::filesystem;

namespace {

// "" for a regular file, else what it is, for "cannot read: it is ...".
std::string not_regular(const struct stat& st) {
  if (S_ISREG(st.st_mode)) return "";
  if (S_ISDIR(st.st_mode)) return "a folder";
  if (S_ISFIFO(st.st_mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) return "a device";
  if (S_ISSOCK(st.st_mode)) return "a socket";
  return "not a regular file";
}

void fsync_folder(const std::string& path) {
  std::string dir = fs::path(path).parent_path().string();
  int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

}  // namespace

RegularFile::~RegularFile() {
  if (fd >= 0) ::close(fd);
}

RegularFile open_regular_file(const std::string& path, std::uint64_t max_bytes,
                              const char* kind) {
  auto fail = [&](const std::string& why) {
    return std::runtime_error(path + ": cannot read: " + why);
  };
  // stat first: opening a FIFO blocks until a writer comes, and opening a
  // device can have effects of its own.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw fail(std::strerror(errno));
  if (std::string what = not_regular(st); !what.empty())
    throw fail("it is " + what + "; expected a regular file");
  // The file could be swapped for a FIFO between stat and open: O_NONBLOCK
  // makes that open return at once, and fstat on the descriptor decides.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) throw fail(std::strerror(errno));
  RegularFile file(fd, 0);
  if (::fstat(fd, &st) != 0) throw fail(std::strerror(errno));
  if (std::string what = not_regular(st); !what.empty())
    throw fail("it is " + what + "; expected a regular file");
  if (std::uint64_t(st.st_size) > max_bytes)
    throw fail(std::to_string(st.st_size) + " bytes, more than the " +
               std::to_string(max_bytes) + " " + kind + " may have");
  // Reads never block on a regular file; clear the flag all the same.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  file.size = std::uint64_t(st.st_size);
  return file;
}

std::string read_regular_file(const std::string& path, std::uint64_t max_bytes,
                              const char* kind) {
  const RegularFile file = open_regular_file(path, max_bytes, kind);
  std::string bytes;
  bytes.reserve(std::size_t(file.size));
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(file.fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error(path + ": cannot read: " + std::strerror(errno));
    if (n == 0) break;
    if (bytes.size() + std::size_t(n) > max_bytes)  // it grew while we read
      throw std::runtime_error(path + ": cannot read: more than the " +
                               std::to_string(max_bytes) + " bytes " + kind +
                               " may have");
    bytes.append(buf, std::size_t(n));
  }
  return bytes;
}

namespace {

WriteError cannot_write(const std::string& path, const std::string& what, int err) {
  return WriteError(path + ": cannot write: " + what +
                    (err ? std::string(": ") + std::strerror(err) : ""));
}

// What is at `path` now must be a regular file (or nothing), in a folder
// that exists: a rename would otherwise replace a folder's entry, a FIFO or
// /dev/null. Returns whether a file is there, with its stat in `old`.
bool check_output_path(const std::string& path, struct stat& old) {
  if (path.empty()) throw WriteError("cannot write a file with an empty name");
  const bool exists = ::stat(path.c_str(), &old) == 0;
  if (!exists && errno == ELOOP)
    throw cannot_write(
        path, "it is a loop of symbolic links; expected a regular file or a new name", 0);
  if (exists && !S_ISREG(old.st_mode))
    throw cannot_write(
        path, "it is " + not_regular(old) + "; expected a regular file or a new name", 0);
  const std::string dir = fs::path(path).parent_path().string();
  if (!dir.empty()) {
    struct stat d {};
    if (::stat(dir.c_str(), &d) != 0 || !S_ISDIR(d.st_mode))
      throw cannot_write(path, "the folder " + dir + " does not exist", 0);
  }
  return exists;
}

// A fresh temporary file beside `path`, opened for writing; its name goes to
// `tmp`. O_EXCL never opens (let alone truncates) a file someone else made,
// such as the user's own "out.npy.tmp".
int open_temporary_beside(const std::string& path, std::string& tmp) {
  static std::atomic<unsigned> counter{0};
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    char suffix[48];
    std::snprintf(suffix, sizeof suffix, ".tmp-%ld-%u", long(::getpid()), counter++);
    // A name near the 255-byte limit has no room for the suffix: a short
    // hidden name in the same folder instead.
    const std::string name = fs::path(path).filename().string();
    tmp = name.size() + std::strlen(suffix) <= 255
              ? path + suffix
              : (fs::path(path).parent_path() / (".glassllm" + std::string(suffix)))
                    .string();
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && (errno != EEXIST || attempt > 100))
      throw cannot_write(path, "creating a temporary file beside it", errno);
  }
  return fd;
}

}  // namespace

void write_file_safely(const std::string& path, std::string_view bytes) {
  struct stat old {};
  const bool exists = check_output_path(path, old);
  std::string tmp;
  int fd = open_temporary_beside(path, tmp);
  // From here on the temporary file is ours: any failure removes it.
  auto fail_and_remove = [&](const std::string& what) {
    const int err = errno;
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.c_str());
    return cannot_write(path, what + " " + tmp, err);
  };
  if (exists) ::fchmod(fd, old.st_mode & 07777);  // keep the old file's permissions
  for (std::size_t done = 0; done < bytes.size();) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;
      throw fail_and_remove("writing");
    }
    done += std::size_t(n);
  }
  // The data must be on disk before the rename makes it the file's content;
  // otherwise a power cut could leave the new name with missing bytes.
  if (::fsync(fd) != 0) throw fail_and_remove("flushing");
  // close can report a write error that write did not (NFS, quotas).
  const int closed = ::close(fd);
  fd = -1;
  if (closed != 0) throw fail_and_remove("closing");
  if (::rename(tmp.c_str(), path.c_str()) != 0) throw fail_and_remove("renaming");
  // Flush the folder's entry too, so the rename itself survives a crash.
  fsync_folder(path);
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0)
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  std::error_code ea, eb;
  fs::path pa = fs::absolute(a, ea), pb = fs::absolute(b, eb);
  if (ea || eb) return false;
  pa = fs::weakly_canonical(pa, ea);
  pb = fs::weakly_canonical(pb, eb);
  if (ea || eb) return false;
  return pa == pb;
}

bool inside_folder(const std::string& path, const std::string& folder) {
  std::error_code ec;
  fs::path p = fs::absolute(path, ec);
  if (ec) return false;
  p = fs::weakly_canonical(p, ec);
  if (ec) return false;
  for (; !p.empty(); p = p.parent_path()) {
    if (same_file(p.string(), folder)) return true;
    if (p == p.parent_path()) break;  // the root
  }
  return false;
}

void refuse_output_over_inputs(const std::string& option, const std::string& out,
                               const std::vector<std::string>& inputs) {
  if (out.empty()) throw std::invalid_argument(option + " is empty; give a file name");
  for (const std::string& in : inputs)
    if (same_file(out, in))
      throw std::invalid_argument(option + " " + out + " is the command's input " + in +
                                  "; writing it would destroy it; choose another path");
}

std::string printable(std::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  auto escape = [&](unsigned char c) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02x", c);
    out += buf;
  };
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::size_t len = utf8_length(text, i);
    const bool control =
        (c < 0x20 && !(keep_newlines && (c == '\n' || c == '\t'))) || c == 0x7f ||
        // U+0080..U+009F (C2 80..C2 9F): the C1 control characters
        (len == 2 && c == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0);
    if (len == 0 || control) {
      for (std::size_t k = 0; k < std::max<std::size_t>(len, 1); ++k)
        escape(static_cast<unsigned char>(text[i + k]));
      i += std::max<std::size_t>(len, 1);
      continue;
    }
    out.append(text.substr(i, len));
    i += len;
  }
  return out;
}

std::size_t utf8_length(std::string_view text, std::size_t i) {
  const auto c = static_cast<unsigned char>(text[i]);
  if (c < 0x80) return 1;
  // The length from the lead byte, then continuation bytes 10xxxxxx; overlong
  // forms, surrogates and code points past U+10FFFF are not UTF-8.
  const std::size_t len = c >= 0xF5   ? 0
                          : c >= 0xF0 ? 4
                          : c >= 0xE0 ? 3
                          : c >= 0xC2 ? 2
                                      : 0;
  if (len == 0 || i + len > text.size()) return 0;
  for (std::size_t k = 1; k < len; ++k)
    if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) return 0;
  const auto c1 = static_cast<unsigned char>(text[i + 1]);
  if (len == 3 && ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 >= 0xA0))) return 0;
  if (len == 4 && ((c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 >= 0x90))) return 0;
  return len;
}

}  // namespace glassllm
