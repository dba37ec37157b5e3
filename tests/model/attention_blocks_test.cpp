// Attention by blocks (model/forward.cpp attention_block): a prefill's query rows go in blocks
// whose size follows the KV cache's context (about 4 MiB of scores per worker), so a long context
// splits one 64-token batch into several blocks that start mid-batch, see keys from earlier batches
// and, with a sliding window, start past key 0. The same tokens with a short context (one block per
// batch) must give the same logits up to float rounding: a block's offsets, masks or value sums
// gone wrong move them far more.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "common/converted_models.h"
#include "common/logit_quality.h"
#include "common/testdata.h"
#include "magnetar/engine.h"

namespace magnetar {
namespace {

// 150 token ids (three prefill batches, the last one partial) spread over the vocabulary.
std::vector<int> spread_tokens(int vocab) {
  std::vector<int> tokens(150);
  uint32_t state = 12345;
  for (int& t : tokens) {
    state = state * 1664525u + 1013904223u;
    t = static_cast<int>((state >> 8) % static_cast<uint32_t>(vocab));
  }
  return tokens;
}

void expect_blocks_agree(const std::string& folder, KvType kv) {
  std::string error;
  const std::string path = test::converted_model(folder, WeightType::F32, &error);
  ASSERT_FALSE(path.empty()) << error;
  ModelInfo probe;
  LoadOptions short_context;
  short_context.kv_type = kv;
  short_context.context_length = 256;  // one block per 64-token batch
  ASSERT_FALSE(test::evaluate_logits(path, short_context, {1}, &probe).empty());
  const std::vector<int> tokens = spread_tokens(probe.vocab_size);
  const std::vector<float> one_block = test::evaluate_logits(path, short_context, tokens);

  LoadOptions long_context = short_context;
  long_context.context_length = 32768;  // 2^20 / 32768 = 32 query rows: 32 / group tokens a block
  ModelInfo info;
  const std::vector<float> blocks = test::evaluate_logits(path, long_context, tokens, &info);
  ASSERT_EQ(info.context_length, 32768);
  ASSERT_EQ(blocks.size(), one_block.size());
  ASSERT_EQ(blocks.size(), tokens.size() * size_t(info.vocab_size));

  double scale = 0.0, worst = 0.0;
  for (size_t i = 0; i < blocks.size(); ++i) {
    scale = std::max(scale, double(std::fabs(one_block[i])));
    worst = std::max(worst, double(std::fabs(blocks[i] - one_block[i])));
  }
  std::printf("%s %s: max |logit| %.3g, max difference %.3g\n", folder.c_str(), kv_type_name(kv), scale, worst);
  EXPECT_GT(scale, 0.0);
  EXPECT_LE(worst, 1e-4 * scale) << folder << ": blocked attention differs from whole batches";
}

TEST(AttentionBlocks, TinyLlama31LongContextMatchesShort) {
  MAGNETAR_REQUIRE_TESTDATA("models/tiny-llama31");
  expect_blocks_agree("models/tiny-llama31", KvType::F32);
  expect_blocks_agree("models/tiny-llama31", KvType::F16);
  expect_blocks_agree("models/tiny-llama31", KvType::Int8);
}

// Sliding-window layers (a window of 8): blocks whose first visible key is past 0.
TEST(AttentionBlocks, TinyGemma3SlidingWindowLongContextMatchesShort) {
  MAGNETAR_REQUIRE_TESTDATA("models/tiny-gemma3");
  expect_blocks_agree("models/tiny-gemma3", KvType::F32);
}

}  // namespace
}  // namespace magnetar
