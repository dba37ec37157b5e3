// POSIX (Linux) implementation of core/platform.h.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sched.h>
#include <thread>
#include <utility>
#include <vector>

#include "core/platform.h"

namespace magnetar::platform {

namespace {

std::string errno_text() { return std::strerror(errno); }

constexpr uint64_t kHugePage = 2ull << 20;

// Reads the whole file into `dst` in chunks so progress can be reported and cancel honoured.
// Chunks are claimed by one thread per physical core: from the page cache, a read is the CPU
// work of faulting in, zeroing and filling fresh pages, which one core does at ~2–3 GB/s.
Status read_all(int fd, const std::string& path, uint8_t* dst, uint64_t size,
                FileBuffer::Progress progress, void* ctx, const std::atomic<bool>* cancel) {
  constexpr uint64_t kChunk = 64ull << 20;
  std::atomic<uint64_t> next{0}, done{0};
  std::atomic<int> failure{0};  // 0 ok, 1 read error, 2 file shrank, 3 cancelled
  std::atomic<int> failure_errno{0};
  // Reads the next unclaimed chunk; false when none is left or a reader failed.
  auto read_chunk = [&]() -> bool {
    const uint64_t begin = next.fetch_add(kChunk);
    if (begin >= size || failure.load()) return false;
    if (cancel && cancel->load(std::memory_order_relaxed)) {
      failure = 3;
      return false;
    }
    const uint64_t end = std::min(size, begin + kChunk);
    for (uint64_t at = begin; at < end;) {
      const ssize_t got = ::pread(fd, dst + at, end - at, static_cast<off_t>(at));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        failure_errno = got < 0 ? errno : 0;
        failure = got < 0 ? 1 : 2;
        return false;
      }
      at += static_cast<uint64_t>(got);
    }
    done.fetch_add(end - begin);
    return true;
  };
  const int n_threads = static_cast<int>(std::min<uint64_t>(physical_cores(), (size + kChunk - 1) / kChunk));
  std::vector<std::thread> helpers;
  for (int t = 1; t < n_threads; ++t)
    helpers.emplace_back([&] {
      while (read_chunk()) {
      }
    });
  // The calling thread reads too, and reports progress between its chunks.
  while (read_chunk())
    if (progress) progress(ctx, done.load(), size);
  for (auto& h : helpers) h.join();
  if (progress && !failure.load()) progress(ctx, size, size);
  switch (failure.load()) {
    case 1: errno = failure_errno.load(); return Status::error(path + ": read failed: " + errno_text());
    case 2: return Status::error(path + ": file shrank while it was being read");
    case 3: return Status::error("loading cancelled");
    default: return Status::ok();
  }
}

}  // namespace

// O_NONBLOCK: opening a FIFO for reading would otherwise block until a writer appears (a model
// path naming a FIFO hung the loader); regular files ignore the flag. Callers fstat and refuse
// anything that is not a regular file.
static int open_for_reading(const std::string& path) {
  return ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
}

