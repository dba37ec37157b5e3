// Decode tuning's decision function and cache file (see core/tuning.h).
#include "core/tuning.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/platform.h"

#ifndef MAGNETAR_VERSION
#define MAGNETAR_VERSION "unknown"
#endif

namespace magnetar::tuning {

// ---- The decision -----------------------------------------------------------------------------

namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Median absolute deviation relative to the median: a spread that one descheduled pass on a
// shared machine does not inflate.
double relative_noise(const std::vector<double>& v, double median) {
  std::vector<double> deviations;
  deviations.reserve(v.size());
  for (double x : v) deviations.push_back(std::abs(x - median));
  return median > 0 ? median_of(deviations) / median : 0;
}

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %%", 100.0 * fraction);
  return text;
}

}  // namespace

Decision decide(const std::vector<Measured>& candidates, int default_index, double min_gain) {
  Decision d;
  std::vector<double> medians(candidates.size(), 0), noises(candidates.size(), 0);
  int best = -1;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const Measured& c = candidates[i];
    std::vector<double> usable;
    for (double s : c.seconds)
      if (std::isfinite(s) && s > 0) usable.push_back(s);
    d.summary.push_back({c.name, 0, c.failed});
    if (c.failed || usable.empty()) continue;
    medians[i] = median_of(usable);
    noises[i] = relative_noise(usable, medians[i]);
    d.summary.back().median_seconds = medians[i];
    if (best < 0 || medians[i] < medians[size_t(best)]) best = static_cast<int>(i);
  }
  if (best < 0) {
    d.reason = "nothing measured: built-in default kept";
    return d;
  }
  const bool default_exists = default_index >= 0 && size_t(default_index) < candidates.size();
  if (!default_exists || candidates[size_t(default_index)].failed) {
    d.chosen = best;
    d.reason = "the default failed: fastest measured";
    return d;
  }
  if (medians[size_t(default_index)] <= 0) {  // nothing to compare with: no evidence to switch
    d.chosen = default_index;
    d.reason = "default kept: it was not measured (time budget)";
    return d;
  }
  const size_t def = size_t(default_index);
  const double gain = medians[def] / medians[size_t(best)];
  const double needed = std::max(min_gain, 2 * std::max(noises[def], noises[size_t(best)]));
  if (best != default_index && gain - 1 > needed) {
    d.chosen = best;
    d.gain = gain;
    d.reason = percent(gain - 1) + " faster than the default (needed " + percent(needed) + ")";
    return d;
  }
  d.chosen = default_index;
  d.reason = best == default_index
                 ? "the default was fastest"
                 : "default kept: " + candidates[size_t(best)].name + " was faster by " + percent(gain - 1) +
                       ", within noise (needed " + percent(needed) + ")";
  return d;
}

// ---- Cache file ---------------------------------------------------------------------------------

namespace {

constexpr uint64_t kMaxCacheFileBytes = 1 << 20;
constexpr size_t kMaxTypes = 16, kMaxCandidates = 64, kMaxText = 256;

using nlohmann::json;

bool valid_stripe_cols(int v) { return v == 0 || v == 1024 || v == 2048 || v == 4096; }
bool valid_streams(int v) { return v == 0 || v == 4 || v == 8; }
bool valid_isa(const std::string& v) { return v.empty() || v == "avx2" || v == "avx512vnni"; }

json tuning_json(const DecodeTuning& t) {
  json types = json::array();
  for (const TypeTuning& type : t.types) {
    json candidates = json::array();
    for (const TuningCandidate& c : type.candidates)
      candidates.push_back({{"name", c.name}, {"median_seconds", c.median_seconds}, {"failed", c.failed}});
    types.push_back({{"type", type.type}, {"chosen", type.chosen}, {"reason", type.reason},
                     {"gain", type.gain}, {"candidates", std::move(candidates)}});
  }
  return {{"values",
           {{"f16_stripe_cols", t.f16_stripe_cols},
            {"f16_streams", t.f16_streams},
            {"q8_0_x16_tiles", t.q8_0_x16_tiles},
            {"q4_0_x16_tiles", t.q4_0_x16_tiles},
            {"quant_isa", t.quant_isa}}},
          {"threads", t.threads},
          {"seconds", t.seconds},
          {"measured_unix", t.measured_unix},
          {"types", std::move(types)}};
}

bool get_text(const json& o, const char* name, std::string* out) {
  auto it = o.find(name);
  if (it == o.end() || !it->is_string() || it->get_ref<const std::string&>().size() > kMaxText) return false;
  *out = it->get<std::string>();
  return true;
}

bool get_number(const json& o, const char* name, double lo, double hi, double* out) {
  auto it = o.find(name);
  if (it == o.end() || !it->is_number()) return false;
  const double v = it->get<double>();
  if (!std::isfinite(v) || v < lo || v > hi) return false;
  *out = v;
  return true;
}

bool get_bool(const json& o, const char* name, bool* out) {
  auto it = o.find(name);
  if (it == o.end() || !it->is_boolean()) return false;
  *out = it->get<bool>();
  return true;
}

Status parse_types(const json& types, std::vector<TypeTuning>* out) {
  if (!types.is_array() || types.size() > kMaxTypes) return Status::error("\"types\" is not a short array");
  for (const json& t : types) {
    TypeTuning type;
    const json* candidates = t.is_object() && t.contains("candidates") ? &t["candidates"] : nullptr;
    if (!candidates || !get_text(t, "type", &type.type) || !get_text(t, "chosen", &type.chosen) ||
        !get_text(t, "reason", &type.reason) || !get_number(t, "gain", 0, 1e6, &type.gain) ||
        !candidates->is_array() || candidates->size() > kMaxCandidates)
      return Status::error("a type entry lacks type, chosen, reason, gain or candidates");
    for (const json& c : *candidates) {
      TuningCandidate candidate;
      if (!c.is_object() || !get_text(c, "name", &candidate.name) ||
          !get_number(c, "median_seconds", 0, 1e6, &candidate.median_seconds) ||
          !get_bool(c, "failed", &candidate.failed))
        return Status::error("a candidate lacks name, median_seconds or failed");
      type.candidates.push_back(std::move(candidate));
    }
    out->push_back(std::move(type));
  }
  return Status::ok();
}

}  // namespace

