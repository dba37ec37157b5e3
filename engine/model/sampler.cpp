// Sampler: see sampler.h. Order follows common practice (llama.cpp): penalty, top-k, softmax with
// temperature, top-p, min-p, renormalise, draw.
#include "model/sampler.h"

#include <algorithm>
#include <cmath>

namespace magnetar {

void Sampler::reset(const SamplerParams& params) {
  params_ = params;
  state_ = params.seed ^ 0x9E3779B97F4A7C15ull;
}

// splitmix64: tiny, fast, identical everywhere.
double Sampler::next_uniform() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * (1.0 / 9007199254740992.0);
}

int Sampler::sample(float* logits, int vocab, const int* recent, int n_recent, float* probs,
                    int* ids) {
  if (params_.repeat_penalty != 1.0f && params_.repeat_last_n > 0) {
    const int from = std::max(0, n_recent - params_.repeat_last_n);
    for (int i = from; i < n_recent; ++i) {
      const int id = recent[i];
      if (id < 0 || id >= vocab) continue;
      // Penalise each id once even when it repeats in the window.
      bool seen = false;
      for (int j = from; j < i && !seen; ++j) seen = recent[j] == id;
      if (seen) continue;
      logits[id] = logits[id] > 0 ? logits[id] / params_.repeat_penalty
                                  : logits[id] * params_.repeat_penalty;
    }
  }
  if (params_.temperature <= 0.0f) {
    int best = 0;
    for (int i = 1; i < vocab; ++i)
      if (logits[i] > logits[best]) best = i;
    return best;
  }

  for (int i = 0; i < vocab; ++i) ids[i] = i;
  int n = vocab;
  auto by_logit = [logits](int a, int b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); };
  if (params_.top_k > 0 && params_.top_k < n) {
    std::partial_sort(ids, ids + params_.top_k, ids + n, by_logit);
    n = params_.top_k;
  } else {
    std::sort(ids, ids + n, by_logit);
  }
  // Softmax with temperature over the candidates (sorted, so ids[0] holds the max).
  const float max_logit = logits[ids[0]];
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    probs[i] = std::exp((logits[ids[i]] - max_logit) / params_.temperature);
    sum += probs[i];
  }
  for (int i = 0; i < n; ++i) probs[i] = static_cast<float>(probs[i] / sum);
  if (params_.top_p > 0.0f && params_.top_p < 1.0f) {
    double cumulative = 0;
    for (int i = 0; i < n; ++i) {
      cumulative += probs[i];
      if (cumulative >= params_.top_p) {
        n = i + 1;
        break;
      }
    }
  }
  if (params_.min_p > 0.0f) {
    const float floor = probs[0] * params_.min_p;
    int keep = 1;
    while (keep < n && probs[keep] >= floor) ++keep;
    n = keep;
  }
  double total = 0;
  for (int i = 0; i < n; ++i) total += probs[i];
  double r = next_uniform() * total;
  for (int i = 0; i < n; ++i) {
    r -= probs[i];
    if (r < 0) return ids[i];
  }
  return ids[n - 1];
}

}  // namespace magnetar
