// GGUF reader: the real tiny Llama GGUF (metadata, vocabulary, tensor views), every value type
// through a small in-test writer, and corrupted inputs (truncations, huge counts, bad lengths,
// bad offsets, byte flips) that must give a clear error and never crash.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/testdata.h"
#include "convert/gguf_reader.h"

namespace magnetar::gguf {
namespace {

const char kTinyLlama[] = "gguf/llama-2-tiny-random.gguf";

std::vector<uint8_t> read_bytes(const std::string& path) {
  const std::string text = test::read_file(path);
  return std::vector<uint8_t>(text.begin(), text.end());
}

// ---- A minimal GGUF writer for building test files --------------------------------------------

class Builder {
 public:
  explicit Builder(uint32_t version = 3) {
    raw("GGUF", 4);
    put<uint32_t>(version);
    n_tensors_at_ = bytes_.size();
    put<uint64_t>(0);
    n_kv_at_ = bytes_.size();
    put<uint64_t>(0);
  }
  template <typename T>
  void put(T v) { raw(&v, sizeof v); }
  void raw(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    bytes_.insert(bytes_.end(), b, b + n);
  }
  void str(const std::string& s) {
    put<uint64_t>(s.size());
    raw(s.data(), s.size());
  }
  template <typename T>
  void kv(const std::string& key, ValueType type, T v) {
    begin_kv(key, type);
    put<T>(v);
  }
  void kv_string(const std::string& key, const std::string& v) {
    begin_kv(key, ValueType::String);
    str(v);
  }
  void begin_kv(const std::string& key, ValueType type) {
    ++n_kv_;
    str(key);
    put<uint32_t>(uint32_t(type));
  }
  void tensor(const std::string& name, std::vector<uint64_t> ne, uint32_t ggml_type, uint64_t offset) {
    ++n_tensors_;
    str(name);
    put<uint32_t>(uint32_t(ne.size()));
    for (uint64_t d : ne) put<uint64_t>(d);
    put<uint32_t>(ggml_type);
    put<uint64_t>(offset);
  }
  void pad_to(uint64_t alignment) {
    while (bytes_.size() % alignment != 0) bytes_.push_back(0);
  }
  std::vector<uint8_t> finish() {
    std::memcpy(bytes_.data() + n_tensors_at_, &n_tensors_, 8);
    std::memcpy(bytes_.data() + n_kv_at_, &n_kv_, 8);
    return bytes_;
  }
  size_t size() const { return bytes_.size(); }
  void count_kv() { ++n_kv_; }  // for entries written by hand

