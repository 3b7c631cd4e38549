// Tests for files.h and budget.h: reads refuse anything but a regular file
// without blocking, writes never leave half a file or lose the old one,
// outputs cannot be one of the inputs, text from files is printed safely,
// and memory estimates match the counts written out by hand.
#include <sys/stat.h>

#include <filesystem>

#include "check.h"
#include "checkpoint_fixtures.h"
#include "glassllm/io/budget.h"
#include "glassllm/io/checkpoint.h"
#include "glassllm/io/files.h"

using namespace glassllm;
namespace ckpt = glassllm::test::ckpt;
namespace fs = std::filesystem;

namespace {

std::size_t entries(const fs::path& dir) {
  return std::size_t(
      std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

}  // namespace

TEST_CASE("read_regular_file: a FIFO, a folder and a device are refused at once") {
  ckpt::TempDir dir("files");
  REQUIRE(::mkfifo((dir / "fifo").c_str(), 0600) == 0);
  // With no writer, open() without O_NONBLOCK would wait forever.
  CHECK_THROWS_WITH_AS(read_regular_file(dir / "fifo"),
                       (dir / "fifo" + ": cannot read: it is a FIFO (named pipe); "
                                       "expected a regular file")
                           .c_str(),
                       std::runtime_error);
  CHECK_THROWS_WITH_AS(read_regular_file(dir.path.string()),
                       doctest::Contains("it is a folder; expected a regular file"),
                       std::runtime_error);
  CHECK_THROWS_WITH_AS(read_regular_file("/dev/zero"),
                       "/dev/zero: cannot read: it is a device; expected a regular file",
                       std::runtime_error);
  CHECK_THROWS_WITH_AS(read_regular_file(dir / "missing"),
                       doctest::Contains("cannot read: No such file or directory"),
                       std::runtime_error);
}

TEST_CASE("read_regular_file: the size limit is checked before reading") {
  ckpt::TempDir dir("files");
  ckpt::write_text(dir / "f", "0123456789");
  CHECK(read_regular_file(dir / "f", 10) == "0123456789");
  CHECK_THROWS_WITH_AS(
      read_regular_file(dir / "f", 9, "a config file"),
      doctest::Contains("cannot read: 10 bytes, more than the 9 a config "
                        "file may have"),
      std::runtime_error);
}

TEST_CASE("write_file_safely: replaces the file whole, keeps its mode, leaves nothing") {
  ckpt::TempDir dir("files");
  ckpt::write_text(dir / "out", "old");
  ::chmod((dir / "out").c_str(), 0600);
  write_file_safely(dir / "out", "new content");
  CHECK(read_regular_file(dir / "out") == "new content");
  struct stat st {};
  ::stat((dir / "out").c_str(), &st);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK(entries(dir.path) == 1);  // no temporary file left
}

TEST_CASE("write_file_safely: refuses what is not a regular file and a missing folder") {
  ckpt::TempDir dir("files");
  REQUIRE(::mkfifo((dir / "fifo").c_str(), 0600) == 0);
  CHECK_THROWS_WITH_AS(write_file_safely(dir / "fifo", "x"),
                       doctest::Contains("cannot write: it is a FIFO (named pipe)"),
                       WriteError);
  CHECK_THROWS_WITH_AS(write_file_safely("/dev/null", "x"),
                       "/dev/null: cannot write: it is a device; expected a regular file "
                       "or a new name",
                       WriteError);
  fs::create_directories(dir / "sub");
  CHECK_THROWS_WITH_AS(write_file_safely(dir / "sub", "x"),
                       doctest::Contains("it is a folder"), WriteError);
  CHECK_THROWS_WITH_AS(write_file_safely(dir / "nowhere/out", "x"),
                       doctest::Contains("nowhere/out: cannot write: the folder"),
                       WriteError);
  CHECK(fs::is_fifo(dir / "fifo"));
  CHECK(entries(dir.path) == 2);  // the FIFO and sub/, nothing else
}

TEST_CASE("same_file: hard links, symbolic links, ./ and files not yet made") {
  ckpt::TempDir dir("files");
  ckpt::write_text(dir / "a", "x");
  ckpt::write_text(dir / "b", "x");  // same content, another file
  fs::create_hard_link(dir / "a", dir / "hard");
  fs::create_symlink(dir / "a", dir / "soft");
  CHECK(same_file(dir / "a", dir / "hard"));
  CHECK(same_file(dir / "a", dir / "soft"));
  CHECK(same_file(dir / "a", dir.path.string() + "/./a"));
  CHECK_FALSE(same_file(dir / "a", dir / "b"));
  CHECK(same_file(dir / "new", dir.path.string() + "//new"));
  CHECK(inside_folder(dir / "new/deeper", dir.path.string()));
  CHECK_FALSE(inside_folder(dir.path.parent_path().string(), dir.path.string()));
  CHECK_THROWS_WITH_AS(
      refuse_output_over_inputs("--out", dir / "hard", {dir / "b", dir / "a"}),
      (("--out " + dir / "hard") + " is the command's input " + dir / "a" +
       "; writing it would destroy it; choose another path")
          .c_str(),
      std::invalid_argument);
  CHECK_NOTHROW(refuse_output_over_inputs("--out", dir / "c", {dir / "a"}));
}

TEST_CASE("printable: control characters and bytes that are not UTF-8 are escaped") {
  CHECK(printable("plain text, é and 注") == "plain text, é and 注");
  CHECK(printable("\x1b[31mred\x07") == "\\x1b[31mred\\x07");
  CHECK(printable("a\nb\tc") == "a\\x0ab\\x09c");
  CHECK(printable("a\nb\tc\r", true) == "a\nb\tc\\x0d");
  CHECK(printable("\x7f") == "\\x7f");
  CHECK(printable("\xc2\x9b"
                  "2J") == "\\xc2\\x9b2J");               // C1 CSI, U+009B
  CHECK(printable("\xff\xc3") == "\\xff\\xc3");           // not UTF-8, truncated
  CHECK(printable("\xed\xa0\x80") == "\\xed\\xa0\\x80");  // a surrogate
  CHECK(utf8_length("\xf0\x9f\x99\x82", 0) == 4);
  CHECK(utf8_length("\xc0\x80", 0) == 0);  // overlong NUL
}

TEST_CASE("budget: parameter, cache and training estimates by hand") {
  Config c;
  c.vocab_size = 10;
  c.d_model = 8;
  c.n_layers = 2;
  c.n_heads = 2;
  c.n_kv_heads = 1;
  c.d_ff = 16;
  c.max_len = 4;
  // embed + lm_head 2*10*8 = 160; per layer: norms 16, q,o 2*8*8 = 128,
  // k,v 2*4*8 = 64, MLP 3*16*8 = 384 -> 592, two layers 1184; final norm 8.
  CHECK(parameter_bytes(c, DType::float32) == (160 + 1184 + 8) * 4.0);
  // Every count agrees with the model's own.
  CHECK(parameter_bytes(c, DType::float64) ==
        double(GlassLM(c, 0, DType::float64).parameter_count() * 8));
  // 2 (K, V) * 2 layers * batch 3 * 1 head * 4 positions * hd 4 * 8 bytes.
  CHECK(preallocated_cache_bytes(c, DType::float64, 3) == 2 * 2 * 3 * 1 * 4 * 4 * 8.0);
  CHECK(training_step_bytes(c, DType::float32, 1) >
        4 * parameter_bytes(c, DType::float32));
  CHECK(human_bytes(512) == "512 bytes");
  CHECK(human_bytes(1536) == "1.5 KiB");
  CHECK(human_bytes(3.0 * (1ull << 40)) == "3 TiB");
  CHECK(machine_memory_bytes() > 0);
  CHECK_THROWS_WITH_AS(
      check_fits_in_memory("a model of vocab 1e15", 1e18, "choose less"),
      doctest::Contains("a model of vocab 1e15 needs about 888 PiB, more "
                        "than the "),
      TooLarge);
  CHECK_NOTHROW(check_fits_in_memory("a small thing", 1024, ""));
}

TEST_CASE("load_checkpoint: non-finite weights are refused, or listed when allowed") {
  ckpt::TempDir dir("files");
  Config c;
  c.vocab_size = 5;
  c.d_model = 8;
  c.n_layers = 1;
  c.n_heads = 2;
  c.n_kv_heads = 1;
  c.d_ff = 16;
  c.max_len = 8;
  GlassLM model(c, 1);
  model.layers[0].up_proj.mutable_data<float>()[1 * 8 + 3] =
      NAN;  // [F, D] = [16, 8]: (1, 3)
  model.layers[0].up_proj.mutable_data<float>()[5] = INFINITY;  // (0, 5), later: "1 more"
  model.lm_head.mutable_data<float>()[0] = -INFINITY;
  save_checkpoint(dir / "c", model);
  CHECK_THROWS_WITH_AS(
      load_checkpoint(dir / "c"),
      (dir / "c/model.safetensors" +
       ": weight 'model.layers.0.mlp.up_proj.weight' has inf at index [0, 5] (and 1 more "
       "non-finite); non-finite weights make every output non-finite "
       "(--allow-nonfinite loads them anyway)")
          .c_str(),
      std::runtime_error);
  Checkpoint ck = load_checkpoint(dir / "c", std::nullopt, true);
  REQUIRE(ck.nonfinite.size() == 2);
  CHECK(ck.nonfinite[0].find(
            "'model.layers.0.mlp.up_proj.weight' has inf at index [0, 5]") !=
        std::string::npos);
  CHECK(ck.nonfinite[1].find("'lm_head.weight' has -inf at index [0, 0]") !=
        std::string::npos);
  CHECK(std::isnan(ck.model.layers[0].up_proj.data<float>()[11]));
}

TEST_CASE("check_json: a key twice in one object is refused, in two objects it is not") {
  CHECK_NOTHROW(check_json(R"({"a": 1, "b": {"a": 2}})"));
  // The messages are json_reader.h's: where (the JSON path, line and
  // column) and what was found, never the parsing library's text.
  CHECK_THROWS_WITH_AS(check_json(R"({"a": 1, "b": {"c": 2, "c": 3}})"),
                       "duplicate key \"c\" in b", std::invalid_argument);
  CHECK_THROWS_WITH_AS(check_json("{\"a\": }"),
                       "invalid JSON at line 1, column 7 (in a): unexpected '}'",
                       std::invalid_argument);
}
