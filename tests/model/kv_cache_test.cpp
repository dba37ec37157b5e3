// KV cache element types: f16 and int8 (a float scale per head vector) against the exact f32
// cache, measured like the quantized weights — teacher-forced over each model's expected text,
// the next-token distributions compared with compare_logits. f32 is the default, and the golden
// tests (stories_golden_test, gemma_golden_test) hold it to the reference bit for bit.
//
// Bounds: set from what was measured (the printed lines), with about 2x margin on KL.
//   stories260K (201 positions): f16 mean KL 5.6e-7, top-1 100%; int8 mean KL 8.0e-4 (max 0.023),
//     top-1 98.5%, perplexity 1.6055 -> 1.6120. Its heads are 8 wide, so one scale per 8 values:
//     int8 costs about what q8_0 weights do (4.3e-4).
//   tiny-gemma (95 positions, chat prompt + greedy answer): f16 1.3e-7, 100%; int8 8.8e-5, 98.9%.
//   tiny-gemma2 (sliding window, softcaps): f16 4.1e-7, 100%; int8 3.5e-4, 96.8%.
// tiny-gemma's random weights give nearly flat distributions whose top-2 margins are tiny, so
// top-1 agreement there mostly measures ties; KL is the meaningful number (as for the weights).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>


#include "common/converted_models.h"
#include "common/logit_quality.h"
#include "common/testdata.h"
#include "magnetar/engine.h"
#include "magnetar/tools.h"

namespace magnetar {
namespace {

// top-1 agreement with the f32 cache, mean KL in nats.
using KvBounds = test::QualityBounds;
constexpr KvBounds kStoriesF16 = {1.0, 1e-5};
constexpr KvBounds kStoriesInt8 = {0.97, 2e-3};
constexpr KvBounds kGemmaF16 = {0.97, 1e-5};
constexpr KvBounds kGemmaInt8 = {0.95, 2e-4};
constexpr KvBounds kGemma2F16 = {0.97, 1e-5};
constexpr KvBounds kGemma2Int8 = {0.93, 8e-4};

std::vector<float> evaluate(const std::string& path, KvType kv, const std::vector<int>& tokens,
                            ModelInfo* info = nullptr) {
  LoadOptions options;
  options.kv_type = kv;
  return test::evaluate_logits(path, options, tokens, info);
}

void check_kv_quality(const std::string& source, const std::vector<int>& tokens, const char* label,
                      const KvBounds& f16_bounds, const KvBounds& int8_bounds) {
  std::string error;
  const std::string path = test::converted_model(source, WeightType::F32, &error);
  ASSERT_FALSE(path.empty()) << error;
  ModelInfo f32_info;
  const std::vector<float> reference = evaluate(path, KvType::F32, tokens, &f32_info);
  EXPECT_EQ(f32_info.kv_type, KvType::F32);
  const int vocab = f32_info.vocab_size;
  ASSERT_EQ(reference.size(), tokens.size() * size_t(vocab));
  EXPECT_EQ(LoadOptions{}.kv_type, KvType::F32) << "f32 is the default";
  for (KvType kv : {KvType::F16, KvType::Int8}) {
    ModelInfo info;
    const std::vector<float> logits = evaluate(path, kv, tokens, &info);
    ASSERT_EQ(logits.size(), reference.size());
    EXPECT_EQ(info.kv_type, kv);
    // f16 halves the cache; int8 quarters it, plus a float scale per head vector.
    const uint64_t vectors = 2ull * f32_info.n_layers * f32_info.context_length * f32_info.n_kv_heads;
    EXPECT_EQ(info.kv_cache_bytes, kv == KvType::F16 ? f32_info.kv_cache_bytes / 2
                                                     : f32_info.kv_cache_bytes / 4 + vectors * sizeof(float));
    const DistributionComparison c = compare_logits(reference, logits, tokens, vocab);
    test::expect_quality(c, kv == KvType::F16 ? f16_bounds : int8_bounds,
                         std::string(label) + " KV " + kv_type_name(kv), "f32 KV");
    EXPECT_GT(c.mean_kl, 0.0) << label << " " << kv_type_name(kv) << ": rounding the cache must show";
  }
}

std::vector<int> gemma_chat_tokens(const std::string& model) {
  const auto golden =
      nlohmann::json::parse(test::read_file(test::testdata_path("gemma/goldens/" + model + ".json")));
  std::vector<int> tokens = golden["cases"]["chat"]["prompt_ids"].get<std::vector<int>>();
  for (int id : golden["cases"]["chat"]["greedy_32"].get<std::vector<int>>()) tokens.push_back(id);
  return tokens;
}

TEST(KvCache, Stories260KOverItsExpectedText) {
  MAGNETAR_REQUIRE_TESTDATA("stories260K/stories260K.bin");
  MAGNETAR_REQUIRE_TESTDATA("stories260K/greedy_reference.json");
  const auto reference =
      nlohmann::json::parse(test::read_file(test::testdata_path("stories260K/greedy_reference.json")));
  std::vector<int> tokens = reference["prompt_ids"].get<std::vector<int>>();
  for (int id : reference["greedy_ids_200"].get<std::vector<int>>()) tokens.push_back(id);
  check_kv_quality("stories260K/stories260K.bin", tokens, "stories260K", kStoriesF16, kStoriesInt8);
}

TEST(KvCache, TinyGemmaOverItsChatPrompt) {
  MAGNETAR_REQUIRE_TESTDATA("gemma/tiny-gemma");
  MAGNETAR_REQUIRE_TESTDATA("gemma/goldens/tiny-gemma.json");
  check_kv_quality("gemma/tiny-gemma", gemma_chat_tokens("tiny-gemma"), "tiny-gemma", kGemmaF16, kGemmaInt8);
}

TEST(KvCache, TinyGemma2OverItsChatPrompt) {
  MAGNETAR_REQUIRE_TESTDATA("gemma/tiny-gemma2");
  MAGNETAR_REQUIRE_TESTDATA("gemma/goldens/tiny-gemma2.json");
  check_kv_quality("gemma/tiny-gemma2", gemma_chat_tokens("tiny-gemma2"), "tiny-gemma2", kGemma2F16, kGemma2Int8);
}

}  // namespace
}  // namespace magnetar
