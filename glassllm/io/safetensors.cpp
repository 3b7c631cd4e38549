// safetensors.cpp: reading and writing .safetensors files, the format Hugging
// Face checkpoints keep their weights in (files.h does the reading and
// writing itself, json_reader.h parses the header).
//
// The format (https://huggingface.co/docs/safetensors):
//   8 bytes    N, the header's length, an unsigned little-endian integer
//   N bytes    a JSON object: {"<name>": {"dtype": "F32", "shape": [2, 3],
//              "data_offsets": [begin, end]}, ..., "__metadata__": {str: str}}
//   the rest   the data buffer; a tensor's bytes are buffer[begin, end),
//              row-major, little-endian
// The reader trusts nothing in the file: every length and offset is checked
// before a byte is read, and each problem has its own message.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>

#include "glassllm/engine/tensor.h"
#include "glassllm/io/budget.h"
#include "glassllm/io/checkpoint_internal.h"
#include "glassllm/io/files.h"

namespace glassllm {
namespace detail {

using Json = nlohmann::ordered_json;

// ---- 16-bit floats -------------------------------------------------------------------

// IEEE half: value = (-1)^s * 2^(e-15) * 1.m for 0 < e < 31,
//                    (-1)^s * 2^-14 * 0.m  for e = 0 (zero and subnormals),
//                    inf (m = 0) or nan (m != 0) for e = 31.
// A normal half re-biases its exponent (15 -> 127) and widens its mantissa
// (10 -> 23 bits); a subnormal is m * 2^-24, which a float holds exactly.
float f16_to_f32(std::uint16_t bits) {
  std::uint32_t sign = std::uint32_t(bits >> 15) << 31;
  std::uint32_t e = (bits >> 10) & 0x1F;
  std::uint32_t m = bits & 0x3FF;
  if (e == 0) {
    float v = std::ldexp(float(m), -24);
    return sign ? -v : v;
  }
  if (e == 31) return same_bits<float>(sign | 0x7F800000u | (m << 13));
  return same_bits<float>(sign | ((e - 15 + 127) << 23) | (m << 13));
}

// bfloat16 is the top half of a float32: shift it back into place.
float bf16_to_f32(std::uint16_t bits) {
  return same_bits<float>(std::uint32_t(bits) << 16);
}

}  // namespace detail

void check_json(std::string_view text) {
  (void)detail::parse_json_strict(text);
}

namespace {

using detail::Json;

std::uint64_t load_le(const std::uint8_t* p, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = n; i-- > 0;) v = (v << 8) | p[i];
  return v;
}

void store_le(std::string& out, std::uint64_t v, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out.push_back(char((v >> (8 * i)) & 0xFF));
}

struct DTypeInfo {
  const char* name;
  std::size_t size;
};
constexpr DTypeInfo kDTypes[] = {{"F32", 4}, {"F64", 8}, {"F16", 2}, {"BF16", 2}};

std::string range_str(std::uint64_t begin, std::uint64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + "]";
}

// One header entry, checked.
struct Entry {
  std::string name;
  std::string dtype;
  std::size_t dtype_size = 0;
  Shape shape;
  std::uint64_t begin = 0, end = 0;
};

// Reads a JSON value as a non-negative integer, if it is one.
bool as_count(const Json& v, std::uint64_t& out) {
  if (v.is_number_unsigned()) {
    out = v.get<std::uint64_t>();
    return true;
  }
  if (v.is_number_integer() && v.get<std::int64_t>() >= 0) {
    out = std::uint64_t(v.get<std::int64_t>());
    return true;
  }
  return false;
}

}  // namespace

// ---- writing --------------------------------------------------------------------------

void write_safetensors(const std::string& path, const NamedTensors& tensors,
                       const std::map<std::string, std::string>& metadata) {
  auto fail = [&](const std::string& what) {
    return std::invalid_argument("write_safetensors: " + path + ": " + what);
  };
  Json header = Json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    if (name.empty() || name == "__metadata__")
      throw fail("invalid tensor name '" + name + "'");
    if (header.contains(name)) throw fail("tensor '" + name + "' appears twice");
    if (!t.defined()) throw fail("tensor '" + name + "' is undefined");
    std::uint64_t nbytes = t.nbytes();
    header[name] = {{"dtype", t.dtype() == DType::float32 ? "F32" : "F64"},
                    {"shape", t.shape()},
                    {"data_offsets", {offset, offset + nbytes}}};
    offset += nbytes;
  }
  // The header is padded with spaces (valid JSON whitespace) so the data
  // buffer starts at a multiple of 8 bytes, aligned for every dtype.
  std::string json = header.dump();
  json.append((8 - json.size() % 8) % 8, ' ');

  std::string bytes;
  bytes.reserve(8 + json.size() + offset);
  store_le(bytes, json.size(), 8);
  bytes += json;
  for (const auto& named : tensors) {
    const Tensor& t = named.second;
    dispatch(t.dtype(), [&](auto zero) {
      using T = decltype(zero);
      using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
      const T* p = t.data<T>();
      for (std::size_t i = 0; i < t.size(); ++i)
        store_le(bytes, detail::same_bits<Bits>(p[i]), sizeof(T));
    });
  }
  write_file_safely(path, bytes);
}

