// The memory read-bandwidth probe behind magnetar::measure_read_bandwidth() and its per-machine
// cache file. Private to the engine (and its tests); the public face is magnetar/system.h.
//
// The probe streams a buffer far larger than the last-level cache with 1..N pinned threads, each
// reading its own contiguous slice, and reports the median of several timed passes per thread
// count (GB = 1e9 bytes). Decode speed is bounded by exactly this number: every generated token
// reads every weight once.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "magnetar/status.h"
#include "magnetar/system.h"
#include "magnetar/tools.h"

namespace magnetar::bandwidth {

inline constexpr uint64_t kDefaultBufferBytes = uint64_t(1) << 30;  // 1 GiB: >> any LLC today
inline constexpr uint64_t kMinBufferBytes = uint64_t(64) << 20;
inline constexpr int kTimedPasses = kBandwidthTimedPasses;  // per thread count, after a warm-up
inline constexpr int kCacheVersion = 1;
// An unoptimised or sanitizer-instrumented build runs several times slower than the machine
// can: its measurements (this probe, the decode calibration) are returned, but never cached as
// the machine's.
#if !defined(NDEBUG) || defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kTimingsAreTheMachines = false;
#else
inline constexpr bool kTimingsAreTheMachines = true;
#endif

// A streaming read: reads words [0, n) of `data` and returns a value that depends on all of them
// (consumed by the caller, so no load can be elided).
using ReadLoop = uint64_t (*)(const uint64_t* data, uint64_t words);

// The portable read loop: a 64-bit sum with eight accumulators, never inlined. Built for the
// baseline x86-64 ISA it uses 16-byte loads, which on Zen 5 read ~10 % below 32-byte loads;
// the probe uses kernels::streaming_read_loop() (AVX2 where the kernels run AVX2) instead.
uint64_t sum_words(const uint64_t* data, uint64_t words);

// Measures 1..max_threads (max_threads < 1 means platform::physical_cores()). buffer_bytes 0 =
// kDefaultBufferBytes; halved down to kMinBufferBytes when the allocation fails. Returns an
// empty profile only when not even kMinBufferBytes can be allocated.
BandwidthProfile measure(int max_threads, uint64_t buffer_bytes, ReadLoop loop = sum_words);

// The probe's buffer, allocated and written once, for measuring one thread count at a time
// between other work: the bench interleaves it with decode runs so that each run's share of the
// ceiling compares two numbers taken under the same conditions (a shared machine drifts).
class ReadProbe {
 public:
  // Same sizing rules as measure(). The buffer holds ordinary small floats, so a loop that
  // reads it as FP32 never meets denormals (which could be slow) or NaNs.
  explicit ReadProbe(uint64_t buffer_bytes = 0, ReadLoop loop = sum_words);
  ~ReadProbe();
  ReadProbe(const ReadProbe&) = delete;
  ReadProbe& operator=(const ReadProbe&) = delete;
  bool ok() const { return words_ != nullptr; }
  uint64_t buffer_bytes() const { return bytes_; }
  // Median GB/s of kTimedPasses passes with `threads` pinned threads (0 when !ok()).
  double measure(int threads);

 private:
  uint64_t* words_ = nullptr;
  uint64_t bytes_ = 0;
  ReadLoop loop_;
};

// ---- Cache file -----------------------------------------------------------------------------
// One JSON file, user_cache_dir()/bandwidth.json, holding one profile per machine key:
//   {"version":1,"machines":{"<key>":{"buffer_bytes":N,"measured_unix":T,
//                                     "points":[{"threads":1,"read_gbps":31.9},...]}}}
// The file is untrusted input: anything malformed reads as "not cached", never as an error
// the user sees, and a write replaces it atomically (temporary file + rename).

std::string cache_key(const std::string& cpu_brand, int logical_cores);
std::string cache_path();  // user_cache_dir()/bandwidth.json

// The profile stored under `key` in `json`; an error (naming the problem) when absent or invalid.
Status parse_cache(std::string_view json, const std::string& key, BandwidthProfile* out);
// `existing_json` (may be empty or malformed: then it is replaced) with `key` set to `profile`.
std::string update_cache(std::string_view existing_json, const std::string& key,
                         const BandwidthProfile& profile, int64_t measured_unix);

Status read_cache_file(const std::string& path, const std::string& key, BandwidthProfile* out);
Status write_cache_file(const std::string& path, const std::string& key,
                        const BandwidthProfile& profile);

}  // namespace magnetar::bandwidth
