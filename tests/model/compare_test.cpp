// compare_logits on hand-made distributions whose KL divergence, agreement and perplexity are
// known in closed form.
#include <gtest/gtest.h>

#include <cmath>

#include "magnetar/tools.h"

namespace magnetar {
namespace {

// Everything here is double arithmetic on a handful of values: only rounding separates the result
// from the closed form.
constexpr double kClosedFormTolerance = 1e-12;

TEST(CompareLogits, IdenticalLogitsHaveNoDivergenceAndFullAgreement) {
  const std::vector<int> tokens = {0, 2, 1};
  const std::vector<float> logits = {1.0f, 2.0f, 3.0f, 0.5f, -1.0f, 4.0f, 2.0f, 2.5f, 0.0f};
  const DistributionComparison c = compare_logits(logits, logits, tokens, 3);
  EXPECT_EQ(c.positions, 3u);
  EXPECT_NEAR(c.mean_kl, 0.0, kClosedFormTolerance);
  EXPECT_NEAR(c.max_kl, 0.0, kClosedFormTolerance);
  EXPECT_EQ(c.top1_agreement, 1.0);
  EXPECT_EQ(c.perplexity_reference, c.perplexity_candidate);
}

TEST(CompareLogits, KnownDivergenceAgreementAndPerplexity) {
  // Vocabulary of 2. Position 0: reference uniform (logits 0, 0); candidate p = (3/4, 1/4)
  // (logits ln 3, 0), so KL = 1/2 ln(2/3) + 1/2 ln 2 = 1/2 ln(4/3). Its argmax (token 0) ties
  // with the reference's (first maximum wins), so they agree.
  // Position 1: reference p = (1/4, 3/4); candidate the same plus a constant shift of 10 (softmax
  // does not see it): KL 0, agreement.
  // Position 2: reference (3/4, 1/4), candidate (1/4, 3/4): KL = 3/4 ln 3 + 1/4 ln(1/3) =
  // 1/2 ln 3, argmaxes differ.
  const std::vector<int> tokens = {0, 1, 0};
  const float ln3 = static_cast<float>(std::log(3.0));
  const std::vector<float> reference = {0.0f, 0.0f, 0.0f, ln3, ln3, 0.0f};
  const std::vector<float> candidate = {ln3, 0.0f, 10.0f, 10.0f + ln3, 0.0f, ln3};
  const DistributionComparison c = compare_logits(reference, candidate, tokens, 2);
  // Float logits: ln 3 and 10 + ln 3 are rounded by up to half an ulp (2^-21 ~ 4.8e-7 near 11),
  // which moves log-probabilities by as much; bounds are relative to the value checked.
  constexpr double kFloatLogitTolerance = 2e-6;
  const double kl0 = 0.5 * std::log(4.0 / 3.0), kl2 = 0.5 * std::log(3.0);
  EXPECT_NEAR(c.mean_kl, (kl0 + 0 + kl2) / 3, kFloatLogitTolerance * kl2);
  EXPECT_NEAR(c.max_kl, kl2, kFloatLogitTolerance * kl2);
  EXPECT_NEAR(c.top1_agreement, 2.0 / 3.0, kClosedFormTolerance);
  // Predicted: tokens[1] = 1 at position 0, tokens[2] = 0 at position 1.
  // Reference: p = 1/2 then 1/4 -> perplexity = exp(-(ln 1/2 + ln 1/4) / 2) = sqrt(8).
  // Candidate: p = 1/4 then 1/4 -> perplexity 4.
  EXPECT_NEAR(c.perplexity_reference, std::sqrt(8.0), kFloatLogitTolerance * std::sqrt(8.0));
  EXPECT_NEAR(c.perplexity_candidate, 4.0, kFloatLogitTolerance * 4.0);
}

TEST(CompareLogits, ExtremeLogitsStayFinite) {
  // A large spread would overflow a naive softmax; the max-subtracted form does not.
  const std::vector<int> tokens = {1, 0};
  const std::vector<float> reference = {1000.0f, 0.0f, 0.0f, 1000.0f};
  const std::vector<float> candidate = {999.0f, 0.0f, 0.0f, 1000.0f};
  const DistributionComparison c = compare_logits(reference, candidate, tokens, 2);
  EXPECT_TRUE(std::isfinite(c.mean_kl));
  EXPECT_NEAR(c.max_kl, 0.0, kClosedFormTolerance);  // exp(-999) vanishes against 1
  EXPECT_EQ(c.top1_agreement, 1.0);
  // Only position 0 predicts (tokens[1] = 0), with probability 1 - e^-1000 in both.
  EXPECT_NEAR(c.perplexity_reference, 1.0, kClosedFormTolerance);
  EXPECT_NEAR(c.perplexity_candidate, 1.0, kClosedFormTolerance);
}

TEST(CompareLogits, OneTokenHasNoPerplexity) {
  const DistributionComparison c = compare_logits({0.0f, 1.0f}, {0.0f, 1.0f}, {1}, 2);
  EXPECT_EQ(c.positions, 1u);
  EXPECT_TRUE(std::isnan(c.perplexity_reference));
  EXPECT_TRUE(std::isnan(c.perplexity_candidate));
}

}  // namespace
}  // namespace magnetar