// ---- reading
// ----------------------------------------------------------------------------

namespace {

// The little-endian value of type Bits stored at p; on a little-endian
// machine (every one GlassLM runs on, WebAssembly included) a plain copy,
// which the compiler turns into one load. (The compiler's own macro, not
// std::endian, which Emscripten 3.1.6's C++ library lacks.)
template <class Bits>
Bits load_bits(const std::uint8_t* p) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  Bits v;
  std::memcpy(&v, p, sizeof v);
  return v;
#else
  return Bits(load_le(p, sizeof(Bits)));
#endif
}

// A tensor's elements, copied out of the file's bytes at p: F64 stays
// float64; F32, F16 and BF16 become float32. One loop per dtype, so the
// loop over a billion elements does nothing but convert.
Tensor copy_out(const Entry& e, const std::uint8_t* p) {
  Tensor t = empty(e.shape, e.dtype == "F64" ? DType::float64 : DType::float32);
  const std::size_t count = t.size();
  if (e.dtype == "F64") {
    double* o = t.mutable_data<double>();
    for (std::size_t i = 0; i < count; ++i)
      o[i] = detail::same_bits<double>(load_bits<std::uint64_t>(p + 8 * i));
    return t;
  }
  float* o = t.mutable_data<float>();
  if (e.dtype == "F32") {
    for (std::size_t i = 0; i < count; ++i)
      o[i] = detail::same_bits<float>(load_bits<std::uint32_t>(p + 4 * i));
  } else if (e.dtype == "F16") {
    for (std::size_t i = 0; i < count; ++i)
      o[i] = detail::f16_to_f32(load_bits<std::uint16_t>(p + 2 * i));
  } else {  // BF16
    for (std::size_t i = 0; i < count; ++i)
      o[i] = detail::bf16_to_f32(load_bits<std::uint16_t>(p + 2 * i));
  }
  return t;
}

}  // namespace

