// Contract tests for core/platform.h, run against whichever implementation the build picked
// (platform_posix.cpp on Linux, platform_win32.cpp under wine). Paths deliberately contain spaces
// and non-ASCII characters: the engine passes UTF-8 everywhere and Windows must widen it.
#include "core/platform.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "common/testdata.h"
#include "core/thread_pool.h"

namespace fs = std::filesystem;
namespace platform = magnetar::platform;

namespace {

std::string utf8(const fs::path& p) {
  const auto text = p.u8string();
  return std::string(reinterpret_cast<const char*>(text.data()), text.size());
}

fs::path from_utf8(const std::string& text) {
  return fs::path(std::u8string(reinterpret_cast<const char8_t*>(text.data()), text.size()));
}

// Bytes that differ at every offset within a 251-byte period (a prime: no alignment hides a bug).
std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> bytes(n);
  for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>((i % 251) ^ seed);
  return bytes;
}

void write_bytes(const fs::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  ASSERT_TRUE(out) << utf8(path);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good());
}

class PlatformFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = from_utf8(magnetar::test::make_temp_dir("platform"));
    // "models with spaces – ünïcødé 模型": spaces, Latin-1, a non-Latin-1 dash and CJK.
    dir_ = root_ / from_utf8("models with spaces \xE2\x80\x93 \xC3\xBCn\xC3\xAF" "c\xC3\xB8" "d\xC3\xA9 \xE6\xA8\xA1\xE5\x9E\x8B");
    fs::create_directories(dir_);
  }
  void TearDown() override { magnetar::test::remove_tree(utf8(root_)); }
  fs::path root_, dir_;
};

struct ProgressLog {
  uint64_t calls = 0, last_done = 0, last_total = 0;
  static void record(void* ctx, uint64_t done, uint64_t total) {
    auto* log = static_cast<ProgressLog*>(ctx);
    EXPECT_GE(done, log->last_done) << "progress went backwards";
    ++log->calls;
    log->last_done = done;
    log->last_total = total;
  }
};

TEST_F(PlatformFiles, FileBufferReadsAndMapsNonAsciiPathsExactly) {
  const auto bytes = pattern(100003, 0x5A);  // odd size: no page or vector multiple
  const fs::path file = dir_ / from_utf8("weights \xC3\xA9t\xC3\xA9.bin");
  write_bytes(file, bytes);
  for (auto mode : {platform::FileBuffer::Mode::Read, platform::FileBuffer::Mode::Map}) {
    SCOPED_TRACE(mode == platform::FileBuffer::Mode::Read ? "Read" : "Map");
    platform::FileBuffer buffer;
    ProgressLog log;
    const magnetar::Status status = buffer.open(utf8(file), mode, &ProgressLog::record, &log);
    ASSERT_TRUE(status.is_ok()) << status.message();
    ASSERT_EQ(buffer.size(), bytes.size());
    EXPECT_EQ(buffer.mode(), mode);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer.data()) % 64, 0u) << "data must be 64-byte aligned";
    EXPECT_EQ(std::memcmp(buffer.data(), bytes.data(), bytes.size()), 0);
    EXPECT_GE(log.calls, 1u);
    EXPECT_EQ(log.last_done, bytes.size());
    EXPECT_EQ(log.last_total, bytes.size());

    platform::FileBuffer moved(std::move(buffer));
    EXPECT_EQ(buffer.data(), nullptr);
    EXPECT_EQ(buffer.size(), 0u);
    ASSERT_EQ(moved.size(), bytes.size());
    EXPECT_EQ(moved.data()[bytes.size() - 1], bytes.back());
    moved.close();
    EXPECT_EQ(moved.data(), nullptr);
  }
}

TEST_F(PlatformFiles, MissingFileIsAnErrorNamingThePath) {
  const std::string missing = utf8(dir_ / "does-not-exist.bin");
  for (auto mode : {platform::FileBuffer::Mode::Read, platform::FileBuffer::Mode::Map}) {
    platform::FileBuffer buffer;
    const magnetar::Status status = buffer.open(missing, mode);
    ASSERT_FALSE(status.is_ok());
    EXPECT_NE(status.message().find("does-not-exist.bin"), std::string::npos) << status.message();
    EXPECT_EQ(buffer.data(), nullptr);
  }
  uint64_t size = 12345;
  EXPECT_FALSE(platform::file_size(missing, &size).is_ok());
  char byte = 0;
  EXPECT_FALSE(platform::read_file_range(missing, 0, &byte, 1).is_ok());
}

TEST_F(PlatformFiles, EmptyFilesDirectoriesAndCancelAreErrors) {
  const fs::path empty = dir_ / "empty.bin";
  write_bytes(empty, {});
  const fs::path file = dir_ / "full.bin";
  write_bytes(file, pattern(9000, 3));
  const std::atomic<bool> cancel{true};
  for (auto mode : {platform::FileBuffer::Mode::Read, platform::FileBuffer::Mode::Map}) {
    platform::FileBuffer buffer;
    EXPECT_FALSE(buffer.open(utf8(empty), mode).is_ok()) << "an empty model file is an error";
    EXPECT_FALSE(buffer.open(utf8(dir_), mode).is_ok()) << "a folder is not a file";
    EXPECT_FALSE(buffer.open(utf8(file), mode, nullptr, nullptr, &cancel).is_ok())
        << "a set cancel flag aborts loading";
    EXPECT_EQ(buffer.data(), nullptr);
  }
  uint64_t size = 0;
  EXPECT_FALSE(platform::file_size(utf8(dir_), &size).is_ok());
}