 private:
  std::vector<uint8_t> bytes_;
  size_t n_tensors_at_ = 0, n_kv_at_ = 0;
  uint64_t n_tensors_ = 0, n_kv_ = 0;
};

// A small valid file with every value type, a nested array and two aligned tensors.
std::vector<uint8_t> sample_file(uint32_t alignment = 64) {
  Builder b;
  b.kv<uint8_t>("u8", ValueType::U8, 200);
  b.kv<int8_t>("i8", ValueType::I8, -100);
  b.kv<uint16_t>("u16", ValueType::U16, 60000);
  b.kv<int16_t>("i16", ValueType::I16, -30000);
  b.kv<uint32_t>("general.alignment", ValueType::U32, alignment);
  b.kv<int32_t>("i32", ValueType::I32, -2000000000);
  b.kv<float>("f32", ValueType::F32, 1.5f);
  b.kv<uint8_t>("bool", ValueType::Bool, 1);
  b.kv_string("str", "hello");
  b.kv<uint64_t>("u64", ValueType::U64, 1ull << 40);
  b.kv<int64_t>("i64", ValueType::I64, -(1ll << 40));
  b.kv<double>("f64", ValueType::F64, 0.25);
  b.begin_kv("tokens", ValueType::Array);
  b.put<uint32_t>(uint32_t(ValueType::String));
  b.put<uint64_t>(3);
  b.str("<unk>");
  b.str("");
  b.str("\xe2\x96\x81hi");
  b.begin_kv("scores", ValueType::Array);
  b.put<uint32_t>(uint32_t(ValueType::F32));
  b.put<uint64_t>(3);
  for (float f : {0.0f, -1.0f, 2.5f}) b.put<float>(f);
  b.begin_kv("types", ValueType::Array);
  b.put<uint32_t>(uint32_t(ValueType::I32));
  b.put<uint64_t>(3);
  for (int32_t v : {2, 3, -1}) b.put<int32_t>(v);
  b.begin_kv("nested", ValueType::Array);  // [[1, 2], []] of uint16
  b.put<uint32_t>(uint32_t(ValueType::Array));
  b.put<uint64_t>(2);
  b.put<uint32_t>(uint32_t(ValueType::U16));
  b.put<uint64_t>(2);
  b.put<uint16_t>(1);
  b.put<uint16_t>(2);
  b.put<uint32_t>(uint32_t(ValueType::U16));
  b.put<uint64_t>(0);
  b.tensor("weight", {64, 3}, uint32_t(TensorType::Q8_0), 0);  // 2 blocks x 3 rows x 34 = 204 bytes
  b.tensor("norm", {5}, uint32_t(TensorType::F32), uint64_t(alignment) * ((204 + alignment - 1) / alignment));
  b.pad_to(alignment);
  for (int i = 0; i < 204; ++i) b.put<uint8_t>(uint8_t(i));
  b.pad_to(alignment);
  for (int i = 0; i < 5; ++i) b.put<float>(float(i));
  return b.finish();
}

void expect_error(const std::vector<uint8_t>& bytes, const std::string& fragment) {
  File file;
  const Status s = parse(bytes.data(), bytes.size(), &file);
  ASSERT_FALSE(s.is_ok()) << "expected an error containing \"" << fragment << "\"";
  EXPECT_NE(s.message().find(fragment), std::string::npos) << s.message();
}

TEST(GgufReader, SampleFileAllValueTypes) {
  const auto bytes = sample_file();
  File f;
  ASSERT_TRUE(parse(bytes.data(), bytes.size(), &f).is_ok());
  EXPECT_EQ(f.version, 3u);
  EXPECT_EQ(f.alignment, 64u);
  EXPECT_EQ(f.data_offset % 64, 0u);
  EXPECT_EQ(f.find("u8")->as_u64(), 200u);
  EXPECT_EQ(f.find("i8")->as_i64(), -100);
  EXPECT_EQ(f.find("u16")->as_u64(), 60000u);
  EXPECT_EQ(f.find("i16")->as_i64(), -30000);
  EXPECT_EQ(f.find("i32")->as_i64(), -2000000000);
  EXPECT_EQ(f.find("f32")->as_f64(), 1.5);
  EXPECT_EQ(f.find("u64")->as_u64(), 1ull << 40);
  EXPECT_EQ(f.find("i64")->as_i64(), -(1ll << 40));
  EXPECT_EQ(f.find("f64")->as_f64(), 0.25);
  bool flag = false;
  ASSERT_TRUE(f.get_bool("bool", &flag).is_ok());
  EXPECT_TRUE(flag);
  std::string_view s;
  ASSERT_TRUE(f.get_string("str", &s).is_ok());
  EXPECT_EQ(s, "hello");
  std::vector<std::string_view> tokens;
  ASSERT_TRUE(f.get_string_array("tokens", &tokens).is_ok());
  ASSERT_EQ(tokens.size(), 3u);
  EXPECT_EQ(tokens[1], "");
  EXPECT_EQ(tokens[2], "\xe2\x96\x81hi");
  std::vector<float> scores;
  ASSERT_TRUE(f.get_f32_array("scores", &scores).is_ok());
  EXPECT_EQ(scores, (std::vector<float>{0.0f, -1.0f, 2.5f}));
  std::vector<int64_t> types;
  ASSERT_TRUE(f.get_i64_array("types", &types).is_ok());
  EXPECT_EQ(types, (std::vector<int64_t>{2, 3, -1}));
  const Value* nested = f.find("nested");
  ASSERT_NE(nested, nullptr);
  ASSERT_EQ(nested->arrays.size(), 2u);
  EXPECT_EQ(nested->arrays[0].count, 2u);
  EXPECT_EQ(nested->arrays[1].count, 0u);
  uint32_t u32 = 0;
  EXPECT_FALSE(f.get_u32("i32", &u32).is_ok());  // negative
  EXPECT_FALSE(f.get_u32("u64", &u32).is_ok());  // out of range
  EXPECT_FALSE(f.get_string("u8", &s).is_ok());  // wrong type
  EXPECT_NE(f.get_string("absent", &s).message().find("missing"), std::string::npos);

  ASSERT_EQ(f.tensors.size(), 2u);
  const Tensor* w = f.find_tensor("weight");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->ggml_type, uint32_t(TensorType::Q8_0));
  EXPECT_EQ(w->ne[0], 64u);
  EXPECT_EQ(w->ne[1], 3u);
  EXPECT_EQ(w->bytes, 204u);
  EXPECT_EQ(w->offset, f.data_offset);
  EXPECT_EQ(w->data, bytes.data() + f.data_offset);
  EXPECT_EQ(w->data[203], 203);
  const Tensor* norm = f.find_tensor("norm");
  float last;
  std::memcpy(&last, norm->data + 16, 4);
  EXPECT_EQ(last, 4.0f);
  EXPECT_EQ(norm->offset + norm->bytes, bytes.size());
}

TEST(GgufReader, EveryTruncationFailsCleanly) {
  const auto bytes = sample_file();
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + long(n));  // exact size for ASan
    File f;
    EXPECT_FALSE(parse(cut.data(), cut.size(), &f).is_ok()) << "truncated to " << n;
  }
}