namespace {

using Fail = std::function<std::runtime_error(const std::string&)>;

// The header: its 8-byte length, then that many bytes of JSON, an object.
// Returns it with the size of the data buffer that follows it.
Json read_header(const std::uint8_t* data, std::size_t size, const Fail& fail,
                 std::uint64_t& buffer_size) {
  constexpr std::uint64_t kMaxHeader = 100'000'000;  // 100 MB; real headers are KBs
  if (size < 8)
    throw fail("file is " + std::to_string(size) +
               " bytes, shorter than the 8-byte header length");
  std::uint64_t n = load_le(data, 8);
  if (n > kMaxHeader)
    throw fail("header length " + std::to_string(n) + " is absurd (more than " +
               std::to_string(kMaxHeader) + " bytes)");
  if (n > size - 8)
    throw fail("header length " + std::to_string(n) + " is larger than the file (" +
               std::to_string(size) + " bytes)");
  buffer_size = size - 8 - n;
  Json header;
  try {
    header = detail::parse_json_strict(
        std::string_view(reinterpret_cast<const char*>(data + 8), n));
  } catch (const std::invalid_argument& e) {
    throw fail(std::string("header: ") + e.what());
  }
  if (!header.is_object()) throw fail("header is not a JSON object");
  return header;
}

// The element count of a shape, in 64 bits with an overflow check; `too_big`
// when it, or its byte count, does not fit (then it cannot match any file).
std::uint64_t checked_numel(const Entry& e, bool& too_big) {
  std::uint64_t numel = 1;
  bool has_zero = false;
  too_big = false;
  for (std::size_t dim : e.shape) {
    if (dim != 0 && numel > std::numeric_limits<std::uint64_t>::max() / dim)
      too_big = true;
    has_zero |= dim == 0;
    numel *= dim;  // may wrap when too_big; then numel is not used
  }
  if (has_zero) too_big = false, numel = 0;  // a zero anywhere makes the product 0
  // The byte count too must fit: 2^64 - 1 elements of 4 bytes would wrap.
  if (numel > std::numeric_limits<std::uint64_t>::max() / e.dtype_size) too_big = true;
  return numel;
}

// One tensor's entry of the header: its dtype, its shape, and a byte range
// inside the data buffer that holds exactly its elements.
Entry read_entry(const std::string& key, const Json& value, std::uint64_t buffer_size,
                 const Fail& fail) {
  Entry e;
  e.name = key;
  auto bad = [&](const std::string& what) {
    return fail("tensor '" + key + "': " + what);
  };
  if (!value.is_object()) throw bad("entry is not an object");

  if (!value.contains("dtype") || !value["dtype"].is_string())
    throw bad("dtype is missing or not a string");
  e.dtype = value["dtype"].get<std::string>();
  for (const auto& d : kDTypes)
    if (e.dtype == d.name) e.dtype_size = d.size;
  if (e.dtype_size == 0)
    throw bad("unknown dtype '" + e.dtype + "' (GlassLM reads F32, F64, F16 and BF16)");

  if (!value.contains("shape") || !value["shape"].is_array())
    throw bad("shape is not a list of non-negative integers");
  for (const auto& d : value["shape"]) {
    std::uint64_t dim;
    if (!as_count(d, dim)) throw bad("shape is not a list of non-negative integers");
    if (dim > std::numeric_limits<std::size_t>::max())  // 32-bit (WebAssembly)
      throw bad("shape dimension " + std::to_string(dim) + " is larger than this " +
                "machine can address");
    e.shape.push_back(std::size_t(dim));
  }
  bool too_big = false;
  const std::uint64_t numel = checked_numel(e, too_big);

  const Json* offsets = value.contains("data_offsets") ? &value["data_offsets"] : nullptr;
  if (!offsets || !offsets->is_array() || offsets->size() != 2 ||
      !as_count((*offsets)[0], e.begin) || !as_count((*offsets)[1], e.end) ||
      e.begin > e.end)
    throw bad("data_offsets must be two integers [begin, end] with begin <= end");
  if (e.end > buffer_size)
    throw bad("data_offsets " + range_str(e.begin, e.end) +
              " end beyond the data buffer (" + std::to_string(buffer_size) + " bytes)");
  std::uint64_t have = e.end - e.begin;
  if (too_big || numel > have / e.dtype_size || numel * e.dtype_size != have)
    throw bad(
        "data_offsets " + range_str(e.begin, e.end) + " hold " + std::to_string(have) +
        " bytes but shape " + shape_str(e.shape) + " " + e.dtype + " needs " +
        (too_big ? std::string("more than 2^64") : std::to_string(numel * e.dtype_size)));
  return e;
}

// Byte ranges must tile the buffer: sorted by start, each one begins where
// the previous one ended, and the last ends at the end of the file. Empty
// tensors own no bytes and are left out.
void check_tiling(const std::vector<Entry>& entries, std::uint64_t buffer_size,
                  const Fail& fail) {
  std::vector<const Entry*> by_offset;
  for (const Entry& e : entries)
    if (e.begin != e.end) by_offset.push_back(&e);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const Entry* a, const Entry* b) { return a->begin < b->begin; });
  std::uint64_t covered = 0;
  const Entry* previous = nullptr;
  for (const Entry* e : by_offset) {
    if (e->begin < covered)
      throw fail("tensors '" + previous->name + "' " +
                 range_str(previous->begin, previous->end) + " and '" + e->name + "' " +
                 range_str(e->begin, e->end) + " overlap");
    if (e->begin > covered)
      throw fail("bytes [" + std::to_string(covered) + ", " + std::to_string(e->begin) +
                 ") of the data buffer belong to no tensor (a gap before '" + e->name +
                 "')");
    covered = e->end;
    previous = e;
  }
  if (covered != buffer_size)
    throw fail("the data buffer has " + std::to_string(buffer_size) +
               " bytes but the tensors cover only " + std::to_string(covered));
}

}  // namespace