Status FileBuffer::open(const std::string& path, Mode mode, Progress progress, void* ctx,
                        const std::atomic<bool>* cancel) {
  close();
  int fd = open_for_reading(path);
  if (fd < 0) return Status::error(path + ": cannot open: " + errno_text());
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::error(path + ": not a regular file");
  }
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    return Status::error(path + ": file is empty");
  }
  mode_ = mode;
  if (mode == Mode::Map) {
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      ::close(fd);
      return Status::error(path + ": mmap failed: " + errno_text());
    }
    ::madvise(p, size, MADV_WILLNEED);
    huge_pages_ = false;
    // Touch every page once so the first token does not pay the page faults.
    const volatile uint8_t* bytes = static_cast<const uint8_t*>(p);
    for (uint64_t off = 0; off < size; off += 4096) {
      (void)bytes[off];
      if (progress && (off & ((64ull << 20) - 1)) == 0) progress(ctx, off, size);
      if (cancel && cancel->load(std::memory_order_relaxed) && (off & ((64ull << 20) - 1)) == 0) {
        ::munmap(p, size);
        ::close(fd);
        return Status::error("loading cancelled");
      }
    }
    if (progress) progress(ctx, size, size);
    data_ = static_cast<const uint8_t*>(p);
    size_ = size;
    mapped_bytes_ = size;
    ::close(fd);
    return Status::ok();
  }
  // Read mode: anonymous memory, transparent huge pages requested.
  uint64_t reserve = (size + kHugePage - 1) / kHugePage * kHugePage;
  void* p = ::mmap(nullptr, reserve, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    ::close(fd);
    return Status::error(path + ": cannot allocate " + std::to_string(size >> 20) +
                         " MiB for the model: " + errno_text());
  }
  huge_pages_ = ::madvise(p, reserve, MADV_HUGEPAGE) == 0;
  Status s = read_all(fd, path, static_cast<uint8_t*>(p), size, progress, ctx, cancel);
  ::close(fd);
  if (!s) {
    ::munmap(p, reserve);
    return s;
  }
  data_ = static_cast<const uint8_t*>(p);
  size_ = size;
  mapped_bytes_ = reserve;
  return Status::ok();
}

void FileBuffer::close() {
  if (data_) ::munmap(const_cast<uint8_t*>(data_), mapped_bytes_);
  data_ = nullptr;
  size_ = mapped_bytes_ = 0;
}

Status file_size(const std::string& path, uint64_t* out) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return Status::error(path + ": " + errno_text());
  if (!S_ISREG(st.st_mode)) return Status::error(path + ": not a regular file");
  *out = static_cast<uint64_t>(st.st_size);
  return Status::ok();
}

Status read_file_range(const std::string& path, uint64_t offset, void* dst, uint64_t bytes) {
  int fd = open_for_reading(path);
  if (fd < 0) return Status::error(path + ": cannot open: " + errno_text());
  uint64_t done = 0;
  while (done < bytes) {
    ssize_t got = ::pread(fd, static_cast<uint8_t*>(dst) + done, bytes - done,
                          static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      ::close(fd);
      return Status::error(path + ": file is shorter than expected (truncated?)");
    }
    done += static_cast<uint64_t>(got);
  }
  ::close(fd);
  return Status::ok();
}

Status check_output_target(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return Status::ok();  // a new file (or a dangling link)
  if (S_ISDIR(st.st_mode)) return Status::error(path + ": is a folder; give a file's path");
  if (!S_ISREG(st.st_mode))
    return Status::error(path + ": exists and is not a regular file (a device, pipe or socket); "
                         "refusing to replace it");
  return Status::ok();
}

Status rename_replace(const std::string& src, const std::string& dst) {
  if (::rename(src.c_str(), dst.c_str()) != 0)
    return Status::error("cannot rename " + src + " to " + dst + ": " + errno_text());
  // Make the rename itself durable.
  std::string dir = std::filesystem::path(dst).parent_path().string();
  int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return Status::ok();
}

Status sync_file(const std::string& path) {
  int fd = open_for_reading(path);
  if (fd < 0) return Status::error(path + ": cannot open to sync: " + errno_text());
  int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return Status::error(path + ": fsync failed: " + errno_text());
  return Status::ok();
}

int process_id() { return static_cast<int>(::getpid()); }

bool process_alive(int pid) {
  if (pid <= 0) return false;
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;  // EPERM: exists, not ours
}

static std::string xdg_dir(const char* var, const char* fallback_under_home) {
  std::string base;
  if (const char* v = std::getenv(var); v && *v == '/') {
    base = v;
  } else {
    const char* home = std::getenv("HOME");
    base = std::string(home && *home ? home : "/tmp") + "/" + fallback_under_home;
  }
  std::string dir = base + "/magnetar";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  return dir;
}

std::string user_data_dir() { return xdg_dir("XDG_DATA_HOME", ".local/share"); }
std::string user_cache_dir() { return xdg_dir("XDG_CACHE_HOME", ".cache"); }

