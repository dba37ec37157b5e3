// Sampler behaviour: greedy picks the maximum, each filter keeps what it should, the same seed
// gives the same draws, and the repetition penalty pushes repeated tokens down.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <vector>

#include "model/sampler.h"

namespace magnetar {
namespace {

struct Scratch {
  explicit Scratch(int vocab) : probs(vocab), ids(vocab) {}
  std::vector<float> probs;
  std::vector<int> ids;
};

int draw(Sampler& s, std::vector<float> logits, const std::vector<int>& recent = {}) {
  Scratch scratch(static_cast<int>(logits.size()));
  return s.sample(logits.data(), static_cast<int>(logits.size()), recent.data(),
                  static_cast<int>(recent.size()), scratch.probs.data(), scratch.ids.data());
}

TEST(Sampler, GreedyPicksTheLargestLogit) {
  Sampler s;
  s.reset(SamplerParams{.temperature = 0});
  EXPECT_EQ(draw(s, {0.1f, 3.0f, -1.0f, 2.9f}), 1);
  EXPECT_EQ(draw(s, {-5.f, -4.f, -3.f}), 2);
}

TEST(Sampler, SameSeedSameSequenceDifferentSeedDiffers) {
  const std::vector<float> logits = {1.0f, 1.1f, 0.9f, 1.05f, 0.95f, 1.0f, 1.02f, 0.98f};
  SamplerParams p{.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .min_p = 0.0f, .seed = 42};
  auto sequence = [&](uint64_t seed) {
    Sampler s;
    p.seed = seed;
    s.reset(p);
    std::vector<int> out;
    for (int i = 0; i < 64; ++i) out.push_back(draw(s, logits));
    return out;
  };
  EXPECT_EQ(sequence(42), sequence(42));
  EXPECT_NE(sequence(42), sequence(43));
}

TEST(Sampler, TopKOneIsGreedy) {
  Sampler s;
  s.reset(SamplerParams{.temperature = 1.5f, .top_k = 1, .top_p = 1.0f, .min_p = 0.0f, .seed = 7});
  for (int i = 0; i < 50; ++i) EXPECT_EQ(draw(s, {0.5f, 0.4f, 2.0f, 1.9f}), 2);
}

TEST(Sampler, TopPKeepsOnlyTheNucleus) {
  // Probabilities ~ [0.6, 0.3, 0.05, 0.05]: top_p 0.8 keeps ids 0 and 1 only.
  const std::vector<float> logits = {std::log(0.6f), std::log(0.3f), std::log(0.05f), std::log(0.05f)};
  Sampler s;
  s.reset(SamplerParams{.temperature = 1.0f, .top_k = 0, .top_p = 0.8f, .min_p = 0.0f, .seed = 1});
  std::map<int, int> counts;
  for (int i = 0; i < 2000; ++i) ++counts[draw(s, logits)];
  EXPECT_EQ(counts.count(2) + counts.count(3), 0u);
  EXPECT_GT(counts[0], counts[1]);
  EXPECT_GT(counts[1], 400);
}

TEST(Sampler, MinPDropsUnlikelyTokens) {
  const std::vector<float> logits = {std::log(0.5f), std::log(0.4f), std::log(0.1f)};
  Sampler s;
  // min_p 0.3: threshold 0.15 of the top probability drops id 2 (0.1).
  s.reset(SamplerParams{.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .min_p = 0.3f, .seed = 3});
  for (int i = 0; i < 1000; ++i) EXPECT_NE(draw(s, logits), 2);
}

TEST(Sampler, TemperatureSharpensAndFlattens) {
  const std::vector<float> logits = {1.0f, 0.0f};
  auto share_of_top = [&](float temperature) {
    Sampler s;
    s.reset(SamplerParams{.temperature = temperature, .top_k = 0, .top_p = 1.0f, .min_p = 0.0f, .seed = 5});
    int top = 0;
    for (int i = 0; i < 4000; ++i) top += draw(s, logits) == 0;
    return top / 4000.0;
  };
  EXPECT_GT(share_of_top(0.25f), 0.95);             // e^4 : 1
  EXPECT_NEAR(share_of_top(1.0f), 0.731, 0.03);     // e : 1
  EXPECT_NEAR(share_of_top(100.0f), 0.5, 0.04);
}

TEST(Sampler, RepeatPenaltyDemotesRecentTokens) {
  Sampler s;
  s.reset(SamplerParams{.temperature = 0, .repeat_penalty = 2.0f, .repeat_last_n = 4});
  // Token 0 leads (2.0 vs 1.5) but was just used: 2.0 / 2 = 1.0 < 1.5.
  EXPECT_EQ(draw(s, {2.0f, 1.5f, 0.0f}, {0}), 1);
  // Outside the window it is not penalised.
  EXPECT_EQ(draw(s, {2.0f, 1.5f, 0.0f}, {0, 2, 2, 2, 2}), 0);
  // Negative logits are pushed further down, not up.
  EXPECT_EQ(draw(s, {-1.0f, -1.5f}, {0}), 1);
}

}  // namespace
}  // namespace magnetar
