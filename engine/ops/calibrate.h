// The measuring half of decode tuning (magnetar/tuning.h): times decode passes of the engine's
// own drivers (ops::matvec, guided scheduling, the model's thread count) over test matrices far
// larger than a last-level cache, once per candidate variant, and checks every variant's results
// against a double-precision oracle on sampled rows. The decision is core/tuning.h's.
//
// The test matrices, per weight type: a narrow one [N, 2048] (attention, FFN gate/up) and a wide
// one [2048, N] (FFN down), each options.matrix_bytes; a pass is one matvec over each. Memory:
// three such matrices at most at a time (F16: the wide one's plain source beside its layout).
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/tuning.h"
#include "magnetar/status.h"

namespace magnetar::kernels {
struct KernelTable;
}

namespace magnetar::ops::calibrate {

inline constexpr uint64_t kDefaultMatrixBytes = uint64_t(64) << 20;
inline constexpr int kTimedPasses = 5;  // per candidate, after one warm-up pass
inline constexpr double kDefaultBudgetSeconds = 15;

struct F16Variant {
  int stripe_cols = 0;  // 0: plain row-major
  int streams = 4;      // 4 or 8
};
struct QuantVariant {
  bool x16_tiles = true;
  const kernels::KernelTable* table = nullptr;  // its Q8_0 / Q4_0 entries are measured
};

// The candidates this machine can run, the default (built-in) one first in each list.
std::vector<F16Variant> f16_candidates();
std::vector<QuantVariant> quant_candidates();
std::string name_of(const F16Variant& v);
std::string name_of(const QuantVariant& v);

struct Options {
  int threads = 1;
  uint64_t matrix_bytes = kDefaultMatrixBytes;
  double deadline = 0;  // platform::now_seconds() after which no candidate starts; 0: none
  std::function<void(int done, int total, const std::string& step)> on_progress;
  const std::atomic<bool>* cancel = nullptr;
};

struct Measurements {
  std::vector<tuning::Measured> f16, q8_0, q4_0;  // in the order of the candidate lists
};

// Measures every candidate (those past the deadline stay unmeasured). Errors: cancelled, or not
// enough memory for the test matrices.
Status measure(const std::vector<F16Variant>& f16, const std::vector<QuantVariant>& quant,
               const Options& options, Measurements* out);

}  // namespace magnetar::ops::calibrate
