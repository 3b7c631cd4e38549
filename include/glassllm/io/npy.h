// npy.h: NumPy's .npy file format, so logits can be compared with NumPy:
//   np.load("logits.npy")
#pragma once

#include <string>

#include "glassllm/engine/tensor.h"

namespace glassllm {

/// Writes t as a version 1.0 .npy file ('<f4' or '<f8', C order) with
/// write_file_safely (files.h): on any I/O error it throws WriteError naming
/// the path, and the old file is left as it was.
void write_npy(const std::string& path, const Tensor& t);

/// Reads a .npy file of little-endian float32 or float64 in C order; throws
/// std::runtime_error naming the path and what is wrong otherwise.
Tensor read_npy(const std::string& path);

}  // namespace glassllm