TEST(GgufReader, HeaderErrors) {
  auto bytes = sample_file();
  auto bad = bytes;
  bad[0] = 'X';
  expect_error(bad, "not a GGUF file");
  bad = bytes;
  bad[4] = 1;
  expect_error(bad, "version 1 is not supported");
  bad = bytes;
  bad[4] = 9;
  expect_error(bad, "unsupported GGUF version 9");
  bad = bytes;
  bad[4] = 0;
  bad[7] = 3;  // 0x03000000: a big-endian v3 file
  expect_error(bad, "big-endian");
  bad = bytes;
  const uint64_t huge = ~0ull;
  std::memcpy(bad.data() + 8, &huge, 8);
  expect_error(bad, "tensor count");
  bad = bytes;
  std::memcpy(bad.data() + 16, &huge, 8);
  expect_error(bad, "metadata count");
  bytes = Builder(2).finish();  // v2, empty: valid
  File f;
  EXPECT_TRUE(parse(bytes.data(), bytes.size(), &f).is_ok());
}

TEST(GgufReader, BadLengthsAndCounts) {
  {
    Builder b;
    b.begin_kv("k", ValueType::String);
    b.put<uint64_t>(1ull << 62);  // string longer than the file
    b.raw("abc", 3);
    expect_error(b.finish(), "claims");
  }
  {
    Builder b;
    b.count_kv();
    b.put<uint64_t>(~0ull);  // key length
    b.raw("key and some more bytes", 23);
    expect_error(b.finish(), "claims");
  }
  {
    Builder b;
    b.begin_kv("arr", ValueType::Array);
    b.put<uint32_t>(uint32_t(ValueType::U64));
    b.put<uint64_t>(1ull << 61);  // 2^61 elements of 8 bytes: the byte count would overflow
    b.put<uint64_t>(0);
    expect_error(b.finish(), "cannot fit");
  }
  {
    Builder b;
    b.begin_kv("arr", ValueType::Array);
    b.put<uint32_t>(77);
    b.put<uint64_t>(1);
    expect_error(b.finish(), "unknown array element type 77");
  }
  {
    Builder b;
    b.begin_kv("k", ValueType(13));
    b.put<uint8_t>(0);
    expect_error(b.finish(), "unknown value type 13");
  }
  {
    Builder b;  // arrays nested deeper than the limit
    b.begin_kv("deep", ValueType::Array);
    for (uint32_t d = 0; d < kMaxArrayDepth + 1; ++d) {
      b.put<uint32_t>(uint32_t(ValueType::Array));
      b.put<uint64_t>(1);
    }
    b.put<uint32_t>(uint32_t(ValueType::U8));
    b.put<uint64_t>(0);
    expect_error(b.finish(), "nested deeper");
  }
  {
    // 2 million empty arrays (24 MB): refused from the count, before a Value is built for them
    // (built, they took ~10x the file's size).
    Builder b;
    b.begin_kv("empties", ValueType::Array);
    const uint64_t n = uint64_t(2) << 20;
    b.put<uint32_t>(uint32_t(ValueType::Array));
    b.put<uint64_t>(n);
    for (uint64_t i = 0; i < n; ++i) {
      b.put<uint32_t>(uint32_t(ValueType::U8));
      b.put<uint64_t>(0);
    }
    expect_error(b.finish(), "nested arrays");
  }
  {
    // The bound is per file: two keys of kMaxNestedArrayValues / 2 + 1 each exceed it together.
    Builder b;
    for (const char* key : {"a", "b"}) {
      b.begin_kv(key, ValueType::Array);
      b.put<uint32_t>(uint32_t(ValueType::Array));
      b.put<uint64_t>(kMaxNestedArrayValues / 2 + 1);
      for (uint64_t i = 0; i < kMaxNestedArrayValues / 2 + 1; ++i) {
        b.put<uint32_t>(uint32_t(ValueType::U8));
        b.put<uint64_t>(0);
      }
    }
    expect_error(b.finish(), "at most 65536 in all");
  }
  {
    Builder b;
    b.kv<uint8_t>("dup", ValueType::U8, 1);
    b.kv<uint8_t>("dup", ValueType::U8, 2);
    expect_error(b.finish(), "duplicate metadata key");
  }
}

