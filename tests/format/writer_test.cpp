// ModelWriter: the file it writes parses with the validating reader and holds exactly what was
// written (header fields, table, tokenizer, template, tensor bytes, zero padding); tensors may
// arrive in any order and in parts; misuse is an error; an uncommitted writer leaves nothing and
// commit() replaces an existing file atomically.
#include "format/model_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <fstream>

#include "common/testdata.h"
#include "format/model_reader.h"

namespace magnetar::format {
namespace {

namespace fs = std::filesystem;
using test::make_temp_dir;
using test::read_file;
using test::remove_tree;

std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  return names;
}

// A tiny valid Llama-shaped model: dim 8, 1 layer, 2 heads of 4, 1 KV head, vocab 4, hidden 12;
// matrices F16 with odd byte sizes so padding is exercised.
struct TinyModel {
  FileHeader header{};
  std::vector<TensorDecl> decls;
  std::vector<std::string> data;  // bytes per tensor
  std::string tokenizer = "spm-bytes-\x01\x02";
  std::string chat_template = "{{ messages }}";

  TinyModel() {
    header.architecture = 1;
    header.flags = kFlagTiedEmbeddings | kFlagAddBos;
    header.n_layers = 1, header.dim = 8, header.hidden_dim = 12, header.n_heads = 2;
    header.n_kv_heads = 1, header.head_dim = 4, header.vocab_size = 4, header.max_context = 16;
    header.norm_eps = 1e-5f, header.rope_theta = 10000.0f, header.query_scale = 0.5f;
    header.bos_id = 1, header.n_eog_ids = 1, header.eog_ids[0] = 2;
    decls = {{"tok_embeddings", DType::F16, 4, 8, 2},   {"layers.0.attn_norm", DType::F32, 1, 8, 1},
             {"layers.0.wqkv", DType::F16, 16, 8, 2},   {"layers.0.wo", DType::F16, 8, 8, 2},
             {"layers.0.ffn_norm", DType::F32, 1, 8, 1}, {"layers.0.w_gate_up", DType::F16, 24, 8, 2},
             {"layers.0.w_down", DType::F16, 8, 12, 2},  {"output_norm", DType::F32, 1, 8, 1}};
    for (size_t i = 0; i < decls.size(); ++i) {
      std::string bytes(tensor_bytes(decls[i].dtype, decls[i].rows, decls[i].cols), '\0');
      for (size_t j = 0; j < bytes.size(); ++j) bytes[j] = static_cast<char>(i * 31 + j * 7 + 1);
      data.push_back(bytes);
    }
  }
};

class ModelWriterTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = make_temp_dir("writer"); path_ = dir_ + "/m.mgn"; }
  void TearDown() override { remove_tree(dir_); }
  std::string dir_, path_;
};

TEST_F(ModelWriterTest, WritesAFileTheReaderAccepts) {
  TinyModel m;
  std::unique_ptr<ModelWriter> w;
  ASSERT_TRUE(ModelWriter::create(path_, m.header, m.decls, m.tokenizer, m.chat_template, &w).is_ok());
  // Reverse order, and one tensor in three uneven parts.
  for (size_t i = m.decls.size(); i-- > 0;) {
    if (i == 2) {
      const std::string& d = m.data[i];
      ASSERT_TRUE(w->write_tensor_part(i, 0, d.data(), 5).is_ok());
      ASSERT_TRUE(w->write_tensor_part(i, 5, d.data() + 5, 100).is_ok());
      ASSERT_TRUE(w->write_tensor_part(i, 105, d.data() + 105, d.size() - 105).is_ok());
    } else {
      ASSERT_TRUE(w->write_tensor(i, m.data[i].data(), m.data[i].size()).is_ok());
    }
  }
  EXPECT_FALSE(fs::exists(path_)) << "visible before commit";
  Status s = w->commit();
  ASSERT_TRUE(s.is_ok()) << s.message();
  EXPECT_EQ(entries(dir_), std::vector<std::string>{"m.mgn"});

  const std::string file = read_file(path_);
  EXPECT_EQ(file.size(), w->file_bytes());
  ModelFileView view;
  s = parse_model_file(reinterpret_cast<const uint8_t*>(file.data()), file.size(), &view);
  ASSERT_TRUE(s.is_ok()) << s.message();
  const FileHeader& h = view.header;
  EXPECT_EQ(std::memcmp(h.magic, kMagic, 8), 0);
  EXPECT_EQ(h.version, kVersion);
  EXPECT_EQ(h.header_bytes, sizeof(FileHeader));
  EXPECT_EQ(h.n_tensors, m.decls.size());
  EXPECT_EQ(h.tensor_table_offset, sizeof(FileHeader));
  EXPECT_EQ(h.data_offset % kAlignment, 0u);
  EXPECT_EQ(h.file_bytes, file.size());
  EXPECT_EQ(h.dim, 8u);
  EXPECT_EQ(h.eog_ids[0], 2);
  EXPECT_EQ(view.tokenizer, m.tokenizer);
  EXPECT_EQ(view.chat_template, m.chat_template);
  ASSERT_EQ(view.tensors.size(), m.decls.size());
  uint64_t expected_offset = h.data_offset;
  for (size_t i = 0; i < m.decls.size(); ++i) {
    const TensorView& t = view.tensors[i];
    EXPECT_EQ(t.name, m.decls[i].name);
    EXPECT_EQ(t.dtype, m.decls[i].dtype);
    EXPECT_EQ(t.rows, m.decls[i].rows);
    EXPECT_EQ(t.cols, m.decls[i].cols);
    EXPECT_EQ(t.n_dims, m.decls[i].n_dims);
    EXPECT_EQ(t.offset, expected_offset) << t.name;  // declaration order, 64-byte aligned
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(t.data), t.bytes), m.data[i]) << t.name;
    // Padding after each tensor is zero.
    const uint64_t end = t.offset + t.bytes, next = align_up(end, kAlignment);
    EXPECT_EQ(file.substr(end, next - end), std::string(next - end, '\0')) << t.name;
    expected_offset = next;
  }
  EXPECT_EQ(expected_offset, file.size());
}

