// magnetar/system.h: what the machine is (CPU, active kernels) and its measured read bandwidth,
// plus the OS facts the frontends show (resident memory, per-user folders), forwarded from
// core/platform.h so that frontends never include private engine headers.
#include "magnetar/system.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "core/bandwidth.h"
#include "core/cpu_features.h"
#include "core/platform.h"
#include "kernels/kernels.h"

namespace magnetar {

namespace {

CpuInfo detect_cpu_info() {
  const cpu::Features& f = cpu::features();
  CpuInfo info;
  info.brand = f.brand.empty() ? platform::cpu_brand() : f.brand;
  info.vendor = f.vendor;
  info.family = f.family;
  info.model = f.model;
  info.stepping = f.stepping;
  const unsigned hardware = std::thread::hardware_concurrency();
  info.logical_cores = hardware ? static_cast<int>(hardware) : platform::physical_cores();
  info.avx2 = f.avx2 && f.os_ymm;
  info.fma = f.fma && f.os_ymm;
  info.f16c = f.f16c && f.os_ymm;
  info.avx512f = f.avx512f && f.os_zmm;
  info.avx512_vnni = f.avx512vnni && f.os_zmm;
  info.kernel_isa = kernels::active().float_isa;
  info.quant_kernel_isa = kernels::active().isa;
  if (info.kernel_isa == "reference") {
    const char* forced = std::getenv("MAGNETAR_KERNELS");
    if (forced && std::string(forced) == "reference")
      info.kernel_note = "forced by MAGNETAR_KERNELS=reference";
    else if (!f.has_avx2_kernels())
      info.kernel_note = "this CPU (or its OS) lacks AVX2 + FMA + F16C with saved YMM state";
    else
      info.kernel_note = "reference kernels selected by the application";
  }
  return info;
}

}  // namespace

const CpuInfo& cpu_info() {
  static const CpuInfo info = detect_cpu_info();
  return info;
}

double BandwidthProfile::best_gbps() const {
  double best = 0;
  for (const auto& p : points) best = std::max(best, p.read_gbps);
  return best;
}

double BandwidthProfile::at_threads(int threads) const {
  const BandwidthPoint* nearest = nullptr;
  for (const auto& p : points)
    if (!nearest || std::abs(p.threads - threads) < std::abs(nearest->threads - threads))
      nearest = &p;
  return nearest ? nearest->read_gbps : 0;
}

BandwidthProfile measure_read_bandwidth(int max_threads, uint64_t buffer_bytes) {
  return bandwidth::measure(max_threads, buffer_bytes, kernels::streaming_read_loop(nullptr));
}

BandwidthProfile cached_read_bandwidth(bool force_remeasure) {
  static std::mutex mutex;
  static BandwidthProfile remembered;  // this process's answer, once known
  std::lock_guard<std::mutex> lock(mutex);
  if (!force_remeasure && !remembered.points.empty()) return remembered;

  const CpuInfo& cpu = cpu_info();
  const char* loop_name = "";
  const bandwidth::ReadLoop loop = kernels::streaming_read_loop(&loop_name);
  // The read loop is part of the key: a ceiling measured with narrower loads is not reused.
  const std::string key = bandwidth::cache_key(cpu.brand, cpu.logical_cores) + " | " + loop_name + " read";
  const std::string path = bandwidth::cache_path();
  BandwidthProfile profile;
  // A missing or damaged cache file just means measuring again.
  if (force_remeasure || path.empty() || !bandwidth::read_cache_file(path, key, &profile)) {
    profile = bandwidth::measure(platform::physical_cores(), 0, loop);
    // Best effort: an unwritable cache folder costs a few seconds at the next start, no more.
    if (bandwidth::kTimingsAreTheMachines && !path.empty() && !profile.points.empty())
      (void)bandwidth::write_cache_file(path, key, profile);
  }
  remembered = profile;
  return profile;
}

uint64_t peak_resident_bytes() { return platform::peak_resident_bytes(); }
uint64_t current_resident_bytes() { return platform::current_resident_bytes(); }
std::string user_data_dir() { return platform::user_data_dir(); }
std::string user_cache_dir() { return platform::user_cache_dir(); }
std::string user_models_dir() { return platform::user_models_dir(); }

}  // namespace magnetar
