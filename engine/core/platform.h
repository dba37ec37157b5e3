// The only interface to the operating system. Implemented once per platform in
// platform_posix.cpp and platform_win32.cpp; nothing else in the engine includes OS headers.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <utility>

#include "magnetar/status.h"

namespace magnetar::platform {

// A whole file in memory, either mapped read-only or read into anonymous memory (with huge /
// large pages requested where the OS offers them). data is 64-byte aligned in both cases.
class FileBuffer {
 public:
  enum class Mode { Read, Map };
  FileBuffer() = default;
  ~FileBuffer() { close(); }
  FileBuffer(FileBuffer&& other) noexcept { *this = std::move(other); }
  // Platform-independent: only open() and close() know how the memory was obtained.
  FileBuffer& operator=(FileBuffer&& other) noexcept {
    if (this != &other) {
      close();
      data_ = other.data_;
      size_ = other.size_;
      mapped_bytes_ = other.mapped_bytes_;
      mode_ = other.mode_;
      huge_pages_ = other.huge_pages_;
      handle_ = other.handle_;
      other.data_ = nullptr;
      other.size_ = 0;
      other.mapped_bytes_ = 0;
      other.huge_pages_ = false;
      other.handle_ = nullptr;
    }
    return *this;
  }
  FileBuffer(const FileBuffer&) = delete;
  FileBuffer& operator=(const FileBuffer&) = delete;

  // progress(done, total) is called while reading; cancel (if set) aborts with an error.
  using Progress = void (*)(void* ctx, uint64_t done, uint64_t total);
  Status open(const std::string& path, Mode mode, Progress progress = nullptr,
              void* progress_ctx = nullptr, const std::atomic<bool>* cancel = nullptr);
  void close();

  const uint8_t* data() const { return data_; }
  // Read mode: the process's own copy, which load-time steps may rearrange (ops::stripe_in_place).
  // Map mode: nullptr — the pages belong to the file.
  uint8_t* writable_data() { return mode_ == Mode::Read ? const_cast<uint8_t*>(data_) : nullptr; }
  uint64_t size() const { return size_; }
  Mode mode() const { return mode_; }
  bool huge_pages() const { return huge_pages_; }

 private:
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  uint64_t mapped_bytes_ = 0;  // bytes reserved (Read mode rounds up to the page size)
  Mode mode_ = Mode::Read;
  bool huge_pages_ = false;
  void* handle_ = nullptr;  // platform-specific (Win32 mapping handle)
};

// Size of a file, or an error naming it.
Status file_size(const std::string& path, uint64_t* out);
// Reads up to `bytes` from `offset`; *read_bytes tells how many arrived.
Status read_file_range(const std::string& path, uint64_t offset, void* dst, uint64_t bytes);

// An output path that exists must be a regular file (symlinks judged by their target): a device,
// FIFO, socket or folder is refused, since a temp-then-rename write would replace it.
Status check_output_target(const std::string& path);
// Atomic replace: rename src onto dst (replacing dst if present).
Status rename_replace(const std::string& src, const std::string& dst);
// fsync a file by path (best effort on platforms without it).
Status sync_file(const std::string& path);
int process_id();
// Whether a process with this id runs now (stale "<file>.tmp-<pid>" detection). Ids are reused,
// so a dead writer's file may survive until that id is free again; a live one is never touched.
bool process_alive(int pid);

// Per-user directories (created if missing): XDG_DATA_HOME/magnetar | %APPDATA%\Magnetar,
// XDG_CACHE_HOME/magnetar | %LOCALAPPDATA%\Magnetar\cache.
std::string user_data_dir();
std::string user_cache_dir();
// Where the app keeps converted models: user_data_dir()/models on Linux, but
// %LOCALAPPDATA%\Magnetar\models on Windows (multi-GB files must not roam with %APPDATA%).
std::string user_models_dir();

double now_seconds();  // monotonic, high resolution
uint64_t current_resident_bytes();
uint64_t peak_resident_bytes();
double process_cpu_seconds();  // user + system CPU time of this process
// Physical cores this process may run on (>= 1; SMT siblings count once). The default thread
// count and the bandwidth probe's thread counts both come from here.
int physical_cores();
std::string cpu_brand();
// Pins the calling thread to physical core `core` (mod physical_cores()), any of its SMT
// siblings; best effort.
void set_current_thread_affinity(int core);

// Futex-style sleeping on a 32-bit atomic (the thread pool's idle wait): wait_while_equal blocks
// while word == expected and may return spuriously (callers re-check); wake_* wake sleepers.
// Linux: std::atomic::wait (a futex). Windows: WaitOnAddress — libstdc++'s std::atomic::wait on
// mingw-w64 (GCC 12) loses wake-ups and deadlocks (GCC bug 106183).
void wait_while_equal(const std::atomic<uint32_t>& word, uint32_t expected);
void wake_one(std::atomic<uint32_t>& word);
void wake_all(std::atomic<uint32_t>& word);

// Anonymous memory for large buffers (KV cache, scratch): 64-byte aligned, zeroed. Huge pages are
// requested when bytes is large and huge_pages is set; scratch that is touched only in part
// (a batch buffer during decode) asks for small pages so that only what is used is resident.
void* alloc_large(uint64_t bytes, bool huge_pages = true);
void free_large(void* p, uint64_t bytes);
// Gives the physical pages of [p, p + bytes) (from alloc_large(..., false)) back to the OS: the
// range stays valid, its contents are undefined afterwards (zeros on Linux). For scratch only.
void discard_pages(void* p, uint64_t bytes);

}  // namespace magnetar::platform