// Untrusted bytes, checked in the order a reader meets them (header length,
// JSON, then each entry's dtype, shape and byte range, then overlaps and
// gaps), each check with its own message.
NamedTensors detail::read_safetensors_bytes(const std::uint8_t* data, std::size_t size,
                                            const std::string& name,
                                            const ReleaseFn& done_with, Keep16* keep16) {
  const Fail fail = [&](const std::string& what) {
    return std::runtime_error(name + ": " + what);
  };
  std::uint64_t buffer_size = 0;
  const Json header = read_header(data, size, fail, buffer_size);
  const std::uint8_t* buffer = data + (size - buffer_size);

  std::vector<Entry> entries;
  for (const auto& item : header.items()) {
    const std::string& key = item.key();
    const Json& value = item.value();
    if (key == "__metadata__") {
      if (!value.is_object()) throw fail("__metadata__ is not an object");
      for (const auto& [mk, mv] : value.items())
        if (!mv.is_string())
          throw fail("__metadata__ value of '" + mk + "' is not a string");
      continue;
    }
    entries.push_back(read_entry(key, value, buffer_size, fail));
  }
  check_tiling(entries, buffer_size, fail);
  // Whether a tensor is kept in its 16 bits (keep16), not widened.
  auto kept_as_bits = [keep16](const Entry& e) {
    return keep16 && (e.dtype == "F16" || e.dtype == "BF16") && keep16->wanted(e.name);
  };
  // What the copies will take (16-bit values are widened to float32 unless
  // kept), against this machine's memory, before the first one is allocated.
  double copied_bytes = 0;
  for (const Entry& e : entries)
    copied_bytes += double(e.end - e.begin) / double(e.dtype_size) *  // its elements
                    (e.dtype == "F64"  ? 8.0
                     : kept_as_bits(e) ? 2.0
                                       : 4.0);
  check_fits_in_memory(name + ": loading its tensors", copied_bytes,
                       "the weights are too large to load on this machine");

  NamedTensors out;
  for (const Entry& e : entries) {
    if (kept_as_bits(e)) {
      Tensor16 t{e.dtype, e.shape, std::vector<std::uint16_t>(shape_numel(e.shape))};
      const std::uint8_t* p = buffer + e.begin;
      for (std::size_t i = 0; i < t.bits.size(); ++i)
        t.bits[i] = load_bits<std::uint16_t>(p + 2 * i);
      keep16->kept.emplace_back(e.name, std::move(t));
    } else {
      out.emplace_back(e.name, copy_out(e, buffer + e.begin));
    }
    if (done_with) done_with(buffer + e.begin, std::size_t(e.end - e.begin));
  }
  return out;
}

// The file is memory-mapped rather than read into a buffer: its pages come
// from the operating system's file cache as the tensors are copied out, and
// are dropped again under memory pressure, so loading a checkpoint needs
// memory for the model's tensors only, not for a second copy of the file
// (a 1B-parameter bfloat16 checkpoint is 2.5 GB).
NamedTensors read_safetensors(const std::string& path) {
  return detail::read_safetensors_keeping(path, nullptr);
}

NamedTensors detail::read_safetensors_keeping(const std::string& path, Keep16* keep16) {
  // Opened as every input is (files.h): a FIFO or a device is refused
  // before it can block, and the size comes from the same descriptor.
  const RegularFile file = open_regular_file(path);
  const std::size_t size = std::size_t(file.size);
  if (size == 0)  // mmap refuses an empty mapping; the parser names the problem
    return detail::read_safetensors_bytes(nullptr, 0, path);
  void* mapped = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, file.fd, 0);
  if (mapped == MAP_FAILED)
    throw std::runtime_error(path + ": cannot read: " + std::strerror(errno));
  ::madvise(mapped, size, MADV_SEQUENTIAL);  // read once, front to back
  struct Unmap {
    void* p;
    std::size_t n;
    ~Unmap() { ::munmap(p, n); }
  } unmap{mapped, size};
  // Once a tensor is copied out, its pages leave our mapping (they stay in
  // the file cache): the pages we hold count as our memory until unmapped,
  // and would add the whole file to the peak. Only the pages wholly inside
  // the tensor go: one it shares with a neighbour stays until the unmap.
  const std::uintptr_t page = std::uintptr_t(::sysconf(_SC_PAGESIZE));
  auto release = [page](const std::uint8_t* p, std::size_t n) {
    const std::uintptr_t begin = (std::uintptr_t(p) + page - 1) / page * page;
    const std::uintptr_t end = (std::uintptr_t(p) + n) / page * page;
    if (end > begin)
      ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
  };
  return detail::read_safetensors_bytes(static_cast<const std::uint8_t*>(mapped), size,
                                        path, release, keep16);
}

}  // namespace glassllm
