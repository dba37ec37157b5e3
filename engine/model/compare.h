// Comparing two models' next-token distributions over the same teacher-forced token sequence:
// what `magnetar-cli eval --compare` reports and what the quantisation quality tests bound.
// Pure arithmetic on logits already computed (double precision, log-sum-exp stabilised); knows
// nothing about models or files.
#pragma once
#include <cstddef>
#include <vector>

namespace magnetar {

struct DistributionComparison {
  double mean_kl = 0;         // nats: mean over positions of KL(reference || candidate)
  double max_kl = 0;          // nats: the worst position
  double top1_agreement = 0;  // fraction of positions whose argmax tokens are the same
  // exp(mean negative log-likelihood of tokens[p + 1] at position p), over positions 0..n-2;
  // NaN when there are fewer than two tokens (nothing is predicted).
  double perplexity_reference = 0;
  double perplexity_candidate = 0;
  size_t positions = 0;  // rows compared (= tokens.size())
};

// reference, candidate: [tokens.size(), vocab] row-major logits of the same token sequence.
// Preconditions (asserted): vocab > 0, both hold exactly tokens.size() * vocab values, and every
// token id is in [0, vocab).
DistributionComparison compare_logits(const std::vector<float>& reference,
                                      const std::vector<float>& candidate,
                                      const std::vector<int>& tokens, int vocab);

}  // namespace magnetar
