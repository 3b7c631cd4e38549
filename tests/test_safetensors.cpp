// Tests for the safetensors reader and writer of checkpoint.h: byte by byte
// on tiny files, and on every hand-made broken file in
// tests/data/checkpoint_corpus/.
#include <bit>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "check.h"
#include "checkpoint_fixtures.h"
#include "glassllm/io/checkpoint.h"
#include "glassllm/io/checkpoint_internal.h"
#include "glassllm/io/files.h"

using namespace glassllm;
using namespace glassllm::test::ckpt;
using glassllm::test::check_tensor;

// ---- safetensors ---------------------------------------------------------------------

TEST_CASE("safetensors: a one-tensor file, byte by byte") {
  TempDir dir("st_bytes");
  write_safetensors(dir / "x.safetensors", {{"x", tensor({1.0, -2.0})}});
  // header: {"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}} is 54 bytes,
  // padded with 2 spaces to 56 = 0x38; then 1.0f = 0x3f800000 and
  // -2.0f = 0xc0000000, little-endian.
  std::string expected =
      std::string("\x38\0\0\0\0\0\0\0", 8) +
      "{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}  " +
      std::string("\x00\x00\x80\x3f\x00\x00\x00\xc0", 8);
  CHECK(read_regular_file(dir / "x.safetensors") == expected);
  CHECK(files_in(dir.path) == std::vector<std::string>{"x.safetensors"});  // no .tmp left
}

TEST_CASE("safetensors: float32 and float64 round trip bit for bit, special values too") {
  TempDir dir("st_roundtrip");
  float f_nan = std::numeric_limits<float>::quiet_NaN();
  double d_inf = std::numeric_limits<double>::infinity();
  Tensor a = from_vector({0.1, -0.0, 1e-45, 3.4e38, 0}, {5}, DType::float32);
  a.mutable_data<float>()[4] = f_nan;
  Tensor b = from_vector({0.1, -d_inf, 4.9e-324, 1.0 / 3, 2, 3}, {2, 3}, DType::float64);
  Tensor c = zeros({0, 4});  // empty tensors are allowed
  Tensor s = scalar(7.0, DType::float64);
  write_safetensors(dir / "t.safetensors", {{"a", a}, {"b", b}, {"c", c}, {"s", s}},
                    {{"format", "pt"}});
  NamedTensors back = read_safetensors(dir / "t.safetensors");
  REQUIRE(back.size() == 4);
  CHECK(back[0].first == "a");  // the file's order is kept
  CHECK(back[1].first == "b");
  CHECK(bit_equal(back[0].second, a));
  CHECK(bit_equal(back[1].second, b));
  CHECK(back[2].second.shape() == Shape{0, 4});
  CHECK(back[3].second.shape() == Shape{});
  CHECK(back[3].second.item() == 7.0);
}

TEST_CASE("safetensors: half and bfloat16 bits widen exactly to float32") {
  using detail::bf16_to_f32;
  using detail::f16_to_f32;
  float inf = std::numeric_limits<float>::infinity();
  CHECK(f16_to_f32(0x3C00) == 1.0f);
  CHECK(f16_to_f32(0xC000) == -2.0f);
  CHECK(f16_to_f32(0x3555) == 0.333251953125f);  // 1365/4096: 1/3 rounded to 10 bits
  CHECK(f16_to_f32(0x7BFF) == 65504.0f);         // the largest half
  CHECK(f16_to_f32(0x0400) == std::ldexp(1.0f, -14));     // smallest normal
  CHECK(f16_to_f32(0x03FF) == std::ldexp(1023.0f, -24));  // largest subnormal
  CHECK(f16_to_f32(0x0001) == std::ldexp(1.0f, -24));     // smallest subnormal
  CHECK(f16_to_f32(0x8001) == -std::ldexp(1.0f, -24));
  CHECK(f16_to_f32(0x0000) == 0.0f);
  CHECK(std::signbit(f16_to_f32(0x8000)));  // -0 keeps its sign
  CHECK(f16_to_f32(0x7C00) == inf);
  CHECK(f16_to_f32(0xFC00) == -inf);
  CHECK(std::isnan(f16_to_f32(0x7E00)));
  CHECK(std::isnan(f16_to_f32(0x7C01)));  // the smallest nan payload is still nan

  CHECK(bf16_to_f32(0x3F80) == 1.0f);
  CHECK(bf16_to_f32(0x4049) == 3.140625f);  // pi, rounded to 7 mantissa bits
  CHECK(bf16_to_f32(0xC040) == -3.0f);
  CHECK(bf16_to_f32(0x0001) == std::ldexp(1.0f, -133));  // a float32 subnormal
  CHECK(bf16_to_f32(0x7F80) == inf);
  CHECK(bf16_to_f32(0xFF80) == -inf);
  CHECK(std::isnan(bf16_to_f32(0x7FC0)));
  CHECK(std::signbit(bf16_to_f32(0x8000)));
}

