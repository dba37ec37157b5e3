// The bandwidth probe's non-timing logic: the read loop's sum, the profile's shape, the cache
// file (round trip, damaged input, atomic replace). No test here asserts a speed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "common/testdata.h"
#include "core/bandwidth.h"
#include "kernels/kernels.h"
#include "magnetar/system.h"

namespace magnetar {
namespace {

BandwidthProfile sample_profile() {
  BandwidthProfile p;
  p.buffer_bytes = 1ull << 30;
  p.points = {{1, 31.5}, {2, 57.25}, {3, 60.0}};
  return p;
}

// The welcome screen's "Kernels" row: the table's float kernels and the table itself (whose isa
// names the Q8_0/Q4_0 kernels), as the dispatcher chose it.
TEST(CpuInfo, NamesTheFloatAndQuantKernelTables) {
  const CpuInfo& info = cpu_info();
  EXPECT_EQ(info.kernel_isa, kernels::active().float_isa);
  EXPECT_EQ(info.quant_kernel_isa, kernels::active().isa);
  EXPECT_FALSE(info.quant_kernel_isa.empty());
}

TEST(Bandwidth, SumWordsAddsEveryWordIncludingTheTail) {
  for (uint64_t n : {0ull, 1ull, 7ull, 8ull, 9ull, 1000ull, 1023ull}) {
    std::vector<uint64_t> words(n);
    uint64_t expected = 0;
    for (uint64_t i = 0; i < n; ++i) expected += (words[i] = i * 2654435761ull + 17);
    EXPECT_EQ(bandwidth::sum_words(words.data(), n), expected) << n << " words";
  }
}

TEST(Bandwidth, ProfileNearestAndBest) {
  BandwidthProfile p = sample_profile();
  EXPECT_DOUBLE_EQ(p.best_gbps(), 60.0);
  EXPECT_DOUBLE_EQ(p.at_threads(2), 57.25);
  EXPECT_DOUBLE_EQ(p.at_threads(0), 31.5);
  EXPECT_DOUBLE_EQ(p.at_threads(16), 60.0);
  EXPECT_DOUBLE_EQ(BandwidthProfile{}.at_threads(1), 0.0);
  EXPECT_DOUBLE_EQ(BandwidthProfile{}.best_gbps(), 0.0);
}

TEST(Bandwidth, MeasureGivesOnePositivePointPerThreadCount) {
  // Shape only (the smallest buffer, two thread counts): speeds are the benchmark's business.
  BandwidthProfile p = measure_read_bandwidth(2, bandwidth::kMinBufferBytes);
  ASSERT_EQ(p.points.size(), 2u);
  EXPECT_EQ(p.buffer_bytes, bandwidth::kMinBufferBytes);
  for (size_t i = 0; i < p.points.size(); ++i) {
    EXPECT_EQ(p.points[i].threads, static_cast<int>(i + 1));
    EXPECT_GT(p.points[i].read_gbps, 0.0);
  }
}

TEST(BandwidthCache, RoundTripKeepsOtherMachines) {
  const std::string key = bandwidth::cache_key("Test CPU", 2);
  const std::string other = bandwidth::cache_key("Other CPU", 8);
  std::string json = bandwidth::update_cache("", other, sample_profile(), 1);
  BandwidthProfile mine;
  mine.buffer_bytes = 1ull << 29;
  mine.points = {{1, 20.5}, {2, 40.0}};
  json = bandwidth::update_cache(json, key, mine, 2);

  BandwidthProfile back;
  ASSERT_TRUE(bandwidth::parse_cache(json, key, &back).is_ok());
  EXPECT_EQ(back.buffer_bytes, mine.buffer_bytes);
  ASSERT_EQ(back.points.size(), 2u);
  EXPECT_EQ(back.points[1].threads, 2);
  EXPECT_DOUBLE_EQ(back.points[1].read_gbps, 40.0);
  ASSERT_TRUE(bandwidth::parse_cache(json, other, &back).is_ok());
  EXPECT_EQ(back.points.size(), 3u);
  EXPECT_FALSE(bandwidth::parse_cache(json, bandwidth::cache_key("Test CPU", 4), &back).is_ok());
}

TEST(BandwidthCache, DamagedOrHostileInputIsAnErrorNotACrash) {
  const std::string key = "k";
  const std::vector<std::string> bad = {
      "",
      "{",
      "[]",
      "null",
      R"({"version":2,"machines":{}})",
      R"({"version":1})",
      R"({"version":1,"machines":[]})",
      R"({"version":1,"machines":{"k":{}}})",
      R"({"version":1,"machines":{"k":{"buffer_bytes":1,"points":[]}}})",
      R"({"version":1,"machines":{"k":{"buffer_bytes":-1,"points":[{"threads":1,"read_gbps":3}]}}})",
      R"({"version":1,"machines":{"k":{"buffer_bytes":1,"points":[{"threads":2,"read_gbps":3}]}}})",
      R"({"version":1,"machines":{"k":{"buffer_bytes":1,"points":[{"threads":1,"read_gbps":-3}]}}})",
      R"({"version":1,"machines":{"k":{"buffer_bytes":1,"points":[{"threads":1,"read_gbps":"x"}]}}})",
      R"({"version":1,"machines":{"k":{"buffer_bytes":1,"points":[{"threads":1,"read_gbps":1e300}]}}})",
      R"({"version":1,"machines":{"k":{"buffer_bytes":1,"points":[7]}}})",
  };
  for (const auto& json : bad) {
    BandwidthProfile out;
    EXPECT_FALSE(bandwidth::parse_cache(json, key, &out).is_ok()) << json;
  }
  // A damaged file is replaced by a valid one holding just the new entry.
  const std::string repaired = bandwidth::update_cache("{not json", key, sample_profile(), 3);
  BandwidthProfile out;
  EXPECT_TRUE(bandwidth::parse_cache(repaired, key, &out).is_ok());
}

TEST(BandwidthCache, FileWriteIsAtomicAndReadable) {
  const std::string dir = test::make_temp_dir("bandwidth-cache");
  const std::string path = dir + "/bandwidth.json";
  const std::string key = bandwidth::cache_key("Test CPU", 2);
  BandwidthProfile out;
  EXPECT_FALSE(bandwidth::read_cache_file(path, key, &out).is_ok());  // absent

  ASSERT_TRUE(bandwidth::write_cache_file(path, key, sample_profile()).is_ok());
  ASSERT_TRUE(bandwidth::read_cache_file(path, key, &out).is_ok());
  EXPECT_EQ(out.points.size(), 3u);
  // Overwriting a damaged file works, and no temporary file is left behind.
  { std::ofstream(path) << "garbage"; }
  EXPECT_FALSE(bandwidth::read_cache_file(path, key, &out).is_ok());
  ASSERT_TRUE(bandwidth::write_cache_file(path, key, sample_profile()).is_ok());
  EXPECT_TRUE(bandwidth::read_cache_file(path, key, &out).is_ok());
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    (void)entry;
    ++files;
  }
  EXPECT_EQ(files, 1);
  test::remove_tree(dir);
}

}  // namespace
}  // namespace magnetar
