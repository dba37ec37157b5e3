// Token sampling: repetition penalty, then greedy, or temperature with top-k, top-p and min-p.
// Deterministic for a given seed on every platform (own RNG-to-float conversion).
#pragma once
#include <cstdint>
#include <vector>

#include "magnetar/engine.h"

namespace magnetar {

class Sampler {
 public:
  void reset(const SamplerParams& params);
  // logits [vocab] are modified in place. recent: the context so far (for the penalty).
  // probs/ids: scratch of vocab entries, allocated by the caller at load time.
  int sample(float* logits, int vocab, const int* recent, int n_recent, float* probs, int* ids);

 private:
  double next_uniform();  // [0, 1)
  SamplerParams params_;
  uint64_t state_ = 0;
};

}  // namespace magnetar