TEST_CASE("safetensors: the hand-made valid files read as spelled out") {
  NamedTensors t = read_safetensors(corpus_path("valid_f32_f64.safetensors"));
  REQUIRE(t.size() == 2);
  CHECK(t[0].first == "a");
  CHECK(t[0].second.dtype() == DType::float32);
  check_tensor(t[0].second, {2}, {1.0, -2.0}, 0);
  CHECK(t[1].second.dtype() == DType::float64);
  check_tensor(t[1].second, {1}, {0.5}, 0);

  // F16 [1, 2^-24, inf, -2] and BF16 [1, -inf] become float32.
  t = read_safetensors(corpus_path("valid_f16_bf16.safetensors"));
  REQUIRE(t.size() == 2);
  CHECK(t[0].second.dtype() == DType::float32);
  double inf = std::numeric_limits<double>::infinity();
  check_tensor(t[0].second, {4}, {1.0, std::ldexp(1.0, -24), inf, -2.0}, 0);
  check_tensor(t[1].second, {2}, {1.0, -inf}, 0);

  CHECK(read_safetensors(corpus_path("valid_empty.safetensors")).empty());
  t = read_safetensors(corpus_path("valid_metadata.safetensors"));
  REQUIRE(t.size() == 1);
  check_tensor(t[0].second, {1, 1}, {3.0}, 0);
}

TEST_CASE("safetensors: each broken file gives its own error") {
  struct Case {
    const char* file;
    const char* message;
  };
  const Case cases[] = {
      {"too_short.safetensors", "file is 5 bytes, shorter than the 8-byte header length"},
      {"header_too_long.safetensors",
       "header length 1000 is larger than the file (15 bytes)"},
      {"header_absurd.safetensors", "header length 1099511627776 is absurd"},
      {"not_json_header.safetensors",
       "header: invalid JSON at line 1, column 3: unexpected 'o'"},
      {"header_not_object.safetensors", "header is not a JSON object"},
      {"entry_not_object.safetensors", "tensor 'w': entry is not an object"},
      {"bad_dtype.safetensors", "tensor 'w': unknown dtype 'I8'"},
      {"negative_shape.safetensors",
       "tensor 'w': shape is not a list of non-negative integers"},
      {"bad_offsets.safetensors",
       "tensor 'w': data_offsets must be two integers [begin, end] with begin <= end"},
      {"offsets_past_end.safetensors",
       "tensor 'w': data_offsets [0, 64] end beyond the data buffer (8 bytes)"},
      {"truncated_data.safetensors",
       "tensor 'w': data_offsets [0, 16] end beyond the data buffer (10 bytes)"},
      {"size_mismatch.safetensors",
       "tensor 'lm_head.weight': data_offsets [0, 100] hold 100 "
       "bytes but shape (5,4) F32 needs 80"},
      {"overlapping_offsets.safetensors", "tensors 'a' [0, 8] and 'b' [4, 12] overlap"},
      {"gap_in_data.safetensors",
       "bytes [4, 8) of the data buffer belong to no tensor (a gap before 'b')"},
      {"trailing_bytes.safetensors",
       "the data buffer has 8 bytes but the tensors cover only 4"},
      {"duplicate_name.safetensors", "header: duplicate key \"w\""},
      {"number_overflow.safetensors",
       "header: invalid JSON (in w.shape[0]): a number too large for a 64-bit float"},
      {"metadata_not_string.safetensors",
       "__metadata__ value of 'format' is not a string"},
      {"shape_overflow.safetensors",
       "tensor 'w': data_offsets [0, 4] hold 4 bytes but shape "
       "(4294967296,4294967296,16) F32 needs more than 2^64"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.file);
    std::string path = corpus_path(c.file);
    CHECK_THROWS_WITH_AS(read_safetensors(path), contains(path + ": " + c.message),
                         std::runtime_error);
  }
  CHECK_THROWS_WITH_AS(
      read_safetensors("/nonexistent/model.safetensors"),
      doctest::Contains("/nonexistent/model.safetensors: cannot read: No such"),
      std::runtime_error);
}

TEST_CASE("safetensors: write_safetensors rejects names it cannot write") {
  TempDir dir("st_names");
  CHECK_THROWS_WITH_AS(
      write_safetensors(dir / "t.safetensors", {{"w", ones({1})}, {"w", ones({1})}}),
      doctest::Contains("tensor 'w' appears twice"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      write_safetensors(dir / "t.safetensors", {{"__metadata__", ones({1})}}),
      doctest::Contains("invalid tensor name '__metadata__'"), std::invalid_argument);
  CHECK(files_in(dir.path).empty());
}

// ---- config.json
// -----------------------------------------------------------------------
