// What the machine is: CPU features, the active kernels, and its measured memory bandwidth; and
// the per-user folders and file helpers the frontends share with the engine.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "magnetar/status.h"

namespace magnetar {

struct CpuInfo {
  std::string brand;
  std::string vendor;  // CPUID vendor: "GenuineIntel", "AuthenticAMD", ...
  int family = 0, model = 0, stepping = 0;  // CPUID display family / model, stepping
  int logical_cores = 0;
  bool avx2 = false, fma = false, f16c = false, avx512f = false, avx512_vnni = false;
  std::string kernel_isa;  // "avx2" or "reference": the kernels the dispatch table chose
  std::string kernel_note; // why the reference path runs, when it does
  std::string quant_kernel_isa;  // "avx512vnni", "avx2" or "reference": the quantized types' table
};
const CpuInfo& cpu_info();

struct BandwidthPoint {
  int threads = 0;
  double read_gbps = 0;  // median of several passes
};
struct BandwidthProfile {
  std::vector<BandwidthPoint> points;  // 1..N threads
  uint64_t buffer_bytes = 0;
  double best_gbps() const;
  double at_threads(int threads) const;  // nearest measured point
};

// Sustained read bandwidth over a buffer far larger than the last-level cache.
BandwidthProfile measure_read_bandwidth(int max_threads, uint64_t buffer_bytes = 0);
// Cached per machine in the user's cache directory; measured (a few seconds) when absent.
BandwidthProfile cached_read_bandwidth(bool force_remeasure = false);

uint64_t peak_resident_bytes();
uint64_t current_resident_bytes();

// Per-user data directory (XDG_DATA_HOME/magnetar or %APPDATA%\Magnetar), created if missing.
std::string user_data_dir();
std::string user_cache_dir();
// Where the app keeps converted models (created if missing): user_data_dir()/models, or on
// Windows %LOCALAPPDATA%\Magnetar\models, since multi-GB files must not roam with %APPDATA%.
std::string user_models_dir();

// Paths are UTF-8 std::strings in the engine and the app; these convert to and from
// std::filesystem (UTF-16 inside on Windows).
std::filesystem::path to_path(const std::string& utf8);
std::string from_path(const std::filesystem::path& path);
// Writes `bytes` to a temporary file beside `path`, flushes it to disk, then renames it over
// `path`: readers (and a crash at any moment) see either the old or the new file, never a mix.
Status write_file_atomically(const std::string& path, std::string_view bytes);

}  // namespace magnetar
