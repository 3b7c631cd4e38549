// Fixtures shared by the checkpoint tests (test_checkpoint.cpp,
// test_safetensors.cpp, and test_files.cpp's folders): temporary folders, a
// tiny model and tokenizer, and safetensors files built by hand, byte by byte.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "glassllm/io/checkpoint.h"

namespace glassllm::test::ckpt {

namespace fs = std::filesystem;

// doctest::Contains for a message built at run time (it takes doctest::String).
inline doctest::Contains contains(const std::string& text) {
  return doctest::Contains(text.c_str());
}

inline std::string corpus_path(const std::string& name) {
  return std::string(GLASSLLM_TEST_DATA) + "/checkpoint_corpus/" + name;
}

// A fresh, empty folder under /tmp, removed again at the end of the test.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() /
             ("glassllm_test_" + name + "_" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string operator/(const std::string& file) const { return (path / file).string(); }
};

inline void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

inline std::vector<std::string> files_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// The small model every checkpoint test uses: vocab 5 (the tokenizer's
// a, b, c, d and unk), d_model 8, 2 layers, H = 2, Hkv = 1 (hd = 4), d_ff 16.
inline Config tiny_config() {
  Config cfg;
  cfg.vocab_size = 5;
  cfg.d_model = 8;
  cfg.n_layers = 2;
  cfg.n_heads = 2;
  cfg.n_kv_heads = 1;
  cfg.d_ff = 16;
  cfg.max_len = 8;
  return cfg;
}
inline Tokenizer tiny_tokenizer() {
  return Tokenizer({"a", "b", "c", "d"});
}

// True when two tensors have the same shape, dtype and bytes (nan == nan).
inline bool bit_equal(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  const void* pa = a.dtype() == DType::float32 ? (const void*)a.data<float>()
                                               : (const void*)a.data<double>();
  const void* pb = b.dtype() == DType::float32 ? (const void*)b.data<float>()
                                               : (const void*)b.data<double>();
  return std::memcmp(pa, pb, a.nbytes()) == 0;
}

// A safetensors file built by hand, without write_safetensors: entries of
// (name, dtype, shape, raw little-endian bytes), laid out in order.
struct RawTensor {
  std::string name, dtype;
  Shape shape;
  std::string bytes;
};
inline void write_raw_safetensors(const std::string& path,
                                  const std::vector<RawTensor>& tensors) {
  std::string header = "{\"__metadata__\":{\"format\":\"pt\"}";
  std::string data;
  for (const RawTensor& t : tensors) {
    std::string shape;
    for (std::size_t d : t.shape) shape += (shape.empty() ? "" : ",") + std::to_string(d);
    header += ",\"" + t.name + "\":{\"dtype\":\"" + t.dtype + "\",\"shape\":[" + shape +
              "],\"data_offsets\":[" + std::to_string(data.size()) + "," +
              std::to_string(data.size() + t.bytes.size()) + "]}";
    data += t.bytes;
  }
  header += "}";
  std::string file;
  for (int i = 0; i < 8; ++i) file.push_back(char((header.size() >> (8 * i)) & 0xFF));
  write_text(path, file + header + data);
}

// Float32 values as little-endian bytes.
inline std::string f32_bytes(const std::vector<float>& values) {
  std::string s;
  for (float v : values) {
    auto bits = std::bit_cast<std::uint32_t>(v);
    for (int i = 0; i < 4; ++i) s.push_back(char((bits >> (8 * i)) & 0xFF));
  }
  return s;
}

// Rewrites dir/model.safetensors with `edit` applied to its tensors.
template <class Edit>
void edit_weights(const std::string& dir, Edit edit) {
  NamedTensors t = read_safetensors(dir + "/model.safetensors");
  edit(t);
  write_safetensors(dir + "/model.safetensors", t);
}

}  // namespace glassllm::test::ckpt
