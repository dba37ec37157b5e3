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

// ---- Distributions: a wrong filter (ignored, off by one, greedy) moves a share far outside ----

constexpr int kDraws = 20000;
// Binomial standard deviation at p = 0.5 over kDraws is 0.0035: 4 of them.
constexpr double kShareTolerance = 0.015;

// Share of each id over kDraws first draws, one seed each (the distribution over many seeds).
std::vector<double> shares(SamplerParams params, const std::vector<float>& logits) {
  std::vector<double> share(logits.size(), 0.0);
  for (int seed = 0; seed < kDraws; ++seed) {
    Sampler s;
    params.seed = static_cast<uint64_t>(seed) * 7919 + 11;
    s.reset(params);
    share[static_cast<size_t>(draw(s, logits))] += 1.0 / kDraws;
  }
  return share;
}

std::vector<float> log_probs(const std::vector<double>& probs) {
  std::vector<float> logits;
  for (double p : probs) logits.push_back(static_cast<float>(std::log(p)));
  return logits;
}

void expect_shares(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (want[i] == 0.0) EXPECT_EQ(got[i], 0.0) << "id " << i << " must never be drawn";
    else EXPECT_NEAR(got[i], want[i], kShareTolerance) << "id " << i;
  }
}

TEST(SamplerDistribution, TopKRenormalisesTheKLargest) {
  const std::vector<float> logits = log_probs({0.05, 0.30, 0.10, 0.25, 0.20, 0.10});
  const SamplerParams k3{.temperature = 1.0f, .top_k = 3, .top_p = 1.0f, .min_p = 0.0f};
  expect_shares(shares(k3, logits), {0, 0.30 / 0.75, 0, 0.25 / 0.75, 0.20 / 0.75, 0});
  const SamplerParams k5{.temperature = 1.0f, .top_k = 5, .top_p = 1.0f, .min_p = 0.0f};
  expect_shares(shares(k5, logits), {0, 0.30 / 0.95, 0.10 / 0.95, 0.25 / 0.95, 0.20 / 0.95, 0.10 / 0.95});
  const SamplerParams all{.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .min_p = 0.0f};
  expect_shares(shares(all, logits), {0.05, 0.30, 0.10, 0.25, 0.20, 0.10});
}

TEST(SamplerDistribution, TopPKeepsTheSmallestPrefixReachingP) {
  const std::vector<float> logits = log_probs({0.2, 0.5, 0.3});  // sorted: 1 (0.5), 2 (0.8), 0 (1.0)
  auto top_p = [](float p) { return SamplerParams{.temperature = 1.0f, .top_k = 0, .top_p = p, .min_p = 0.0f}; };
  expect_shares(shares(top_p(0.45f), logits), {0, 1, 0});
  expect_shares(shares(top_p(0.55f), logits), {0, 0.5 / 0.8, 0.3 / 0.8});
  expect_shares(shares(top_p(0.79f), logits), {0, 0.5 / 0.8, 0.3 / 0.8});
  expect_shares(shares(top_p(0.81f), logits), {0.2, 0.5, 0.3});
  expect_shares(shares(top_p(1.0f), logits), {0.2, 0.5, 0.3});
}

TEST(SamplerDistribution, MinPKeepsTokensAboveTheScaledTop) {
  // Greedy would always give id 0: these shares need the kept tokens drawn in proportion.
  const std::vector<float> logits = log_probs({0.4, 0.2, 0.2, 0.1, 0.1});
  auto min_p = [](float p) { return SamplerParams{.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .min_p = p}; };
  expect_shares(shares(min_p(0.49f), logits), {0.5, 0.25, 0.25, 0, 0});  // floor 0.196
  expect_shares(shares(min_p(0.51f), logits), {1, 0, 0, 0, 0});          // floor 0.204
  expect_shares(shares(min_p(0.24f), logits), {0.4, 0.2, 0.2, 0.1, 0.1});
}

TEST(SamplerDistribution, TemperatureAppliesBeforeTheFilters) {
  // At temperature 0.5 the probabilities square: 0.4^2 : 0.2^2 ... = 16 : 4 : 4 : 1 : 1.
  const std::vector<float> logits = log_probs({0.4, 0.2, 0.2, 0.1, 0.1});
  const SamplerParams p{.temperature = 0.5f, .top_k = 0, .top_p = 1.0f, .min_p = 0.2f};
  // Floor 0.2 * 16/26: ids 1, 2 (4/26) stay, ids 3, 4 (1/26) go.
  expect_shares(shares(p, logits), {16.0 / 24, 4.0 / 24, 4.0 / 24, 0, 0});
}

}  // namespace
}  // namespace magnetar
