// The read-bandwidth probe and its per-machine cache file (see bandwidth.h).
#include "core/bandwidth.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <vector>

#include "core/platform.h"

namespace magnetar::bandwidth {

// ---- The read loop --------------------------------------------------------------------------

#if defined(__GNUC__)
#define MAGNETAR_NOINLINE __attribute__((noinline))
#else
#define MAGNETAR_NOINLINE
#endif

// Eight independent accumulators: a full cache line per iteration and no loop-carried
// dependency longer than one add, so the loop is bound by the loads alone.
MAGNETAR_NOINLINE uint64_t sum_words(const uint64_t* data, uint64_t words) {
  uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0;
  uint64_t i = 0;
  for (; i + 8 <= words; i += 8) {
    a0 += data[i + 0];
    a1 += data[i + 1];
    a2 += data[i + 2];
    a3 += data[i + 3];
    a4 += data[i + 4];
    a5 += data[i + 5];
    a6 += data[i + 6];
    a7 += data[i + 7];
  }
  for (; i < words; ++i) a0 += data[i];
  return (a0 + a1) + (a2 + a3) + (a4 + a5) + (a6 + a7);
}

// ---- Threads --------------------------------------------------------------------------------

namespace {

// Sense-reversing spin barrier: the probe's threads are pinned one per core and wait only a few
// microseconds between passes, so spinning keeps the pass boundaries sharp.
class SpinBarrier {
 public:
  explicit SpinBarrier(int n) : n_(n) {}
  void wait() {
    const int gen = generation_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) == n_ - 1) {
      arrived_.store(0, std::memory_order_relaxed);
      generation_.fetch_add(1, std::memory_order_release);
      return;
    }
    for (int spins = 0; generation_.load(std::memory_order_acquire) == gen; ++spins)
      if (spins > 4096) std::this_thread::yield();  // an oversubscribed machine: let others run
  }

 private:
  const int n_;
  std::atomic<int> arrived_{0};
  std::atomic<int> generation_{0};
};

// One thread count: n fresh threads, pinned to cores 0..n-1 (the caller's own thread is never
// pinned), one warm-up pass and kTimedPasses timed ones. Returns GB/s per timed pass.
std::vector<double> measure_threads(ReadLoop loop, const uint64_t* buffer, uint64_t words, int n,
                                    std::atomic<uint64_t>* sink) {
  const uint64_t slice = words / static_cast<uint64_t>(n) / 8 * 8;  // whole cache lines
  const double bytes_per_pass = static_cast<double>(slice) * 8.0 * n;
  SpinBarrier barrier(n);
  std::vector<double> gbps;
  auto worker = [&](int t) {
    platform::set_current_thread_affinity(t);
    const uint64_t* mine = buffer + slice * static_cast<uint64_t>(t);
    uint64_t acc = 0;
    for (int pass = 0; pass <= kTimedPasses; ++pass) {
      barrier.wait();
      const double t0 = platform::now_seconds();
      acc += loop(mine, slice);
      barrier.wait();
      if (t == 0 && pass > 0) gbps.push_back(bytes_per_pass / (platform::now_seconds() - t0) / 1e9);
    }
    sink->fetch_add(acc, std::memory_order_relaxed);
  };
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (int t = 0; t < n; ++t) threads.emplace_back(worker, t);
  for (auto& th : threads) th.join();
  return gbps;
}

}  // namespace

ReadProbe::ReadProbe(uint64_t buffer_bytes, ReadLoop loop) : loop_(loop) {
  if (buffer_bytes == 0) buffer_bytes = kDefaultBufferBytes;
  buffer_bytes = std::max(buffer_bytes, kMinBufferBytes) / 4096 * 4096;
  void* memory = nullptr;
  while (!(memory = platform::alloc_large(buffer_bytes)) && buffer_bytes / 2 >= kMinBufferBytes)
    buffer_bytes /= 2;
  if (!memory) return;
  // Write every page: untouched anonymous memory reads as the shared zero page (cache speed).
  words_ = static_cast<uint64_t*>(memory);
  bytes_ = buffer_bytes;
  for (uint64_t i = 0; i < bytes_ / 8; ++i) {
    const float pair[2] = {static_cast<float>(i % 1021) * (1.0f / 1024),
                           static_cast<float>(i % 509) * (1.0f / 512)};
    std::memcpy(&words_[i], pair, sizeof pair);
  }
}

ReadProbe::~ReadProbe() {
  if (words_) platform::free_large(words_, bytes_);
}

double ReadProbe::measure(int threads) {
  if (!words_ || threads < 1) return 0;
  std::atomic<uint64_t> sink{0};
  return median(measure_threads(loop_, words_, bytes_ / 8, threads, &sink));
}