TEST_F(PlatformFiles, SizeAndRangeReads) {
  const auto bytes = pattern(4099, 0x11);
  const fs::path file = dir_ / from_utf8("r\xC3\xA4nge.bin");
  write_bytes(file, bytes);
  uint64_t size = 0;
  ASSERT_TRUE(platform::file_size(utf8(file), &size).is_ok());
  EXPECT_EQ(size, bytes.size());

  std::vector<uint8_t> middle(1001, 0xEE);
  ASSERT_TRUE(platform::read_file_range(utf8(file), 1237, middle.data(), middle.size()).is_ok());
  EXPECT_EQ(std::memcmp(middle.data(), bytes.data() + 1237, middle.size()), 0);

  std::vector<uint8_t> tail(16);
  const magnetar::Status past_end =
      platform::read_file_range(utf8(file), bytes.size() - 8, tail.data(), tail.size());
  EXPECT_FALSE(past_end.is_ok()) << "reading 16 bytes where 8 remain must fail";
}

TEST_F(PlatformFiles, RenameReplacesAnExistingFileAndSyncWorks) {
  const fs::path target = dir_ / from_utf8("chat \xE2\x84\x96" "1.json");
  const fs::path temp = dir_ / from_utf8("chat \xE2\x84\x96" "1.json.tmp");
  write_bytes(target, pattern(10, 1));
  write_bytes(temp, pattern(77, 2));
  ASSERT_TRUE(platform::sync_file(utf8(temp)).is_ok());
  const magnetar::Status status = platform::rename_replace(utf8(temp), utf8(target));
  ASSERT_TRUE(status.is_ok()) << status.message();
  EXPECT_FALSE(fs::exists(temp));
  uint64_t size = 0;
  ASSERT_TRUE(platform::file_size(utf8(target), &size).is_ok());
  EXPECT_EQ(size, 77u);
  EXPECT_FALSE(platform::rename_replace(utf8(temp), utf8(target)).is_ok()) << "source is gone";
}

TEST(Platform, UserDirectoriesExist) {
  const std::string data = platform::user_data_dir();
  const std::string cache = platform::user_cache_dir();
  ASSERT_FALSE(data.empty());
  ASSERT_FALSE(cache.empty());
  EXPECT_TRUE(fs::is_directory(from_utf8(data))) << data;
  EXPECT_TRUE(fs::is_directory(from_utf8(cache))) << cache;
  EXPECT_NE(data, cache);
}

TEST(Platform, ClocksAndProcessQueries) {
  const double t0 = platform::now_seconds();
  const double cpu0 = platform::process_cpu_seconds();
  volatile uint64_t sink = 0;
  while (platform::now_seconds() - t0 < 0.05) {
    for (int i = 0; i < 10000; ++i) sink = sink + static_cast<uint64_t>(i);
  }
  const double t1 = platform::now_seconds();
  EXPECT_GE(t1 - t0, 0.05);
  EXPECT_LT(t1 - t0, 5.0);
  EXPECT_GT(platform::process_cpu_seconds(), cpu0) << "a busy loop must cost CPU time";
  EXPECT_GT(platform::current_resident_bytes(), 0u);
  EXPECT_GE(platform::peak_resident_bytes(), platform::current_resident_bytes());
  EXPECT_GE(platform::physical_cores(), 1);
  // Physical cores: never more than the logical CPUs; the pool's default is the same count.
  if (std::thread::hardware_concurrency() > 0) {
    EXPECT_LE(platform::physical_cores(), static_cast<int>(std::thread::hardware_concurrency()));
  }
  EXPECT_EQ(magnetar::ThreadPool::default_threads(), platform::physical_cores());
  EXPECT_FALSE(platform::cpu_brand().empty());
  EXPECT_GT(platform::process_id(), 0);
  platform::set_current_thread_affinity(0);  // best effort: must simply not fail or crash
}

TEST(Platform, DiscardedScratchPagesStayUsable) {
  const uint64_t bytes = 8u << 20;
  auto* p = static_cast<uint8_t*>(platform::alloc_large(bytes, /*huge_pages=*/false));
  ASSERT_NE(p, nullptr);
  std::memset(p, 0x5A, bytes);
  platform::discard_pages(p, bytes);
  // The contents are undefined now; the range must still be writable and readable.
  std::memset(p, 0x33, bytes);
  EXPECT_EQ(p[0], 0x33);
  EXPECT_EQ(p[bytes - 1], 0x33);
  platform::discard_pages(nullptr, 0);  // a no-op
  platform::free_large(p, bytes);
}

TEST(Platform, LargeAllocationsAreZeroedAlignedAndWritable) {
  for (uint64_t bytes : {uint64_t{1}, uint64_t{4097}, uint64_t{3} << 20}) {
    auto* p = static_cast<uint8_t*>(platform::alloc_large(bytes));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
    EXPECT_EQ(p[0], 0);
    EXPECT_EQ(p[bytes - 1], 0);
    std::memset(p, 0xA5, bytes);
    EXPECT_EQ(p[bytes / 2], 0xA5);
    platform::free_large(p, bytes);
  }
}

}  // namespace