std::string user_models_dir() {
  const std::string dir = user_data_dir() + "/models";
  ::mkdir(dir.c_str(), 0755);  // best effort, like the data dir; callers report write errors
  return dir;
}

double now_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Both figures come from /proc/self/status, so peak >= current always holds (getrusage's
// ru_maxrss is updated lazily and can lag behind the current RSS).
static uint64_t proc_status_kib(const char* field) {
  std::ifstream f("/proc/self/status");
  std::string line;
  const size_t len = std::strlen(field);
  while (std::getline(f, line))
    if (line.compare(0, len, field) == 0) return std::strtoull(line.c_str() + len, nullptr, 10);
  return 0;
}

uint64_t current_resident_bytes() { return proc_status_kib("VmRSS:") * 1024; }

uint64_t peak_resident_bytes() {
  return std::max(proc_status_kib("VmHWM:"), proc_status_kib("VmRSS:")) * 1024;
}

double process_cpu_seconds() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

namespace {

bool read_int_file(const std::string& path, int* out) {
  std::ifstream f(path);
  return static_cast<bool>(f >> *out);
}

// The physical cores this process may run on, each as the set of its allowed logical CPUs
// (SMT siblings share one core's load ports: they add nothing to a bandwidth-bound decode).
// From sysfs topology; without it, every allowed CPU counts as a core.
const std::vector<cpu_set_t>& core_sets() {
  static const std::vector<cpu_set_t> cores = [] {
    std::vector<cpu_set_t> result;
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
      for (unsigned cpu = 0; cpu < std::max(1u, std::thread::hardware_concurrency()) && cpu < CPU_SETSIZE; ++cpu)
        CPU_SET(cpu, &allowed);
    std::vector<std::pair<std::pair<int, int>, int>> keyed;  // ((package, core), cpu)
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (!CPU_ISSET(cpu, &allowed)) continue;
      const std::string dir = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
      int package = 0, core = cpu;
      if (!read_int_file(dir + "physical_package_id", &package) || !read_int_file(dir + "core_id", &core))
        package = -1, core = cpu;  // unknown topology: a core of its own
      keyed.push_back({{package, core}, cpu});
    }
    std::sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    std::vector<std::pair<int, int>> seen;
    for (const auto& [key, cpu] : keyed) {
      auto it = std::find(seen.begin(), seen.end(), key);
      if (it == seen.end()) {
        seen.push_back(key);
        cpu_set_t set;
        CPU_ZERO(&set);
        result.push_back(set);
        it = seen.end() - 1;
      }
      CPU_SET(cpu, &result[static_cast<size_t>(it - seen.begin())]);
    }
    if (result.empty()) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(0, &set);
      result.push_back(set);
    }
    return result;
  }();
  return cores;
}

}  // namespace

int physical_cores() { return static_cast<int>(core_sets().size()); }

std::string cpu_brand() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "unknown CPU";
}

void set_current_thread_affinity(int core) {
  const auto& cores = core_sets();
  if (core < 0) return;
  cpu_set_t set = cores[static_cast<size_t>(core) % cores.size()];
  sched_setaffinity(0, sizeof(set), &set);
}

void wait_while_equal(const std::atomic<uint32_t>& word, uint32_t expected) {
  word.wait(expected, std::memory_order_seq_cst);
}
void wake_one(std::atomic<uint32_t>& word) { word.notify_one(); }
void wake_all(std::atomic<uint32_t>& word) { word.notify_all(); }

void* alloc_large(uint64_t bytes, bool huge_pages) {
  if (bytes == 0) bytes = 64;
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  // Small pages are asked for explicitly: with THP "always", the kernel would otherwise back
  // the first touch of a partly used buffer with a whole 2 MiB page.
  if (bytes >= kHugePage) ::madvise(p, bytes, huge_pages ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
  return p;
}

void discard_pages(void* p, uint64_t bytes) {
  if (p && bytes > 0) ::madvise(p, bytes, MADV_DONTNEED);
}

void free_large(void* p, uint64_t bytes) {
  if (p) ::munmap(p, bytes == 0 ? 64 : bytes);
}

}  // namespace magnetar::platform