BandwidthProfile measure(int max_threads, uint64_t buffer_bytes, ReadLoop loop) {
  if (max_threads < 1) max_threads = platform::physical_cores();
  ReadProbe probe(buffer_bytes, loop);
  BandwidthProfile profile;
  if (!probe.ok()) return profile;
  profile.buffer_bytes = probe.buffer_bytes();
  for (int n = 1; n <= max_threads; ++n) {
    BandwidthPoint point;
    point.threads = n;
    point.read_gbps = probe.measure(n);
    profile.points.push_back(point);
  }
  return profile;
}

// ---- Cache file -----------------------------------------------------------------------------

namespace {

constexpr uint64_t kMaxCacheFileBytes = 1 << 20;
constexpr int kMaxThreadsInCache = 4096;

}  // namespace

std::string cache_key(const std::string& cpu_brand, int logical_cores) {
  return cpu_brand + " | " + std::to_string(logical_cores) + " logical cores";
}

std::string cache_path() {
  const std::string dir = platform::user_cache_dir();
  if (dir.empty()) return "";
  const std::u8string joined = (to_path(dir) / "bandwidth.json").u8string();
  return std::string(joined.begin(), joined.end());
}

Status parse_cache(std::string_view json, const std::string& key, BandwidthProfile* out) {
  nlohmann::json doc = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) return Status::error("not a JSON object");
  auto version = doc.find("version");
  if (version == doc.end() || !version->is_number_integer() || *version != kCacheVersion)
    return Status::error("unsupported cache version");
  auto machines = doc.find("machines");
  if (machines == doc.end() || !machines->is_object())
    return Status::error("no \"machines\" object");
  auto entry = machines->find(key);
  if (entry == machines->end() || !entry->is_object())
    return Status::error("no entry for this machine");
  auto buffer = entry->find("buffer_bytes");
  auto points = entry->find("points");
  if (buffer == entry->end() || !buffer->is_number_unsigned() || points == entry->end() ||
      !points->is_array() || points->empty() || points->size() > kMaxThreadsInCache)
    return Status::error("entry lacks buffer_bytes or points");
  BandwidthProfile profile;
  profile.buffer_bytes = buffer->get<uint64_t>();
  int expected_threads = 1;
  for (const auto& p : *points) {
    if (!p.is_object()) return Status::error("a point is not an object");
    auto threads = p.find("threads");
    auto gbps = p.find("read_gbps");
    if (threads == p.end() || !threads->is_number_integer() || gbps == p.end() ||
        !gbps->is_number())
      return Status::error("a point lacks threads or read_gbps");
    BandwidthPoint point;
    point.threads = threads->get<int>();
    point.read_gbps = gbps->get<double>();
    if (point.threads != expected_threads++)
      return Status::error("points are not threads 1, 2, ... in order");
    if (!std::isfinite(point.read_gbps) || point.read_gbps <= 0 || point.read_gbps > 1e5)
      return Status::error("read_gbps out of range");
    profile.points.push_back(point);
  }
  *out = std::move(profile);
  return Status::ok();
}

std::string update_cache(std::string_view existing_json, const std::string& key,
                         const BandwidthProfile& profile, int64_t measured_unix) {
  nlohmann::json doc = nlohmann::json::parse(existing_json, nullptr, false);
  bool usable = !doc.is_discarded() && doc.is_object() && doc.contains("version") &&
                doc["version"] == kCacheVersion && doc.contains("machines") &&
                doc["machines"].is_object();
  if (!usable) doc = nlohmann::json{{"version", kCacheVersion}, {"machines", nlohmann::json::object()}};
  nlohmann::json points = nlohmann::json::array();
  for (const auto& p : profile.points)
    points.push_back({{"threads", p.threads}, {"read_gbps", p.read_gbps}});
  doc["machines"][key] = {{"buffer_bytes", profile.buffer_bytes},
                          {"measured_unix", measured_unix},
                          {"points", std::move(points)}};
  return doc.dump(2) + "\n";
}

Status read_cache_file(const std::string& path, const std::string& key, BandwidthProfile* out) {
  std::error_code ec;
  const auto p = to_path(path);
  const uintmax_t size = std::filesystem::file_size(p, ec);
  if (ec) return Status::error("cannot read " + path + ": " + ec.message());
  if (size > kMaxCacheFileBytes) return Status::error(path + " is implausibly large");
  std::ifstream in(p, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) return Status::error("cannot read " + path);
  return parse_cache(text.str(), key, out).with_context(path);
}

Status write_cache_file(const std::string& path, const std::string& key,
                        const BandwidthProfile& profile) {
  std::string existing;
  {
    std::error_code ec;
    const auto p = to_path(path);
    if (std::filesystem::exists(p, ec) && std::filesystem::file_size(p, ec) <= kMaxCacheFileBytes) {
      std::ifstream in(p, std::ios::binary);
      std::ostringstream text;
      text << in.rdbuf();
      existing = text.str();
    }
  }
  const int64_t now_unix = std::chrono::duration_cast<std::chrono::seconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  const std::string text = update_cache(existing, key, profile, now_unix);
  return write_file_atomically(path, text);
}

}  // namespace magnetar::bandwidth
