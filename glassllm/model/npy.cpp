// npy.cpp: the .npy format (NumPy's format.py documents it): the magic
// "\x93NUMPY", version 1.0, a little-endian uint16 header length, an ASCII
// Python dict {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and a newline so the data starts at a multiple of 64,
// then the elements in C order.
#include "glassllm/model/npy.h"

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "glassllm/engine/node.h"
#include "glassllm/model/files.h"

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

  std::string bytes("\x93NUMPY\x01\x00", 8);  // magic, version 1.0
  bytes += char(header.size() & 0xff);
  bytes += char(header.size() >> 8);
  bytes += header;
  dispatch(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    bytes.append(reinterpret_cast<const char*>(ptr<T>(t)), t.nbytes());
  });
  write_file_safely(path, bytes);
}

Tensor read_npy(const std::string& path) {
  const std::string bytes = read_regular_file(path);
  auto fail = [&](const std::string& why) { return std::runtime_error(path + ": " + why); };
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
  Shape shape;
  std::size_t elements = 1;
  std::string dims = header.substr(open + 10, close - open - 10);
  for (std::size_t i = 0; i < dims.size();) {
    if (dims[i] < '0' || dims[i] > '9') {
      ++i;
      continue;
    }
    std::size_t j = i, d = 0;
    for (; j < dims.size() && dims[j] >= '0' && dims[j] <= '9'; ++j) {
      d = d * 10 + std::size_t(dims[j] - '0');
      if (d > max_elements) throw fail("shape (" + dims + ") is larger than its data");
    }
    if (d != 0 && elements > max_elements / d)
      throw fail("shape (" + dims + ") is larger than its data");
    elements *= d;
    shape.push_back(d);
    i = j;
  }
  if (elements * dtype_size(dtype) != data_bytes)
    throw fail("data of " + std::to_string(data_bytes) + " bytes does not match shape " +
               shape_str(shape));
  Tensor t = empty(shape, dtype);
  dispatch(dtype, [&](auto zero) {
    using T = decltype(zero);
    if (t.nbytes()) std::memcpy(ptr<T>(t), bytes.data() + 10 + header_len, t.nbytes());
  });
  return t;
}

}  // namespace glassllm
