// Shared by the quality tests that compare a model variant's next-token distributions against a
// reference (quantised weights, KV cache types): teacher-forced logits, and the report + bounds.
#pragma once
#include <string>
#include <vector>

#include "magnetar/engine.h"
#include "magnetar/tools.h"

namespace magnetar::test {

// Teacher-forced logits [tokens.size(), vocab] of the model at `path`, loaded with `options`.
// A failure is a gtest failure and returns an empty vector.
std::vector<float> evaluate_logits(const std::string& path, const LoadOptions& options,
                                   const std::vector<int>& tokens, ModelInfo* info = nullptr);

struct QualityBounds {
  double min_top1;     // fraction of positions whose argmax matches the reference's
  double max_mean_kl;  // nats
};

// Prints one line for the test log ("<what>: positions, KL, top-1, perplexity <reference> -> ...")
// and checks c against b.
void expect_quality(const DistributionComparison& c, const QualityBounds& b, const std::string& what,
                    const char* reference_name);

}  // namespace magnetar::test