TEST_F(ModelWriterTest, CommitReplacesAnExistingFile) {
  TinyModel m;
  { std::ofstream(path_) << "old"; }
  std::unique_ptr<ModelWriter> w;
  ASSERT_TRUE(ModelWriter::create(path_, m.header, m.decls, m.tokenizer, "", &w).is_ok());
  for (size_t i = 0; i < m.decls.size(); ++i)
    ASSERT_TRUE(w->write_tensor(i, m.data[i].data(), m.data[i].size()).is_ok());
  EXPECT_EQ(read_file(path_), "old");
  ASSERT_TRUE(w->commit().is_ok());
  EXPECT_EQ(read_file(path_).size(), w->file_bytes());
  EXPECT_EQ(entries(dir_), std::vector<std::string>{"m.mgn"});
}

TEST_F(ModelWriterTest, UncommittedWriterLeavesNothingAndKeepsTheOldFile) {
  TinyModel m;
  { std::ofstream(path_) << "old"; }
  {
    std::unique_ptr<ModelWriter> w;
    ASSERT_TRUE(ModelWriter::create(path_, m.header, m.decls, m.tokenizer, "", &w).is_ok());
    ASSERT_TRUE(w->write_tensor(0, m.data[0].data(), m.data[0].size()).is_ok());
    EXPECT_EQ(entries(dir_).size(), 2u);  // the old file and the temporary
    Status s = w->commit();               // incomplete: refused
    ASSERT_FALSE(s.is_ok());
    EXPECT_NE(s.message().find("not written completely"), std::string::npos) << s.message();
  }
  EXPECT_EQ(entries(dir_), std::vector<std::string>{"m.mgn"});
  EXPECT_EQ(read_file(path_), "old");
}

TEST_F(ModelWriterTest, MisuseIsAnError) {
  TinyModel m;
  std::unique_ptr<ModelWriter> w;
  ASSERT_TRUE(ModelWriter::create(path_, m.header, m.decls, m.tokenizer, "", &w).is_ok());
  const std::string& d = m.data[0];
  EXPECT_FALSE(w->write_tensor(99, d.data(), d.size()).is_ok());          // no such tensor
  EXPECT_FALSE(w->write_tensor(0, d.data(), d.size() - 1).is_ok());       // wrong size
  EXPECT_FALSE(w->write_tensor_part(0, 4, d.data(), 4).is_ok());          // gap
  ASSERT_TRUE(w->write_tensor_part(0, 0, d.data(), 4).is_ok());
  EXPECT_FALSE(w->write_tensor_part(0, 0, d.data(), 4).is_ok());          // rewind
  Status s = w->write_tensor_part(0, 4, d.data(), d.size());              // past the end
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("overflows"), std::string::npos) << s.message();
}

TEST_F(ModelWriterTest, BadDeclarationsAreRejected) {
  TinyModel m;
  std::unique_ptr<ModelWriter> w;
  auto create = [&](std::vector<TensorDecl> decls) {
    return ModelWriter::create(path_, m.header, decls, m.tokenizer, "", &w);
  };
  EXPECT_FALSE(create({}).is_ok());
  EXPECT_FALSE(create({{"a", DType::F32, 1, 4, 2}, {"a", DType::F32, 1, 4, 2}}).is_ok());  // twice
  EXPECT_FALSE(create({{std::string(kMaxTensorName, 'x'), DType::F32, 1, 4, 2}}).is_ok());  // long
  EXPECT_FALSE(create({{"a", DType::F32, 2, 4, 1}}).is_ok());       // 1-D with 2 rows
  EXPECT_FALSE(create({{"a", DType::F32, 0, 4, 2}}).is_ok());       // empty
  EXPECT_FALSE(create({{"a", DType::Q8_0, 2, 40, 2}}).is_ok());     // not a block multiple
  EXPECT_FALSE(create({{"a", static_cast<DType>(9), 2, 4, 2}}).is_ok());
  EXPECT_TRUE(entries(dir_).empty());
  Status s = ModelWriter::create(dir_ + "/no/such/folder/m.mgn", m.header, m.decls, m.tokenizer, "", &w);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("cannot create"), std::string::npos) << s.message();
}

