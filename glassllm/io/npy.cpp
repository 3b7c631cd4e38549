// npy.cpp: the .npy format (NumPy's format.py documents it): the magic
// "\x93NUMPY", version 1.0, a little-endian uint16 header length, an ASCII
// Python dict {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and a newline so the data starts at a multiple of 64,
// then the elements in C order.
//
// Writing is xtensor's xt::dump_npy, which produces exactly those bytes (the
// same, byte for byte, as the writer this file used to hold, on float32 and
// float64 arrays of shapes (), (3,), (0,), (2,3), (2,0,4), (1,3,98) and
// (1000,3)); this file writes them with write_file_safely (files.h).
//
// Reading stays written by hand, because xt::load_npy (0.24) does not do
// what read_npy promises: it needs the element type at compile time (a
// '<f8' file read as float throws "Cast error: formats not matching"), so
// the dtype would have to be parsed here anyway; it does not check that the
// data is all there (a file cut short loads without an error, its missing
// elements are whatever the buffer held: zeros when we tried); and its
// errors do not name the file ("io error: failed to open a file.").
#include "glassllm/io/npy.h"

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <vector>
#include <xtensor/xadapt.hpp>
#include <xtensor/xnpy.hpp>

#include "glassllm/engine/tensor.h"
#include "glassllm/io/files.h"

namespace glassllm {

void write_npy(const std::string& path, const Tensor& t) {
  if (!t.defined()) throw std::invalid_argument("write_npy: tensor is undefined");
  std::string bytes;  // the whole file: magic, version, header, data
  dispatch(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    bytes = xt::dump_npy(xt::adapt(t.data<T>(), t.size(), xt::no_ownership(), t.shape()));
  });
  // An existing file at `path` is replaced whole or not at all (files.h).
  write_file_safely(path, bytes);
}

namespace {

struct NpyShape {
  Shape shape;
  std::size_t elements = 1;
  bool too_many = false;  // more elements than max_elements
};

// The dimensions the header writes as "3, 4" (or "5," or ""), and their
// product, counted against max_elements dimension by dimension so that it
// cannot overflow.
NpyShape parse_npy_shape(const std::string& dims, std::size_t max_elements) {
  NpyShape out;
  bool has_zero = false;
  for (std::size_t i = 0; i < dims.size();) {
    if (dims[i] < '0' || dims[i] > '9') {
      ++i;
      continue;
    }
    std::size_t j = i, d = 0;
    constexpr std::size_t kHuge = std::size_t(1) << 62;  // more than any file holds
    for (; j < dims.size() && dims[j] >= '0' && dims[j] <= '9'; ++j)
      d = std::min(d * 10 + std::size_t(dims[j] - '0'), kHuge);  // never overflows
    has_zero |= d == 0;
    if (d != 0 && out.elements > max_elements / d)
      out.too_many = true;  // more elements than bytes, unless another dimension is 0
    else
      out.elements *= d;
    out.shape.push_back(d);
    i = j;
  }
  if (has_zero) {
    out.too_many = false;
    out.elements = 0;
  }
  return out;
}

}  // namespace

Tensor read_npy(const std::string& path) {
  const std::string bytes = read_regular_file(path);
  auto fail = [&](const std::string& why) {
    return std::runtime_error(path + ": " + why);
  };
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0 || bytes[6] != 1)
    throw fail("not a version 1 .npy file");
  const std::size_t header_len = std::size_t(static_cast<unsigned char>(bytes[8])) |
                                 std::size_t(static_cast<unsigned char>(bytes[9])) << 8;
  if (bytes.size() < 10 + header_len) throw fail("truncated header");
  const std::string header = bytes.substr(10, header_len);
  DType dtype;
  if (header.find("'descr': '<f4'") != std::string::npos)
    dtype = DType::float32;
  else if (header.find("'descr': '<f8'") != std::string::npos)
    dtype = DType::float64;
  else
    throw fail("only '<f4' and '<f8' arrays are supported");
  if (header.find("'fortran_order': False") == std::string::npos)
    throw fail("only C-order arrays are supported");
  auto open = header.find("'shape': (");
  auto close = header.find(')', open);
  if (open == std::string::npos || close == std::string::npos)
    throw fail("no shape in the header");
  // The element count is checked against the bytes there are before anything
  // is allocated, dimension by dimension, so it cannot overflow.
  const std::size_t data_bytes = bytes.size() - 10 - header_len;
  const std::size_t max_elements = data_bytes / dtype_size(dtype);
  const std::string dims = header.substr(open + 10, close - open - 10);
  auto [shape, elements, too_many] = parse_npy_shape(dims, max_elements);
  if (too_many || elements * dtype_size(dtype) != data_bytes)
    throw fail(std::string(too_many || data_bytes < elements * dtype_size(dtype)
                               ? "data shorter"
                               : "data longer") +
               " than shape " + shape_str(shape));
  Tensor t = empty(shape, dtype);
  dispatch(dtype, [&](auto zero) {
    using T = decltype(zero);
    if (t.nbytes())
      std::memcpy(t.mutable_data<T>(), bytes.data() + 10 + header_len, t.nbytes());
  });
  return t;
}

}  // namespace glassllm
