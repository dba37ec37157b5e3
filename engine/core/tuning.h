// The pure parts of decode tuning (magnetar/tuning.h): the decision over measured timings and
// the per-machine cache file. Nothing here measures, so all of it is unit-tested with made-up
// timings and files (tests/bench/tuning_test.cpp).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "magnetar/status.h"
#include "magnetar/system.h"
#include "magnetar/tuning.h"

namespace magnetar::tuning {

inline constexpr int kCacheVersion = 1;
// Bumped whenever the candidates or the kernels they measure change: a cache written by another
// revision (or another engine version) is stale and is measured again.
inline constexpr int kCalibrationRevision = 1;
// A challenger must beat the default by at least this fraction (and by more than the timings'
// noise) to replace it: a shared machine's jitter must not flip the choice between runs.
inline constexpr double kMinGain = 0.03;

// One candidate's timings: seconds per pass. failed: its results were wrong (or it could not
// run); an empty `seconds` means it was not measured (the time budget ran out).
struct Measured {
  std::string name;
  std::vector<double> seconds;
  bool failed = false;
};

struct Decision {
  int chosen = -1;       // index into the candidates; -1: none usable (keep the default)
  std::string reason;
  double gain = 1.0;     // default's median / chosen's median when both were measured
  std::vector<TuningCandidate> summary;  // name, median (0 when unusable), failed
};

// Chooses among `candidates`; default_index is the built-in choice, kept unless clearly beaten,
// and kept when it went unmeasured (no evidence against it); a failed default gives way to the
// fastest measured candidate. Non-finite or non-positive samples are dropped. Ties go to the
// default, then to the lower index. Noise: each candidate's median absolute deviation relative
// to its median; the required gain is max(min_gain, 2 x the larger of the two noises).
Decision decide(const std::vector<Measured>& candidates, int default_index, double min_gain = kMinGain);

// Cache key: CPU vendor, family, model, stepping, brand and logical core count.
std::string cache_key(const CpuInfo& cpu);
// The engine version a cache entry must carry: MAGNETAR_VERSION + the calibration revision.
std::string engine_version();
std::string cache_path();  // user_cache_dir()/tuning.json, "" when there is no cache folder

// The tuning stored under `key` for `version`; an error naming the problem when absent, stale
// (other version), or invalid (the file is untrusted: every value is range-checked).
Status parse_cache(std::string_view json, const std::string& key, const std::string& version,
                   DecodeTuning* out);
// `existing_json` (may be empty or damaged: then replaced) with `key` set to `tuning`.
std::string update_cache(std::string_view existing_json, const std::string& key,
                         const std::string& version, const DecodeTuning& tuning);
// The tuning as a JSON object (the cache entry's content; also bench's --json "tuning").
std::string to_json(const DecodeTuning& tuning);

Status read_cache_file(const std::string& path, const std::string& key, const std::string& version,
                       DecodeTuning* out);
Status write_cache_file(const std::string& path, const std::string& key, const std::string& version,
                        const DecodeTuning& tuning);

}  // namespace magnetar::tuning