TEST(GgufReader, BadAlignment) {
  for (uint32_t a : {0u, 3u, 48u}) {
    Builder b;
    b.kv<uint32_t>("general.alignment", ValueType::U32, a);
    expect_error(b.finish(), "not a power of two");
  }
  Builder b;
  b.kv<uint64_t>("general.alignment", ValueType::U64, 32);
  expect_error(b.finish(), "must be uint32");
}

std::vector<uint8_t> one_tensor(std::vector<uint64_t> ne, uint32_t type, uint64_t offset, size_t data_bytes,
                                const std::string& name = "t") {
  Builder b;
  b.tensor(name, ne, type, offset);
  b.pad_to(kDefaultAlignment);
  for (size_t i = 0; i < data_bytes; ++i) b.put<uint8_t>(0);
  return b.finish();
}

TEST(GgufReader, BadTensorInfos) {
  EXPECT_TRUE([] {
    const auto ok = one_tensor({32, 2}, uint32_t(TensorType::Q4_0), 0, 36);
    File f;
    return parse(ok.data(), ok.size(), &f).is_ok();
  }());
  expect_error(one_tensor({32, 2}, uint32_t(TensorType::Q4_0), 0, 35), "extends past the end");
  expect_error(one_tensor({8}, uint32_t(TensorType::F32), 16, 64), "not a multiple of the alignment");
  expect_error(one_tensor({8}, uint32_t(TensorType::F32), 1ull << 63, 64), "extends past the end");
  expect_error(one_tensor({8}, uint32_t(TensorType::F32), ~0ull - 31, 64), "extends past the end");
  expect_error(one_tensor({33, 1}, uint32_t(TensorType::Q8_0), 0, 64), "not a multiple of the Q8_0 block size");
  expect_error(one_tensor({1ull << 62, 1ull << 62}, uint32_t(TensorType::F32), 0, 64), "overflows");
  expect_error(one_tensor({1ull << 63}, uint32_t(TensorType::F32), 0, 64), "overflows");
  expect_error(one_tensor({}, uint32_t(TensorType::F32), 0, 64), "dimensions");
  expect_error(one_tensor({1, 1, 1, 1, 1}, uint32_t(TensorType::F32), 0, 64), "dimensions");
  expect_error(one_tensor({4}, uint32_t(TensorType::F32), 0, 64, ""), "name length");
  expect_error(one_tensor({4}, uint32_t(TensorType::F32), 0, 64, std::string(64, 'n')), "name length");
  {
    const auto unknown = one_tensor({4}, 99, 0, 0);  // a type this reader cannot size: parsed, flagged
    File f;
    ASSERT_TRUE(parse(unknown.data(), unknown.size(), &f).is_ok());
    EXPECT_FALSE(f.tensors[0].size_known);
    EXPECT_EQ(tensor_type_name(99), "type 99");
    EXPECT_EQ(tensor_type_name(23), "IQ4_XS");
  }
  {
    Builder b;  // overlapping tensors
    b.tensor("a", {16}, uint32_t(TensorType::F32), 0);
    b.tensor("b", {16}, uint32_t(TensorType::F32), 32);
    b.pad_to(kDefaultAlignment);
    for (int i = 0; i < 128; ++i) b.put<uint8_t>(0);
    expect_error(b.finish(), "overlap");
  }
  {
    Builder b;
    b.tensor("a", {4}, uint32_t(TensorType::F32), 0);
    b.tensor("a", {4}, uint32_t(TensorType::F32), 32);
    b.pad_to(kDefaultAlignment);
    for (int i = 0; i < 64; ++i) b.put<uint8_t>(0);
    expect_error(b.finish(), "duplicate tensor");
  }
  {
    Builder b;  // tensor infos end exactly at the file end: the aligned data section is missing
    b.tensor("a", {4}, uint32_t(TensorType::F32), 0);
    auto bytes = b.finish();
    while (bytes.size() % 32 == 0) bytes.push_back(0);  // make sure padding is needed
    expect_error(bytes, "past the end");
  }
}

