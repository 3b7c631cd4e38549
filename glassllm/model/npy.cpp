// npy.cpp: the .npy format (NumPy's format.py documents it): the magic
// "\x93NUMPY", version 1.0, a little-endian uint16 header length, an ASCII
// Python dict {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and a newline so the data starts at a multiple of 64,
// then the elements in C order.
#include "glassllm/model/npy.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <vector>

#include "glassllm/engine/node.h"

namespace glassllm {

void write_npy(const std::string& path, const Tensor& t) {
  check_defined("write_npy", t);
  std::string shape = "(";
  for (std::size_t d : t.shape()) shape += std::to_string(d) + ", ";
  if (t.ndim() > 1)
    shape.erase(shape.size() - 2);  // NumPy writes (3,) but (2, 3)
  else if (t.ndim() == 1)
    shape.erase(shape.size() - 1);
  shape += ")";
  std::string header = std::string("{'descr': '") +
                       (t.dtype() == DType::float32 ? "<f4" : "<f8") +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  std::size_t total = 10 + header.size() + 1;  // magic(6) version(2) len(2) ... '\n'
  header += std::string((64 - total % 64) % 64, ' ') + "\n";

  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(path + ": cannot open for writing");
    out.write("\x93NUMPY\x01\x00", 8);
    unsigned char len[2] = {static_cast<unsigned char>(header.size() & 0xff),
                            static_cast<unsigned char>(header.size() >> 8)};
    out.write(reinterpret_cast<const char*>(len), 2);
    out << header;
    dispatch(t.dtype(), [&](auto zero) {
      using T = decltype(zero);
      out.write(reinterpret_cast<const char*>(ptr<T>(t)), std::streamsize(t.nbytes()));
    });
    if (!out) throw std::runtime_error(path + ": write failed");
  }
  std::filesystem::rename(tmp, path);
}

Tensor read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open");
  char magic[8];
  unsigned char len[2];
  if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0 || magic[6] != 1)
    throw std::runtime_error(path + ": not a version 1 .npy file");
  if (!in.read(reinterpret_cast<char*>(len), 2))
    throw std::runtime_error(path + ": truncated header");
  std::string header(std::size_t(len[0] | (len[1] << 8)), '\0');
  if (!in.read(header.data(), std::streamsize(header.size())))
    throw std::runtime_error(path + ": truncated header");
  DType dtype;
  if (header.find("'descr': '<f4'") != std::string::npos)
    dtype = DType::float32;
  else if (header.find("'descr': '<f8'") != std::string::npos)
    dtype = DType::float64;
  else
    throw std::runtime_error(path + ": only '<f4' and '<f8' arrays are supported");
  if (header.find("'fortran_order': False") == std::string::npos)
    throw std::runtime_error(path + ": only C-order arrays are supported");
  auto open = header.find("'shape': (");
  auto close = header.find(')', open);
  if (open == std::string::npos || close == std::string::npos)
    throw std::runtime_error(path + ": no shape in the header");
  Shape shape;
  std::string dims = header.substr(open + 10, close - open - 10);
  for (std::size_t i = 0; i < dims.size();) {
    if (dims[i] < '0' || dims[i] > '9') {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < dims.size() && dims[j] >= '0' && dims[j] <= '9') ++j;
    shape.push_back(std::stoull(dims.substr(i, j - i)));
    i = j;
  }
  Tensor t = empty(shape, dtype);
  dispatch(dtype, [&](auto zero) {
    using T = decltype(zero);
    if (!in.read(reinterpret_cast<char*>(ptr<T>(t)), std::streamsize(t.nbytes())))
      throw std::runtime_error(path + ": data shorter than shape " + shape_str(shape));
  });
  return t;
}

}  // namespace glassllm
