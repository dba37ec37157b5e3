// GGUF import: the tiny Llama GGUF's vocabulary becomes a SentencePiece model that encodes
// llama.cpp's 47 hard test strings exactly as Hugging Face's Llama 2 tokenizer does, and its
// plan maps metadata and tensors (q/k marked for the interleaved→rotate-half permutation).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <sstream>

#include "common/testdata.h"
#include "convert/gguf_import.h"
#include "magnetar/engine.h"
#include "tokenizer/tokenizer.h"

namespace magnetar::convert {
namespace {

const char kTinyLlama[] = "gguf/llama-2-tiny-random.gguf";

std::vector<std::string> split(const std::string& text, const std::string& sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t at; (at = text.find(sep, start)) != std::string::npos; start = at + sep.size())
    out.push_back(text.substr(start, at - start));
  out.push_back(text.substr(start));
  return out;
}

TEST(GgufImport, VocabularyEncodesLikeLlama2Tokenizer) {
  MAGNETAR_REQUIRE_TESTDATA(kTinyLlama);
  MAGNETAR_REQUIRE_TESTDATA("tokenizers/llama2/cases.inp");
  const std::string bytes = test::read_file(test::testdata_path(kTinyLlama));
  gguf::File file;
  ASSERT_TRUE(gguf::parse(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &file).is_ok());
  spm::ModelSpec spec;
  const Status s = gguf_vocab_to_spec(file, &spec);
  ASSERT_TRUE(s.is_ok()) << s.message();
  EXPECT_EQ(spec.pieces.size(), 32000u);
  EXPECT_EQ(spec.unk_id, 0);
  EXPECT_EQ(spec.bos_id, 1);
  EXPECT_EQ(spec.eos_id, 2);
  EXPECT_EQ(spec.pieces[3].type, spm::PieceType::Byte);
  std::string proto;
  ASSERT_TRUE(spm::build_sentencepiece_model(spec, &proto).is_ok());
  Tokenizer tok;
  const Status loaded = tok.load(proto);
  ASSERT_TRUE(loaded.is_ok()) << loaded.message();

  const auto inputs = split(test::read_file(test::testdata_path("tokenizers/llama2/cases.inp")),
                            "\n__ggml_vocab_test__\n");
  const auto expected = split(test::read_file(test::testdata_path("tokenizers/llama2/cases.out")), "\n");
  ASSERT_EQ(inputs.size(), 47u);
  ASSERT_EQ(expected.size(), inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::vector<int> want, got;
    std::istringstream ids(expected[i]);
    for (int id; ids >> id;) want.push_back(id);
    ASSERT_TRUE(tok.encode(inputs[i], &got).is_ok());
    EXPECT_EQ(got, want) << "input: \"" << inputs[i] << "\"";
  }
  std::vector<int> chat;
  ASSERT_TRUE(tok.encode_with_special("<s>[INST] Hi [/INST]", &chat).is_ok());
  EXPECT_EQ(chat.front(), 1);
}

TEST(GgufImport, PlanMapsMetadataAndTensors) {
  MAGNETAR_REQUIRE_TESTDATA(kTinyLlama);
  const std::string path = test::testdata_path(kTinyLlama);
  EXPECT_TRUE(looks_like_gguf(path));
  EXPECT_FALSE(looks_like_gguf(test::testdata_path("README.md")));
  ConversionPlan plan;
  const Status s = plan_gguf(path, &plan);
  ASSERT_TRUE(s.is_ok()) << s.message();
  EXPECT_EQ(plan.architecture, "LlamaForCausalLM");
  const format::FileHeader& h = plan.header;
  EXPECT_EQ(h.architecture, uint32_t(magnetar::Architecture::Llama));
  EXPECT_EQ(h.n_layers, 1u);
  EXPECT_EQ(h.dim, 8u);
  EXPECT_EQ(h.hidden_dim, 32u);
  EXPECT_EQ(h.n_heads, 2u);
  EXPECT_EQ(h.n_kv_heads, 2u);
  EXPECT_EQ(h.head_dim, 4u);
  EXPECT_EQ(h.vocab_size, 32000u);
  EXPECT_EQ(h.max_context, 4096u);
  EXPECT_FLOAT_EQ(h.norm_eps, 1e-5f);
  EXPECT_FLOAT_EQ(h.rope_theta, 10000.0f);
  EXPECT_FLOAT_EQ(h.query_scale, 0.5f);
  EXPECT_EQ(h.activation, uint32_t(format::Activation::Silu));
  EXPECT_EQ(h.flags & format::kFlagTiedEmbeddings, 0u);  // output.weight present
  EXPECT_NE(h.flags & format::kFlagAddBos, 0u);
  EXPECT_EQ(h.bos_id, 1);
  ASSERT_EQ(h.n_eog_ids, 1);
  EXPECT_EQ(h.eog_ids[0], 2);
  EXPECT_FALSE(plan.tokenizer.empty());

  // tok_embeddings, per layer attn_norm wqkv wo ffn_norm w_gate_up w_down, output_norm, output
  ASSERT_EQ(plan.tensors.size(), 1u + 6u + 2u);
  const PlannedTensor* wqkv = nullptr;
  for (const PlannedTensor& t : plan.tensors)
    if (t.name == "layers.0.wqkv") wqkv = &t;
  ASSERT_NE(wqkv, nullptr);
  EXPECT_EQ(wqkv->rows, 24u);
  EXPECT_EQ(wqkv->cols, 8u);
  ASSERT_EQ(wqkv->parts.size(), 3u);
  EXPECT_EQ(wqkv->parts[0].name, "blk.0.attn_q.weight");
  EXPECT_EQ(wqkv->parts[0].interleaved_rope_heads, 2u);  // llama.cpp permuted q and k
  EXPECT_EQ(wqkv->parts[1].interleaved_rope_heads, 2u);
  EXPECT_EQ(wqkv->parts[2].interleaved_rope_heads, 0u);
  EXPECT_EQ(wqkv->parts[0].dtype, SourceDType::F16);
  EXPECT_EQ(plan.tensors.front().name, "tok_embeddings");
  EXPECT_EQ(plan.tensors.front().rows, 32000u);
  EXPECT_EQ(plan.tensors.back().name, "output");
  uint64_t bytes = 0;
  for (const PlannedTensor& t : plan.tensors)
    for (const SourceRange& r : t.parts) bytes += r.bytes();
  EXPECT_EQ(plan.bytes_to_read, bytes);
}

TEST(GgufImport, RejectsWhatItCannotImport) {
  const std::string dir = test::make_temp_dir("gguf_import");
  auto write = [&](const std::string& name, const std::string& bytes) {
    const std::string path = dir + "/" + name;
    FILE* f = std::fopen(path.c_str(), "wb");
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
    return path;
  };
  auto str = [](const std::string& s) {
    std::string out(8, '\0');
    const uint64_t n = s.size();
    std::memcpy(out.data(), &n, 8);
    return out + s;
  };
  auto u32 = [](uint32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); };
  auto u64 = [](uint64_t v) { return std::string(reinterpret_cast<const char*>(&v), 8); };
  // general.architecture = "mamba"
  const std::string mamba = "GGUF" + u32(3) + u64(0) + u64(1) + str("general.architecture") + u32(8) + str("mamba");
  ConversionPlan plan;
  Status s = plan_gguf(write("mamba.gguf", mamba), &plan);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("not supported"), std::string::npos) << s.message();
  // Truncated file: the reader's error, prefixed with the path.
  s = plan_gguf(write("cut.gguf", mamba.substr(0, 30)), &plan);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("cut.gguf"), std::string::npos) << s.message();
  test::remove_tree(dir);
}

}  // namespace
}  // namespace magnetar::convert