// Random byte flips and truncations of a valid file: any result but a crash is acceptable;
// a flipped file that still parses must keep every view inside the buffer.
TEST(GgufReader, MutatedSampleNeverEscapesBuffer) {
  const auto bytes = sample_file(32);
  std::mt19937 rng(99);
  for (int iter = 0; iter < 20000; ++iter) {
    auto m = bytes;
    const int flips = 1 + int(rng() % 4);
    for (int i = 0; i < flips; ++i) m[rng() % m.size()] ^= uint8_t(1u << (rng() % 8));
    if (rng() % 4 == 0) m.resize(rng() % m.size());
    File f;
    if (!parse(m.data(), m.size(), &f).is_ok()) continue;
    for (const Tensor& t : f.tensors) {
      ASSERT_LE(t.offset, m.size());
      ASSERT_LE(t.bytes, m.size() - t.offset);
      ASSERT_EQ(t.data, m.data() + t.offset);
    }
    for (const KeyValue& kv : f.metadata) {
      ASSERT_GE(reinterpret_cast<const uint8_t*>(kv.key.data()), m.data());
      ASSERT_LE(reinterpret_cast<const uint8_t*>(kv.key.data() + kv.key.size()), m.data() + m.size());
    }
  }
}

// ---- The real file ------------------------------------------------------------------------------

