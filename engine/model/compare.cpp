// compare_logits (magnetar/tools.h): KL divergence, top-1 agreement and perplexity of two logit
// sequences.
#include "magnetar/tools.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace magnetar {
namespace {

// Argmax and log of the softmax normaliser (relative to the max logit) of one row.
struct RowStats {
  int argmax = 0;
  double max_logit = 0;
  double log_z = 0;  // log(sum exp(logit - max_logit))
  double log_prob(const float* row, int i) const { return double(row[i]) - max_logit - log_z; }
};

RowStats row_stats(const float* row, int vocab) {
  RowStats s;
  for (int i = 1; i < vocab; ++i)
    if (row[i] > row[s.argmax]) s.argmax = i;
  s.max_logit = row[s.argmax];
  double z = 0;
  for (int i = 0; i < vocab; ++i) z += std::exp(double(row[i]) - s.max_logit);
  s.log_z = std::log(z);
  return s;
}

}  // namespace

DistributionComparison compare_logits(const std::vector<float>& reference,
                                      const std::vector<float>& candidate,
                                      const std::vector<int>& tokens, int vocab) {
  assert(vocab > 0 && "compare_logits: vocab must be positive");
  const size_t n = tokens.size();
  assert(reference.size() == n * size_t(vocab) && candidate.size() == n * size_t(vocab) &&
         "compare_logits: pass [tokens.size(), vocab] logits for both models");
  DistributionComparison c;
  c.positions = n;
  double nll_ref = 0, nll_cand = 0;
  size_t agree = 0;
  for (size_t p = 0; p < n; ++p) {
    const float* a = &reference[p * size_t(vocab)];
    const float* b = &candidate[p * size_t(vocab)];
    const RowStats sa = row_stats(a, vocab), sb = row_stats(b, vocab);
    double kl = 0;
    for (int i = 0; i < vocab; ++i) {
      const double la = sa.log_prob(a, i), lb = sb.log_prob(b, i);
      kl += std::exp(la) * (la - lb);
    }
    c.mean_kl += kl / double(n);
    c.max_kl = std::max(c.max_kl, kl);
    agree += sa.argmax == sb.argmax;
    if (p + 1 < n) {
      const int next = tokens[p + 1];
      assert(next >= 0 && next < vocab && "compare_logits: token id outside the vocabulary");
      nll_ref -= sa.log_prob(a, next);
      nll_cand -= sb.log_prob(b, next);
    }
  }
  c.top1_agreement = n ? double(agree) / double(n) : 0;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  c.perplexity_reference = n >= 2 ? std::exp(nll_ref / double(n - 1)) : nan;
  c.perplexity_candidate = n >= 2 ? std::exp(nll_cand / double(n - 1)) : nan;
  return c;
}

}  // namespace magnetar