std::string cache_key(const CpuInfo& cpu) {
  return cpu.vendor + " family " + std::to_string(cpu.family) + " model " + std::to_string(cpu.model) +
         " stepping " + std::to_string(cpu.stepping) + " | " + cpu.brand + " | " +
         std::to_string(cpu.logical_cores) + " logical cores";
}

std::string engine_version() {
  return std::string(MAGNETAR_VERSION) + " calibration " + std::to_string(kCalibrationRevision);
}

std::string cache_path() {
  const std::string dir = platform::user_cache_dir();
  return dir.empty() ? "" : from_path(to_path(dir) / "tuning.json");
}

std::string to_json(const DecodeTuning& tuning) { return tuning_json(tuning).dump(); }

Status parse_cache(std::string_view text, const std::string& key, const std::string& version,
                   DecodeTuning* out) {
  const json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) return Status::error("not a JSON object");
  auto v = doc.find("version");
  if (v == doc.end() || !v->is_number_integer() || *v != kCacheVersion)
    return Status::error("unsupported cache version");
  auto machines = doc.find("machines");
  if (machines == doc.end() || !machines->is_object()) return Status::error("no \"machines\" object");
  auto entry = machines->find(key);
  if (entry == machines->end() || !entry->is_object()) return Status::error("no entry for this machine");
  std::string entry_version;
  if (!get_text(*entry, "engine_version", &entry_version)) return Status::error("entry lacks engine_version");
  if (entry_version != version)
    return Status::error("stale: measured by " + entry_version + ", this is " + version);
  auto values = entry->find("values");
  if (values == entry->end() || !values->is_object()) return Status::error("entry lacks values");
  DecodeTuning t;
  double stripe = 0, streams = 0, threads = 0, unix_time = 0;
  if (!get_number(*values, "f16_stripe_cols", 0, 1e5, &stripe) ||
      !get_number(*values, "f16_streams", 0, 64, &streams) ||
      !get_bool(*values, "q8_0_x16_tiles", &t.q8_0_x16_tiles) ||
      !get_bool(*values, "q4_0_x16_tiles", &t.q4_0_x16_tiles) ||
      !get_text(*values, "quant_isa", &t.quant_isa))
    return Status::error("values are incomplete");
  t.f16_stripe_cols = static_cast<int>(stripe);
  t.f16_streams = static_cast<int>(streams);
  if (double(t.f16_stripe_cols) != stripe || !valid_stripe_cols(t.f16_stripe_cols) ||
      double(t.f16_streams) != streams || !valid_streams(t.f16_streams) || !valid_isa(t.quant_isa))
    return Status::error("a value is out of range");
  if (!get_number(*entry, "threads", 1, 1 << 16, &threads) ||
      !get_number(*entry, "seconds", 0, 1e5, &t.seconds) ||
      !get_number(*entry, "measured_unix", 0, 1e12, &unix_time) || !entry->contains("types"))
    return Status::error("entry lacks threads, seconds, measured_unix or types");
  t.threads = static_cast<int>(threads);
  t.measured_unix = static_cast<int64_t>(unix_time);
  MAGNETAR_TRY(parse_types((*entry)["types"], &t.types));
  if (t.types.empty()) return Status::error("entry has no measured types");
  *out = std::move(t);
  return Status::ok();
}

std::string update_cache(std::string_view existing_json, const std::string& key, const std::string& version,
                         const DecodeTuning& tuning) {
  json doc = json::parse(existing_json, nullptr, /*allow_exceptions=*/false);
  const bool usable = !doc.is_discarded() && doc.is_object() && doc.contains("version") &&
                      doc["version"] == kCacheVersion && doc.contains("machines") && doc["machines"].is_object();
  if (!usable) doc = json{{"version", kCacheVersion}, {"machines", json::object()}};
  json entry = tuning_json(tuning);
  entry["engine_version"] = version;
  doc["machines"][key] = std::move(entry);
  return doc.dump(2) + "\n";
}

Status read_cache_file(const std::string& path, const std::string& key, const std::string& version,
                       DecodeTuning* out) {
  uint64_t size = 0;
  MAGNETAR_TRY(platform::file_size(path, &size));
  if (size > kMaxCacheFileBytes) return Status::error(path + " is implausibly large");
  std::string text(size, '\0');
  MAGNETAR_TRY(platform::read_file_range(path, 0, text.data(), size));
  return parse_cache(text, key, version, out).with_context(path);
}

Status write_cache_file(const std::string& path, const std::string& key, const std::string& version,
                        const DecodeTuning& tuning) {
  std::string existing;
  uint64_t size = 0;
  if (platform::file_size(path, &size) && size <= kMaxCacheFileBytes) {
    existing.resize(size);
    if (!platform::read_file_range(path, 0, existing.data(), size)) existing.clear();
  }
  return write_file_atomically(path, update_cache(existing, key, version, tuning));
}

}  // namespace magnetar::tuning
