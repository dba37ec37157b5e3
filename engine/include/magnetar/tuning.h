// Decode tuning by measurement on the user's machine: which of the engine's existing kernel
// variants and load-time layouts a decode runs fastest with, per weight type, chosen by a
// bounded calibration (a few seconds, beside the bandwidth probe) and cached per machine.
//
// What is chosen (only knobs that exist and switch at load time; docs/PERFORMANCE.md):
//   F16:        column stripes of 1024, 2048 or 4096 columns or the plain row-major layout, and
//               the matrix–vector kernel with 4 or 8 weight streams;
//   Q8_0, Q4_0: x16 row tiles or row-major rows, and the kernel table (avx2 or avx512vnni,
//               where the CPU runs both; the table serves every type, so a lower one is not
//               chosen where it would change an unmeasured type's kernels: the K-quants').
// The prefetch distance is an assembly-time constant of the kernels and is not tuned.
//
// Overrides: MAGNETAR_KERNELS (any value but "auto") keeps the built-in kernel choices,
// LoadOptions::use_tuning = false (the CLI's explicit --layout) the built-in layouts, and
// MAGNETAR_TUNING=off ignores the cache file altogether.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "magnetar/status.h"

namespace magnetar {

// One variant's measurement in a calibration: median seconds of a decode pass over the test
// matrices (0 when it failed or was not measured).
struct TuningCandidate {
  std::string name;       // "stripes 2048, 4 streams", "x16 tiles, avx2", ...
  double median_seconds = 0;
  bool failed = false;    // wrong results: never chosen
};

// The calibration's account of one weight type.
struct TypeTuning {
  std::string type;    // "f16", "q8_0", "q4_0"
  std::string chosen;  // the chosen candidate's name
  std::string reason;  // why (faster by N %, default kept: within noise, ...)
  double gain = 1.0;   // default's median / chosen's median (1.0: the default was kept)
  std::vector<TuningCandidate> candidates;
};

struct DecodeTuning {
  // The values the loader and the kernel tables use. Defaults = the built-in choices.
  int f16_stripe_cols = 2048;  // 0: plain row-major
  int f16_streams = 0;         // 4 or 8; 0: by matrix width (8 beyond 3072 columns)
  bool q8_0_x16_tiles = true;
  bool q4_0_x16_tiles = true;
  std::string quant_isa;       // "avx2", "avx512vnni"; empty: the best table this CPU runs

  // How they were obtained (empty `types` = built-in defaults, not measured).
  std::vector<TypeTuning> types;
  int threads = 0;             // thread count the calibration ran with
  double seconds = 0;          // its duration
  int64_t measured_unix = 0;
  bool measured() const { return !types.empty(); }
};

// One line for people: "f16 stripes 2048, 4 streams; q8_0 x16 tiles; q4_0 x16 tiles; quant
// kernels best (measured)".
std::string describe_decode_tuning(const DecodeTuning& tuning);
// The tuning as a JSON object text: {"values":{...},"threads":N,"seconds":S,"measured_unix":T,
// "types":[{"type","chosen","reason","gain","candidates":[{"name","median_seconds","failed"}]}]}.
std::string decode_tuning_json(const DecodeTuning& tuning);

struct CalibrationOptions {
  int threads = 0;               // 0: the default thread count of a model's pool
  uint64_t matrix_bytes = 0;     // bytes of each test matrix; 0: the default (64 MiB)
  double time_budget_seconds = 0;  // 0: the default (15 s); candidates past it go unmeasured
  std::function<void(int done, int total, const std::string& step)> on_progress;
  const std::atomic<bool>* cancel = nullptr;
};

// Measures the candidates and decides. Cancelled -> an error ("cancelled"), nothing chosen.
Status calibrate_decode(const CalibrationOptions& options, DecodeTuning* out);

// False when MAGNETAR_TUNING=off: no cache is read and the app does not calibrate on its own.
bool decode_tuning_enabled();
// The tuning cached for this machine and engine version (user_cache_dir()/tuning.json), without
// measuring: false when absent, stale, damaged, or MAGNETAR_TUNING=off.
bool read_cached_decode_tuning(DecodeTuning* out);
// Calibrates and caches (atomic write). Debug and sanitizer builds measure but never cache.
Status calibrate_and_cache_decode_tuning(const CalibrationOptions& options, DecodeTuning* out);

// Makes `tuning` the one models loaded from now on use (layouts) and the kernel table choice
// uses (F16 stream count, the table's ISA), unless MAGNETAR_KERNELS overrides the kernels.
void apply_decode_tuning(const DecodeTuning& tuning);
// The tuning in effect (built-in defaults until apply_decode_tuning is called).
DecodeTuning active_decode_tuning();
// Reads the cache and applies it when present; returns whether it did. The frontends' start.
bool apply_cached_decode_tuning();

}  // namespace magnetar
