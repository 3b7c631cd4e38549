// npy.cpp: the .npy format (NumPy's format.py documents it): the magic
// "\x93NUMPY", version 1.0, a little-endian uint16 header length, an ASCII
// Python dict {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and a newline so the data starts at a multiple of 64,
// then the elements in C order.
//
// Writing is xtensor's xt::dump_npy, which produces exactly those bytes (the
// same, byte for byte, as the writer this file used to hold, on float32 and
// float64 arrays of shapes (), (3,), (0,), (2,3), (2,0,4), (1,3,98) and
// (1000,3)); this file only adds the temporary file and the rename.
//
// Reading stays written by hand, because xt::load_npy (0.24) does not do
// what read_npy promises: it needs the element type at compile time (a
// '<f8' file read as float throws "Cast error: formats not matching"), so
// the dtype would have to be parsed here anyway; it does not check that the
// data is all there (a file cut short loads without an error, its missing
// elements are whatever the buffer held: zeros when we tried); and its
// errors do not name the file ("io error: failed to open a file.").
#include "glassllm/model/npy.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <vector>
#include <xtensor/xadapt.hpp>
#include <xtensor/xnpy.hpp>

#include "glassllm/engine/node.h"

namespace glassllm {

void write_npy(const std::string& path, const Tensor& t) {
  check_defined("write_npy", t);
  std::string bytes;  // the whole file: magic, version, header, data
  dispatch(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    bytes = xt::dump_npy(xt::adapt(ptr<T>(t), t.size(), xt::no_ownership(), t.shape()));
  });
  // Through a temporary file renamed into place: an existing file at `path`
  // is replaced whole or not at all.
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(path + ": cannot open for writing");
    out.write(bytes.data(), std::streamsize(bytes.size()));
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
