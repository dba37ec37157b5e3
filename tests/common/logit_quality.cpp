// See logit_quality.h.
#include "common/logit_quality.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>

namespace magnetar::test {

std::vector<float> evaluate_logits(const std::string& path, const LoadOptions& options,
                                   const std::vector<int>& tokens, ModelInfo* info) {
  std::unique_ptr<Model> model;
  Status s = Model::load(path, options, &model);
  EXPECT_TRUE(s.is_ok()) << s.message();
  if (!s.is_ok()) return {};
  if (info) *info = model->info();
  std::unique_ptr<Session> session;
  EXPECT_TRUE(Session::create(*model, &session).is_ok());
  std::vector<float> logits;
  s = session->evaluate(tokens, &logits);
  EXPECT_TRUE(s.is_ok()) << s.message();
  return logits;
}

void expect_quality(const DistributionComparison& c, const QualityBounds& b, const std::string& what,
                    const char* reference_name) {
  std::printf("%s: %zu positions, mean KL %.3g, max KL %.3g, top-1 %.1f%%, perplexity %s %.4f -> %.4f\n",
              what.c_str(), c.positions, c.mean_kl, c.max_kl, 100 * c.top1_agreement, reference_name,
              c.perplexity_reference, c.perplexity_candidate);
  EXPECT_GE(c.top1_agreement, b.min_top1) << what;
  EXPECT_LE(c.mean_kl, b.max_mean_kl) << what;
}

}  // namespace magnetar::test