TEST(GgufReader, TinyLlamaMetadataAndTensors) {
  MAGNETAR_REQUIRE_TESTDATA(kTinyLlama);
  const auto bytes = read_bytes(test::testdata_path(kTinyLlama));
  File f;
  const Status s = parse(bytes.data(), bytes.size(), &f);
  ASSERT_TRUE(s.is_ok()) << s.message();
  EXPECT_EQ(f.version, 3u);
  EXPECT_EQ(f.alignment, 32u);
  std::string_view arch, model;
  ASSERT_TRUE(f.get_string("general.architecture", &arch).is_ok());
  EXPECT_EQ(arch, "llama");
  ASSERT_TRUE(f.get_string("tokenizer.ggml.model", &model).is_ok());
  EXPECT_EQ(model, "llama");
  uint32_t dim = 0, layers = 0, heads = 0, bos = 0, eos = 0;
  ASSERT_TRUE(f.get_u32("llama.embedding_length", &dim).is_ok());
  ASSERT_TRUE(f.get_u32("llama.block_count", &layers).is_ok());
  ASSERT_TRUE(f.get_u32("llama.attention.head_count", &heads).is_ok());
  ASSERT_TRUE(f.get_u32("tokenizer.ggml.bos_token_id", &bos).is_ok());
  ASSERT_TRUE(f.get_u32("tokenizer.ggml.eos_token_id", &eos).is_ok());
  EXPECT_EQ(dim, 8u);
  EXPECT_EQ(layers, 1u);
  EXPECT_EQ(heads, 2u);
  EXPECT_EQ(bos, 1u);
  EXPECT_EQ(eos, 2u);
  float eps = 0;
  ASSERT_TRUE(f.get_f32("llama.attention.layer_norm_rms_epsilon", &eps).is_ok());
  EXPECT_FLOAT_EQ(eps, 1e-5f);

  std::vector<std::string_view> tokens;
  std::vector<float> scores;
  std::vector<int64_t> types;
  ASSERT_TRUE(f.get_string_array("tokenizer.ggml.tokens", &tokens).is_ok());
  ASSERT_TRUE(f.get_f32_array("tokenizer.ggml.scores", &scores).is_ok());
  ASSERT_TRUE(f.get_i64_array("tokenizer.ggml.token_type", &types).is_ok());
  ASSERT_EQ(tokens.size(), 32000u);
  ASSERT_EQ(scores.size(), 32000u);
  ASSERT_EQ(types.size(), 32000u);
  EXPECT_EQ(tokens[0], "<unk>");
  EXPECT_EQ(tokens[1], "<s>");
  EXPECT_EQ(tokens[2], "</s>");
  EXPECT_EQ(tokens[3], "<0x00>");  // byte-fallback pieces follow the specials
  EXPECT_EQ(types[0], 2);          // UNKNOWN
  EXPECT_EQ(types[1], 3);          // CONTROL
  EXPECT_EQ(types[3], 6);          // BYTE

  ASSERT_EQ(f.tensors.size(), 12u);
  const Tensor* embd = f.find_tensor("token_embd.weight");
  ASSERT_NE(embd, nullptr);
  EXPECT_EQ(embd->n_dims, 2u);
  EXPECT_EQ(embd->ne[0], 8u);
  EXPECT_EQ(embd->ne[1], 32000u);
  EXPECT_EQ(embd->ggml_type, uint32_t(TensorType::F16));
  EXPECT_EQ(embd->bytes, 8u * 32000u * 2u);
  const Tensor* norm = f.find_tensor("output_norm.weight");
  ASSERT_NE(norm, nullptr);
  EXPECT_EQ(norm->ggml_type, uint32_t(TensorType::F32));
  uint64_t total = 0;
  for (const Tensor& t : f.tensors) {
    EXPECT_TRUE(t.size_known);
    EXPECT_EQ(t.offset % f.alignment, 0u);
    total += t.bytes;
  }
  const Tensor* last = f.find_tensor("output.weight");
  EXPECT_EQ(last->offset + last->bytes, bytes.size());
  EXPECT_LE(total, bytes.size() - f.data_offset);
}

TEST(GgufReader, TinyLlamaCorruptedCopies) {
  MAGNETAR_REQUIRE_TESTDATA(kTinyLlama);
  const auto bytes = read_bytes(test::testdata_path(kTinyLlama));
  File f;
  // Truncations across the header, the vocabulary, the tensor infos and the data.
  for (size_t n : {size_t(0), size_t(3), size_t(23), size_t(100), size_t(5000), size_t(400000),
                   size_t(724000), size_t(724398), size_t(724416), bytes.size() - 1}) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + long(n));
    const Status s = parse(cut.data(), cut.size(), &f);
    EXPECT_FALSE(s.is_ok()) << "truncated to " << n;
  }
  // The tokens array claims more strings than the file can hold.
  {
    auto bad = bytes;
    const char key[] = "tokenizer.ggml.tokens";
    auto it = std::search(bad.begin(), bad.end(), key, key + sizeof(key) - 1);
    ASSERT_NE(it, bad.end());
    const size_t count_at = size_t(it - bad.begin()) + sizeof(key) - 1 + 4 + 4;  // type, element type
    const uint64_t huge = 1ull << 40;
    std::memcpy(bad.data() + count_at, &huge, 8);
    expect_error(bad, "cannot fit");
    // A string length inside the vocabulary that runs past the end of the file.
    bad = bytes;
    const uint64_t long_string = ~0ull >> 1;
    std::memcpy(bad.data() + count_at + 8, &long_string, 8);
    expect_error(bad, "claims");
  }
  // A tensor offset beyond the data.
  {
    auto bad = bytes;
    const char name[] = "output.weight";
    auto it = std::search(bad.begin(), bad.end(), name, name + sizeof(name) - 1);
    ASSERT_NE(it, bad.end());
    const size_t offset_at = size_t(it - bad.begin()) + sizeof(name) - 1 + 4 + 2 * 8 + 4;
    const uint64_t far = 1ull << 40;
    std::memcpy(bad.data() + offset_at, &far, 8);
    expect_error(bad, "extends past the end");
  }
}

}  // namespace
}  // namespace magnetar::gguf
