// write_npy and read_npy (glassllm/io/npy.cpp): the bytes NumPy's format
// 1.0 prescribes, written out by hand here, and the errors for files that
// are not what read_npy accepts.
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "glassllm/engine/ops.h"
#include "glassllm/io/files.h"
#include "glassllm/io/npy.h"

using namespace glassllm;

namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("glassllm_test_npy_" + name))
      .string();
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void spit(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary)
      .write(bytes.data(), std::streamsize(bytes.size()));
}

// What NumPy 1.x writes for np.save(path, a) with a C-order float array:
// magic, version 1.0, the header length (little-endian uint16), the header
// dict padded with spaces to make magic + length + header a multiple of 64,
// ending in a newline.
std::string numpy_header(const std::string& descr, const std::string& shape) {
  std::string dict =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  std::size_t unpadded = 10 + dict.size() + 1;
  dict += std::string((64 - unpadded % 64) % 64, ' ') + "\n";
  std::string out = "\x93NUMPY\x01";
  out += '\0';
  out += char(dict.size() & 0xff);
  out += char(dict.size() >> 8);
  return out + dict;
}

}  // namespace

TEST_CASE("write_npy writes NumPy's header and the elements in C order") {
  std::string path = temp_path("a.npy");
  struct Case {
    Shape shape;
    std::string shape_text;  // as NumPy spells it in the header
  };
  for (DType dt : {DType::float32, DType::float64}) {
    CAPTURE(dtype_name(dt));
    for (const Case& c : {Case{{2, 3}, "(2, 3)"}, Case{{3}, "(3,)"}, Case{{}, "()"},
                          Case{{1, 3, 98}, "(1, 3, 98)"}}) {
      CAPTURE(c.shape_text);
      Tensor t = randn(c.shape, 4, dt);
      write_npy(path, t);
      std::string bytes = slurp(path);
      std::string header =
          numpy_header(dt == DType::float32 ? "<f4" : "<f8", c.shape_text);
      REQUIRE(bytes.size() == header.size() + t.nbytes());
      CHECK(header.size() % 64 == 0);
      CHECK(bytes.substr(0, header.size()) == header);
      const char* data = dt == DType::float32
                             ? reinterpret_cast<const char*>(t.data<float>())
                             : reinterpret_cast<const char*>(t.data<double>());
      CHECK(std::memcmp(bytes.data() + header.size(), data, t.nbytes()) == 0);
      // and back
      Tensor back = read_npy(path);
      CHECK(back.dtype() == dt);
      CHECK(back.shape() == c.shape);
      CHECK(back.to_vector() == t.to_vector());
    }
  }
  std::filesystem::remove(path);
}

TEST_CASE("read_npy names the file and what is wrong with it") {
  std::string path = temp_path("bad.npy");
  std::string good = numpy_header("<f4", "(2, 3)") + std::string(24, '\0');
  spit(path, good.substr(0, good.size() - 4));  // one float short
  CHECK_THROWS_WITH_AS(read_npy(path), (path + ": data shorter than shape (2,3)").c_str(),
                       std::runtime_error);
  spit(path, numpy_header("<i8", "(2, 3)") + std::string(48, '\0'));
  CHECK_THROWS_WITH_AS(read_npy(path),
                       (path + ": only '<f4' and '<f8' arrays are supported").c_str(),
                       std::runtime_error);
  spit(path, "hello");
  CHECK_THROWS_WITH_AS(read_npy(path), (path + ": not a version 1 .npy file").c_str(),
                       std::runtime_error);
  std::filesystem::remove(path);
  CHECK_THROWS_WITH_AS(read_npy(path),
                       (path + ": cannot read: No such file or directory").c_str(),
                       std::runtime_error);
}

TEST_CASE("write_npy names a path it cannot write") {
  std::string path = temp_path("no_such_dir/x.npy");
  CHECK_THROWS_WITH_AS(write_npy(path, zeros({2})),
                       doctest::Contains((path + ": cannot write: the folder ").c_str()),
                       WriteError);
}
