// GGUF planning on the fuzz target's seeds (fuzz/corpus/gguf_plan: headers and tensor tables of
// tiny models of every family, with the data section appended as zeros as the fuzz target does):
// each seed plans — so the fuzzer starts deep in the planner — with the block types, shapes,
// vocabulary and template the seed says; and the inputs the fuzzer found that broke planning
// stay clear errors.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/testdata.h"
#include "convert/gguf_import.h"
#include "magnetar/engine.h"
#include "tokenizer/tokenizer.h"

namespace magnetar::convert {
namespace {

const std::string kSeeds = MAGNETAR_GGUF_PLAN_SEEDS;

// The seed's bytes followed by the fuzz target's zero data section.
std::vector<uint8_t> seed_file(const std::string& name) {
  const std::string bytes = test::read_file(kSeeds + "/" + name);
  std::vector<uint8_t> file(bytes.begin(), bytes.end());
  file.resize(file.size() + (size_t(1) << 20), 0);
  return file;
}

Status plan_seed(const std::string& name, ConversionPlan* plan) {
  const std::vector<uint8_t> file = seed_file(name);
  return plan_gguf_bytes(name, file.data(), file.size(), plan);
}

const PlannedTensor* find(const ConversionPlan& plan, const std::string& name) {
  for (const PlannedTensor& t : plan.tensors)
    if (t.name == name) return &t;
  return nullptr;
}

TEST(GgufPlanSeeds, LlamaKeepsEveryKQuantType) {
  ConversionPlan plan;
  const Status s = plan_seed("llama_kquants.gguf", &plan);
  ASSERT_TRUE(s.is_ok()) << s.message();
  EXPECT_EQ(plan.architecture, "LlamaForCausalLM");
  EXPECT_EQ(plan.header.dim, 256u);
  EXPECT_EQ(plan.header.vocab_size, 7u);
  EXPECT_NE(plan.header.flags & format::kFlagRopeFreqFactors, 0u);
  EXPECT_EQ(plan.header.flags & format::kFlagTiedEmbeddings, 0u);
  const PlannedTensor* qkv = find(plan, "layers.0.wqkv");
  ASSERT_NE(qkv, nullptr);
  ASSERT_EQ(qkv->parts.size(), 3u);
  EXPECT_EQ(qkv->parts[0].block_type, format::DType::Q4_K);
  EXPECT_EQ(qkv->parts[1].block_type, format::DType::Q5_K);
  EXPECT_EQ(qkv->parts[2].block_type, format::DType::Q6_K);
  EXPECT_EQ(qkv->parts[0].interleaved_rope_heads, 2u);  // llama q/k rows are unpermuted
  EXPECT_EQ(qkv->parts[2].interleaved_rope_heads, 0u);
  const PlannedTensor* gate_up = find(plan, "layers.0.w_gate_up");
  ASSERT_NE(gate_up, nullptr);
  EXPECT_EQ(gate_up->parts[0].block_type, format::DType::Q2_K);
  EXPECT_EQ(gate_up->parts[1].block_type, format::DType::IQ4_XS);
  EXPECT_EQ(find(plan, "layers.0.w_down")->parts[0].block_type, format::DType::IQ4_NL);
  EXPECT_EQ(find(plan, "layers.0.wo")->parts[0].block_type, format::DType::Q3_K);
  EXPECT_NE(find(plan, "rope_freqs"), nullptr);
  EXPECT_FALSE(plan.chat_template.empty());
}

TEST(GgufPlanSeeds, EveryFamilyPlans) {
  struct Case {
    const char* seed;
    const char* architecture;
    TokenizerKind tokenizer;
    size_t n_tensors;
  };
  const Case cases[] = {
      // tok_embeddings, per layer 6 (+2 post norms), output_norm
      {"gemma2_blocks.gguf", "Gemma2ForCausalLM", TokenizerKind::SentencePiece, 1 + 2 * 8 + 1},
      // + q/k norms
      {"gemma3_qk_norms.gguf", "Gemma3ForCausalLM", TokenizerKind::SentencePiece, 1 + 10 + 1},
      // + bqkv, untied output
      {"qwen2_bpe.gguf", "Qwen2ForCausalLM", TokenizerKind::HuggingFace, 1 + 7 + 2},
      {"qwen3_qk_norms.gguf", "Qwen3ForCausalLM", TokenizerKind::HuggingFace, 1 + 8 + 1},
      {"phi3_fused.gguf", "Phi3ForCausalLM", TokenizerKind::SentencePiece, 1 + 6 + 2},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.seed);
    ConversionPlan plan;
    const Status s = plan_seed(c.seed, &plan);
    ASSERT_TRUE(s.is_ok()) << s.message();
    EXPECT_EQ(plan.architecture, c.architecture);
    EXPECT_EQ(plan.header.tokenizer_kind, uint32_t(c.tokenizer));
    EXPECT_EQ(plan.tensors.size(), c.n_tensors);
    EXPECT_FALSE(plan.tokenizer.empty());
    EXPECT_GE(plan.header.n_eog_ids, 1);
  }
}

TEST(GgufPlanSeeds, FamilyDetailsComeFromTheMetadata) {
  ConversionPlan gemma2, gemma3, phi3, qwen2;
  ASSERT_TRUE(plan_seed("gemma2_blocks.gguf", &gemma2).is_ok());
  EXPECT_FLOAT_EQ(gemma2.header.attn_softcap, 50.0f);
  EXPECT_FLOAT_EQ(gemma2.header.final_softcap, 30.0f);
  EXPECT_EQ(gemma2.header.sliding_window_period, 2u);
  EXPECT_NE(gemma2.header.flags & format::kFlagTiedEmbeddings, 0u);
  EXPECT_EQ(find(gemma2, "layers.1.wqkv")->parts[1].dtype, SourceDType::BF16);
  EXPECT_EQ(find(gemma2, "layers.0.w_down")->parts[0].block_type, format::DType::Q4_1);
  ASSERT_TRUE(plan_seed("gemma3_qk_norms.gguf", &gemma3).is_ok());
  EXPECT_EQ(gemma3.header.sliding_window, 512u);
  EXPECT_EQ(gemma3.header.sliding_window_period, 6u);
  EXPECT_FLOAT_EQ(gemma3.header.rope_local_theta, 10000.0f);
  ASSERT_TRUE(plan_seed("phi3_fused.gguf", &phi3).is_ok());
  EXPECT_EQ(phi3.header.rope_scaling, uint32_t(format::RopeScaling::Linear));
  EXPECT_EQ(find(phi3, "layers.0.wqkv")->parts.size(), 1u);  // stored fused
  EXPECT_EQ(find(phi3, "layers.0.w_gate_up")->rows, 512u);
  ASSERT_TRUE(plan_seed("qwen2_bpe.gguf", &qwen2).is_ok());
  EXPECT_EQ(find(qwen2, "layers.0.bqkv")->parts.size(), 3u);
  EXPECT_EQ(qwen2.header.bos_id, 258);
  EXPECT_EQ(qwen2.header.vocab_size, 261u);
}

// Every prefix of a seed is either a plan or an error (never a crash): the reader's checks and
// the planner's together, on tables cut anywhere.
TEST(GgufPlanSeeds, TruncatedTablesAreErrors) {
  const std::string bytes = test::read_file(kSeeds + "/qwen2_bpe.gguf");
  for (size_t n = 0; n < bytes.size(); n += 7) {
    ConversionPlan plan;
    const std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + std::ptrdiff_t(n));
    EXPECT_FALSE(plan_gguf_bytes("cut.gguf", cut.data(), cut.size(), &plan).is_ok()) << n;
  }
}

}  // namespace
}  // namespace magnetar::convert
