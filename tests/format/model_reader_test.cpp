// The model-file reader must reject every malformed file with an error that names the problem,
// and never read outside the buffer (run under ASan in CI). Files are built in memory here from
// the layout in model_format.h, independently of the writer.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>

#include "format/model_reader.h"

namespace magnetar::format {
namespace {

// A tiny valid Llama-shaped file: dim 8, 1 layer, 2 heads of 4, vocab 4, hidden 16, all F32.
std::vector<uint8_t> build_file(const std::function<void(FileHeader&, std::vector<TensorEntry>&)>& edit = {}) {
  FileHeader h{};
  std::memcpy(h.magic, kMagic, sizeof(kMagic));
  h.version = kVersion;
  h.header_bytes = sizeof(FileHeader);
  h.architecture = 1;
  h.flags = kFlagTiedEmbeddings | kFlagAddBos;
  h.n_layers = 1, h.dim = 8, h.hidden_dim = 16, h.n_heads = 2, h.n_kv_heads = 1, h.head_dim = 4;
  h.vocab_size = 4, h.max_context = 32;
  h.norm_eps = 1e-5f, h.rope_theta = 10000.f, h.query_scale = 0.5f;
  h.bos_id = 1, h.n_eog_ids = 1, h.eog_ids[0] = 2;
  struct Decl { const char* name; uint64_t rows, cols; };
  const Decl decls[] = {{"tok_embeddings", 4, 8}, {"output_norm", 1, 8},
                        {"layers.0.attn_norm", 1, 8}, {"layers.0.wqkv", 16, 8},
                        {"layers.0.wo", 8, 8}, {"layers.0.ffn_norm", 1, 8},
                        {"layers.0.w_gate_up", 32, 8}, {"layers.0.w_down", 8, 16}};
  std::vector<TensorEntry> table;
  for (const auto& d : decls) {
    TensorEntry e{};
    std::strncpy(e.name, d.name, kMaxTensorName - 1);
    e.dtype = static_cast<uint32_t>(DType::F32);
    e.n_dims = d.rows == 1 ? 1 : 2;
    e.shape[0] = d.rows, e.shape[1] = d.cols;
    e.bytes = d.rows * d.cols * 4;
    table.push_back(e);
  }
  const std::string tokenizer = "tokenizer-bytes";
  h.n_tensors = static_cast<uint32_t>(table.size());
  h.tensor_table_offset = sizeof(FileHeader);
  h.tokenizer_offset = h.tensor_table_offset + table.size() * sizeof(TensorEntry);
  h.tokenizer_bytes = tokenizer.size();
  h.template_offset = h.tokenizer_offset + h.tokenizer_bytes;
  h.template_bytes = 0;
  uint64_t offset = align_up(h.template_offset, kAlignment);
  h.data_offset = offset;
  for (auto& e : table) {
    e.offset = offset;
    offset = align_up(offset + e.bytes, kAlignment);
  }
  h.file_bytes = offset;
  if (edit) edit(h, table);
  std::vector<uint8_t> file(offset, 0);
  std::memcpy(file.data(), &h, sizeof(h));
  std::memcpy(file.data() + sizeof(FileHeader), table.data(), table.size() * sizeof(TensorEntry));
  std::memcpy(file.data() + sizeof(FileHeader) + table.size() * sizeof(TensorEntry), tokenizer.data(),
              tokenizer.size());
  return file;
}

std::string parse_error(const std::vector<uint8_t>& file) {
  ModelFileView view;
  Status s = parse_model_file(file.data(), file.size(), &view);
  return s ? "" : s.message();
}

TEST(ModelReader, AcceptsAValidFile) {
  const auto file = build_file();
  ModelFileView view;
  Status s = parse_model_file(file.data(), file.size(), &view);
  ASSERT_TRUE(s) << s.message();
  ASSERT_NE(view.find("layers.0.wqkv"), nullptr);
  EXPECT_EQ(view.find("layers.0.wqkv")->rows, 16u);
  EXPECT_EQ(view.tokenizer, "tokenizer-bytes");
}

// Version-1 files still load: the tokenizer kind byte (reserved then) reads as SentencePiece
// whatever it holds, the RoPE fields as zero, and a sliding period 0 as "no sliding layer"
// (version 2's 0 means "every layer").
TEST(ModelReader, ReadsVersionOneFiles) {
  const auto file = build_file([](FileHeader& h, auto&) {
    h.version = 1;
    h.tokenizer_kind = 7;
    h.sliding_window = 16;
    h.sliding_window_period = 0;
  });
  ModelFileView view;
  Status s = parse_model_file(file.data(), file.size(), &view);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(view.header.tokenizer_kind, 0u);
  EXPECT_EQ(view.header.sliding_window, 0u);
  EXPECT_EQ(view.header.rope_scaling, 0u);
  EXPECT_EQ(view.header.rope_local_theta, 0.0f);
}

TEST(ModelReader, VersionTwoCarriesTheTokenizerKind) {
  const auto file = build_file([](FileHeader& h, auto&) { h.tokenizer_kind = 1; });
  ModelFileView view;
  ASSERT_TRUE(parse_model_file(file.data(), file.size(), &view));
  EXPECT_EQ(view.header.tokenizer_kind, 1u);
}

TEST(ModelReader, VersionTwoSlidingPeriodZeroMeansEveryLayer) {
  const auto file = build_file([](FileHeader& h, auto&) {
    h.sliding_window = 16;
    h.sliding_window_period = 0;
  });
  ModelFileView view;
  ASSERT_TRUE(parse_model_file(file.data(), file.size(), &view));
  EXPECT_EQ(view.header.sliding_window, 16u);
}

struct BadCase {
  const char* what;
  std::function<void(FileHeader&, std::vector<TensorEntry>&)> edit;
  const char* expected;  // a fragment of the message
};

class ModelReaderRejects : public ::testing::TestWithParam<BadCase> {};

TEST_P(ModelReaderRejects, WithAClearMessage) {
  const auto file = build_file(GetParam().edit);
  const std::string error = parse_error(file);
  EXPECT_NE(error.find(GetParam().expected), std::string::npos)
      << GetParam().what << ": got \"" << error << "\"";
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ModelReaderRejects,
    ::testing::Values(
        BadCase{"magic", [](FileHeader& h, auto&) { h.magic[0] = 'X'; }, "bad magic"},
        BadCase{"version", [](FileHeader& h, auto&) { h.version = 99; }, "unsupported format version 99"},
        BadCase{"version zero", [](FileHeader& h, auto&) { h.version = 0; }, "unsupported format version 0"},
        BadCase{"tokenizer kind", [](FileHeader& h, auto&) { h.tokenizer_kind = 5; }, "unknown tokenizer kind 5"},
        BadCase{"size field", [](FileHeader& h, auto&) { h.file_bytes += 64; }, "truncated or damaged"},
        BadCase{"architecture", [](FileHeader& h, auto&) { h.architecture = 99; }, "unknown architecture"},
        BadCase{"zero dim", [](FileHeader& h, auto&) { h.dim = 0; }, "hyperparameter"},
        BadCase{"gqa", [](FileHeader& h, auto&) { h.n_kv_heads = 3; }, "not a multiple of n_kv_heads"},
        BadCase{"eps", [](FileHeader& h, auto&) { h.norm_eps = -1; }, "invalid float"},
        BadCase{"bos", [](FileHeader& h, auto&) { h.bos_id = 4; }, "BOS id 4 is outside"},
        BadCase{"eog", [](FileHeader& h, auto&) { h.eog_ids[0] = 99; }, "end-of-generation id 99"},
        BadCase{"table", [](FileHeader& h, auto&) { h.tensor_table_offset = 1ull << 40; }, "tensor table lies outside"},
        BadCase{"tokenizer", [](FileHeader& h, auto&) { h.tokenizer_bytes = 1ull << 40; }, "tokenizer section"},
        BadCase{"tensor offset", [](FileHeader&, auto& t) { t[3].offset += 1ull << 30; }, "'layers.0.wqkv'): data lies outside"},
        BadCase{"misaligned", [](FileHeader&, auto& t) { t[3].offset += 4; }, "misaligned"},
        BadCase{"shape", [](FileHeader&, auto& t) { t[4].shape[0] = 9; }, "does not match the header"},
        BadCase{"bytes", [](FileHeader&, auto& t) { t[4].bytes = 12; }, "byte size does not match"},
        BadCase{"dtype", [](FileHeader&, auto& t) { t[0].dtype = 77; }, "unknown dtype 77"},
        BadCase{"norm dtype", [](FileHeader&, auto& t) { t[1].dtype = 1; }, "norm weights and biases must be f32"},
        BadCase{"unknown tensor", [](FileHeader&, auto& t) { std::strcpy(t[2].name, "layers.0.bogus"); }, "not a tensor this format defines"},
        BadCase{"layer index", [](FileHeader&, auto& t) { std::strcpy(t[2].name, "layers.5.attn_norm"); }, "not a tensor this format defines"},
        BadCase{"duplicate", [](FileHeader&, auto& t) { std::strcpy(t[5].name, "layers.0.attn_norm"); }, "duplicate name"},
        BadCase{"unterminated", [](FileHeader&, auto& t) { std::memset(t[0].name, 'a', kMaxTensorName); }, "not terminated"},
        BadCase{"missing output", [](FileHeader& h, auto&) { h.flags &= ~kFlagTiedEmbeddings; }, "missing tensor 'output'"},
        BadCase{"rope scaling id", [](FileHeader& h, auto&) { h.rope_scaling = 9; }, "unknown RoPE scaling id 9"},
        BadCase{"rope factor", [](FileHeader& h, auto&) { h.rope_scaling = 1, h.rope_scaling_factor = 0; },
                "invalid RoPE scaling"},
        BadCase{"llama3 rope", [](FileHeader& h, auto&) {
                  h.rope_scaling = 2, h.rope_scaling_factor = 8, h.rope_low_freq_factor = 4;
                  h.rope_high_freq_factor = 1, h.rope_original_context = 8192;
                }, "high_freq_factor > low_freq_factor"},
        BadCase{"local rope", [](FileHeader& h, auto&) { h.rope_local_theta = -1; }, "local RoPE base"},
        // Qwen 2 files hold q/k/v biases; this Llama-shaped file has none.
        BadCase{"qwen2 bias", [](FileHeader& h, auto&) { h.architecture = 4; }, "missing tensor 'layers.0.bqkv'"},
        BadCase{"qwen3 norms", [](FileHeader& h, auto&) { h.architecture = 5; }, "missing tensor 'layers.0.q_norm'"}),
    [](const auto& info) {
      std::string n = info.param.what;
      for (char& c : n) if (c == ' ') c = '_';
      return n;
    });

TEST(ModelReader, EveryTruncationIsRejected) {
  const auto file = build_file();
  for (size_t size : {size_t(0), size_t(7), size_t(100), sizeof(FileHeader), sizeof(FileHeader) + 50,
                      file.size() / 2, file.size() - 1}) {
    std::vector<uint8_t> cut(file.begin(), file.begin() + size);
    ModelFileView view;
    EXPECT_FALSE(parse_model_file(cut.data(), cut.size(), &view)) << "size " << size;
  }
}

TEST(ModelReader, RandomByteFlipsNeverCrash) {
  const auto file = build_file();
  uint64_t state = 12345;
  for (int trial = 0; trial < 3000; ++trial) {
    auto copy = file;
    for (int k = 0; k < 4; ++k) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      const size_t at = (state >> 33) % (sizeof(FileHeader) + 8 * sizeof(TensorEntry));
      copy[at] = static_cast<uint8_t>(state >> 13);
    }
    ModelFileView view;
    Status s = parse_model_file(copy.data(), copy.size(), &view);
    if (s) {  // a flip that kept the file valid must still give in-bounds views
      for (const auto& t : view.tensors) ASSERT_LE(t.offset + t.bytes, copy.size());
    }
  }
}

}  // namespace
}  // namespace magnetar::format