// The writer applies the reader's rules before writing a byte: values the converter could
// produce from a hostile config (narrowed to inf or 0, out of the reader's ranges) never reach
// a file the reader would then reject.
TEST_F(ModelWriterTest, HeadersTheReaderWouldRejectAreNotWritten) {
  struct Case {
    const char* what;
    std::function<void(FileHeader&)> edit;
  };
  const Case cases[] = {
      {"norm_eps narrowed to inf", [](FileHeader& h) { h.norm_eps = std::numeric_limits<float>::infinity(); }},
      {"norm_eps narrowed to 0", [](FileHeader& h) { h.norm_eps = 0.0f; }},
      {"rope_theta NaN", [](FileHeader& h) { h.rope_theta = std::nanf(""); }},
      {"negative softcap", [](FileHeader& h) { h.attn_softcap = -1.0f; }},
      {"sliding window >= 2^31", [](FileHeader& h) { h.sliding_window = 0x80000000u; }},
      {"sliding period >= 2^31", [](FileHeader& h) { h.sliding_window_period = 0xFFFFFFFFu; }},
      {"eog id outside the vocabulary", [](FileHeader& h) { h.eog_ids[0] = 99; }},
      {"unknown architecture", [](FileHeader& h) { h.architecture = 77; }},
      {"n_heads not a multiple of n_kv_heads", [](FileHeader& h) { h.n_kv_heads = 3; }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    TinyModel m;
    c.edit(m.header);
    std::unique_ptr<ModelWriter> w;
    Status s = ModelWriter::create(path_, m.header, m.decls, m.tokenizer, "", &w);
    ASSERT_FALSE(s.is_ok());
    EXPECT_NE(s.message().find("the reader would reject it"), std::string::npos) << s.message();
    EXPECT_TRUE(entries(dir_).empty());
  }
  // A table that does not match the header (a layer missing) is refused the same way.
  TinyModel m;
  m.header.n_layers = 2;
  std::unique_ptr<ModelWriter> w;
  EXPECT_FALSE(ModelWriter::create(path_, m.header, m.decls, m.tokenizer, "", &w).is_ok());
  EXPECT_TRUE(entries(dir_).empty());
}

TEST(ModelFormat, TensorBytesAndNames) {
  EXPECT_EQ(tensor_bytes(DType::F32, 3, 5), 60u);
  EXPECT_EQ(tensor_bytes(DType::F16, 3, 5), 30u);
  EXPECT_EQ(tensor_bytes(DType::Q8_0, 2, 64), 2u * 2 * 34);
  EXPECT_EQ(tensor_bytes(DType::Q4_0, 2, 64), 2u * 2 * 18);
  EXPECT_STREQ(dtype_name(DType::F32), "f32");
  EXPECT_STREQ(dtype_name(DType::F16), "f16");
  EXPECT_STREQ(dtype_name(DType::Q8_0), "q8_0");
  EXPECT_STREQ(dtype_name(DType::Q4_0), "q4_0");
  EXPECT_TRUE(dtype_is_valid(0));
  EXPECT_TRUE(dtype_is_valid(3));
  EXPECT_TRUE(dtype_is_valid(kDTypeCount - 1));
  EXPECT_FALSE(dtype_is_valid(kDTypeCount));
  EXPECT_EQ(tensor_bytes(DType::Q4_K, 2, 512), 2u * 2 * 144);  // GGUF's 256-value super-blocks
  EXPECT_EQ(tensor_bytes(DType::Q6_K, 1, 256), 210u);
  EXPECT_EQ(tensor_bytes(DType::IQ4_NL, 1, 64), 2u * 18);
  EXPECT_STREQ(dtype_name(DType::IQ4_XS), "iq4_xs");
  DType parsed;
  EXPECT_TRUE(dtype_from_name("Q5_K", &parsed));
  EXPECT_EQ(parsed, DType::Q5_K);
  EXPECT_TRUE(dtype_from_ggml(14, &parsed));  // GGML_TYPE_Q6_K
  EXPECT_EQ(parsed, DType::Q6_K);
  EXPECT_FALSE(dtype_from_ggml(15, &parsed));  // Q8_K: no file type
  EXPECT_FALSE(dtype_fits_cols(DType::Q4_K, 128));
  EXPECT_FALSE(dtype_is_valid(0xffffffffu));
}

}  // namespace
}  // namespace magnetar::format
