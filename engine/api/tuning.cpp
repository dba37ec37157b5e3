// magnetar/tuning.h: the calibration (ops/calibrate.h measures, core/tuning.h decides and
// caches) and the tuning in effect for the loader and the kernel tables.
#include "magnetar/tuning.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "core/bandwidth.h"
#include "core/platform.h"
#include "core/thread_pool.h"
#include "core/tuning.h"
#include "format/model_format.h"
#include "kernels/kernels.h"
#include "ops/calibrate.h"

namespace magnetar {
namespace {

std::mutex g_mutex;
DecodeTuning g_active;  // guarded by g_mutex

TypeTuning type_tuning(const char* type, const std::vector<tuning::Measured>& measured,
                       const tuning::Decision& d) {
  TypeTuning t;
  t.type = type;
  t.chosen = d.chosen >= 0 ? measured[size_t(d.chosen)].name : measured.empty() ? "" : measured[0].name;
  t.reason = d.reason;
  t.gain = d.gain;
  t.candidates = d.summary;
  return t;
}

// Whether `candidate` runs every quantized type but Q8_0 / Q4_0 (the measured ones) with the same
// kernels as `fallback`: a table choice is shared by every type, so a table that would change an
// unmeasured type's kernels (an avx2 table on a VNNI CPU takes the K-quants' VNNI kernels away)
// is not chosen on the Q8_0 / Q4_0 measurements alone.
bool changes_only_measured_types(const kernels::KernelTable& fallback, const kernels::KernelTable& candidate) {
  for (uint32_t d = 0; d < format::kDTypeCount; ++d) {
    const auto type = static_cast<format::DType>(d);
    if (type == format::DType::Q8_0 || type == format::DType::Q4_0 || !format::dtype_is_quantized(type)) continue;
    const kernels::TypeKernels &a = fallback.of(type), &b = candidate.of(type);
    if (a.decode != b.decode || a.prefill != b.prefill) return false;
  }
  return true;
}

}  // namespace

bool decode_tuning_enabled() {
  const char* v = std::getenv("MAGNETAR_TUNING");
  return !(v && std::strcmp(v, "off") == 0);
}

std::string describe_decode_tuning(const DecodeTuning& t) {
  std::string f16 = t.f16_stripe_cols > 0 ? "stripes " + std::to_string(t.f16_stripe_cols) : std::string("plain");
  f16 += t.f16_streams > 0 ? ", " + std::to_string(t.f16_streams) + " streams" : ", streams by width";
  return "f16 " + f16 + "; q8_0 " + (t.q8_0_x16_tiles ? "x16 tiles" : "rows") + "; q4_0 " +
         (t.q4_0_x16_tiles ? "x16 tiles" : "rows") + "; quant kernels " +
         (t.quant_isa.empty() ? std::string("best") : t.quant_isa) +
         (t.measured() ? " (measured)" : " (built-in)");
}

std::string decode_tuning_json(const DecodeTuning& tuning) { return tuning::to_json(tuning); }

Status calibrate_decode(const CalibrationOptions& options, DecodeTuning* out) {
  const double t0 = platform::now_seconds();
  ops::calibrate::Options o;
  o.threads = options.threads > 0 ? options.threads : ThreadPool::default_threads();
  o.matrix_bytes = options.matrix_bytes;
  o.deadline = t0 + (options.time_budget_seconds > 0 ? options.time_budget_seconds
                                                     : ops::calibrate::kDefaultBudgetSeconds);
  o.on_progress = options.on_progress;
  o.cancel = options.cancel;
  const auto f16 = ops::calibrate::f16_candidates();
  const auto quant = ops::calibrate::quant_candidates();
  ops::calibrate::Measurements m;
  MAGNETAR_TRY(ops::calibrate::measure(f16, quant, o, &m));

  DecodeTuning t;
  const tuning::Decision df = tuning::decide(m.f16, 0);
  if (df.chosen > 0) {  // the default (0) keeps the built-in values: stripes 2048, streams by width
    t.f16_stripe_cols = f16[size_t(df.chosen)].stripe_cols;
    t.f16_streams = f16[size_t(df.chosen)].streams;
  }
  const tuning::Decision d8 = tuning::decide(m.q8_0, 0);
  const tuning::Decision d4 = tuning::decide(m.q4_0, 0);
  if (d8.chosen >= 0) t.q8_0_x16_tiles = quant[size_t(d8.chosen)].x16_tiles;
  if (d4.chosen >= 0) t.q4_0_x16_tiles = quant[size_t(d4.chosen)].x16_tiles;
  // One table serves every type: a non-default one only when both measured types chose it and it
  // changes no other type's kernels.
  if (d8.chosen > 0 && d4.chosen > 0 && quant[size_t(d8.chosen)].table == quant[size_t(d4.chosen)].table &&
      quant[size_t(d8.chosen)].table != quant[0].table &&
      changes_only_measured_types(*quant[0].table, *quant[size_t(d8.chosen)].table))
    t.quant_isa = quant[size_t(d8.chosen)].table->isa;
  t.types = {type_tuning("f16", m.f16, df), type_tuning("q8_0", m.q8_0, d8), type_tuning("q4_0", m.q4_0, d4)};
  t.threads = o.threads;
  t.seconds = platform::now_seconds() - t0;
  t.measured_unix = std::chrono::duration_cast<std::chrono::seconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
  *out = std::move(t);
  return Status::ok();
}

bool read_cached_decode_tuning(DecodeTuning* out) {
  const std::string path = tuning::cache_path();
  if (!decode_tuning_enabled() || path.empty()) return false;
  return static_cast<bool>(tuning::read_cache_file(path, tuning::cache_key(cpu_info()), tuning::engine_version(), out));
}

Status calibrate_and_cache_decode_tuning(const CalibrationOptions& options, DecodeTuning* out) {
  MAGNETAR_TRY(calibrate_decode(options, out));
  const std::string path = tuning::cache_path();
  if (!bandwidth::kTimingsAreTheMachines || path.empty()) return Status::ok();
  return tuning::write_cache_file(path, tuning::cache_key(cpu_info()), tuning::engine_version(), *out);
}

void apply_decode_tuning(const DecodeTuning& tuning) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_active = tuning;
  kernels::set_tuned_kernels(tuning.quant_isa, tuning.f16_streams);
}

DecodeTuning active_decode_tuning() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_active;
}

bool apply_cached_decode_tuning() {
  DecodeTuning tuning;
  if (!read_cached_decode_tuning(&tuning)) return false;
  apply_decode_tuning(tuning);
  return true;
}

}  // namespace magnetar
