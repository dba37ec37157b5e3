// Win32 implementation of core/platform.h (the POSIX twin is platform_posix.cpp). This is the
// only engine file that includes <windows.h>. Paths arrive as UTF-8 and are converted to UTF-16
// for the wide (W) APIs; everything handed back is UTF-8 again.
//
// Index: 1. UTF-8 <-> UTF-16 and error text   2. memory (large pages)   3. FileBuffer
//        4. whole-file helpers   5. directories   6. clocks, memory, CPU queries, waiting
#include "core/platform.h"

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
// PSAPI v2 maps GetProcessMemoryInfo to kernel32's K32GetProcessMemoryInfo: no psapi.lib needed.
#define PSAPI_VERSION 2
#include <psapi.h>
#include <shlobj.h>

#ifdef _MSC_VER
#include <intrin.h>
#else
#include <cpuid.h>
#endif

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <utility>
#include <vector>

namespace magnetar::platform {
namespace {

// ---------------------------------------------------------------------------------------------
// 1. UTF-8 <-> UTF-16 and error text
// ---------------------------------------------------------------------------------------------

// UTF-8 -> UTF-16; false if the bytes are not valid UTF-8.
bool widen(const std::string& utf8, std::wstring* out) {
  out->clear();
  if (utf8.empty()) return true;
  const int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, utf8.data(),
                                    static_cast<int>(utf8.size()), nullptr, 0);
  if (n <= 0) return false;
  out->resize(static_cast<size_t>(n));
  return MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, utf8.data(),
                             static_cast<int>(utf8.size()), out->data(), n) == n;
}

std::string narrow(const wchar_t* wide, size_t length) {
  if (length == 0) return {};
  const int n = WideCharToMultiByte(CP_UTF8, 0, wide, static_cast<int>(length), nullptr, 0,
                                    nullptr, nullptr);
  if (n <= 0) return {};
  std::string out(static_cast<size_t>(n), '\0');
  WideCharToMultiByte(CP_UTF8, 0, wide, static_cast<int>(length), out.data(), n, nullptr,
                      nullptr);
  return out;
}
std::string narrow(const std::wstring& wide) { return narrow(wide.data(), wide.size()); }

// A UTF-8 path in the form the wide APIs take: backslashes, and the \\?\ prefix on long
// absolute paths so that MAX_PATH (260) does not apply.
bool to_native_path(const std::string& utf8, std::wstring* out) {
  if (!widen(utf8, out)) return false;
  std::replace(out->begin(), out->end(), L'/', L'\\');
  const bool drive_absolute = out->size() >= 3 && (*out)[1] == L':' && (*out)[2] == L'\\';
  if (drive_absolute && out->size() >= MAX_PATH && out->find(L"\\..\\") == std::wstring::npos &&
      out->find(L"\\.\\") == std::wstring::npos) {
    out->insert(0, L"\\\\?\\");
  }
  return true;
}

// "what 'path': system message" for the calling thread's last error.
Status last_error(const char* what, const std::string& path) {
  const DWORD code = GetLastError();
  wchar_t* buffer = nullptr;
  const DWORD length = FormatMessageW(
      FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS,
      nullptr, code, 0, reinterpret_cast<wchar_t*>(&buffer), 0, nullptr);
  std::string message = length ? narrow(buffer, length) : "error " + std::to_string(code);
  if (buffer) LocalFree(buffer);
  while (!message.empty() && (message.back() == '\n' || message.back() == '\r' ||
                              message.back() == ' ' || message.back() == '.')) {
    message.pop_back();
  }
  return Status::error(std::string(what) + " '" + path + "': " + message);
}

Status invalid_path(const std::string& path) {
  return Status::error("path is not valid UTF-8: '" + path + "'");
}

// Closes a HANDLE when it goes out of scope.
struct HandleCloser {
  HANDLE handle = INVALID_HANDLE_VALUE;
  ~HandleCloser() {
    if (handle != INVALID_HANDLE_VALUE && handle != nullptr) CloseHandle(handle);
  }
};

HANDLE open_for_reading(const std::wstring& path, DWORD flags) {
  return CreateFileW(path.c_str(), GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_DELETE, nullptr,
                     OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL | flags, nullptr);
}

// ---------------------------------------------------------------------------------------------
// 2. Memory: VirtualAlloc, with large pages when the account holds SeLockMemoryPrivilege
// ---------------------------------------------------------------------------------------------

constexpr uint64_t kLargeRequestBytes = 2ull << 20;  // smaller requests never ask for large pages

// Large pages need SeLockMemoryPrivilege ("Lock pages in memory"), which administrators grant
// per account; it must also be enabled in the process token. Returns the large page size, or 0
// when large pages are unavailable. Decided once per process.
uint64_t large_page_bytes() {
  static const uint64_t bytes = [] {
    const SIZE_T minimum = GetLargePageMinimum();
    if (minimum == 0) return uint64_t{0};
    HANDLE token = nullptr;
    if (!OpenProcessToken(GetCurrentProcess(), TOKEN_ADJUST_PRIVILEGES | TOKEN_QUERY, &token)) {
      return uint64_t{0};
    }
    TOKEN_PRIVILEGES privileges = {};
    privileges.PrivilegeCount = 1;
    privileges.Privileges[0].Attributes = SE_PRIVILEGE_ENABLED;
    bool granted = false;
    if (LookupPrivilegeValueW(nullptr, L"SeLockMemoryPrivilege",
                              &privileges.Privileges[0].Luid) &&
        AdjustTokenPrivileges(token, FALSE, &privileges, 0, nullptr, nullptr)) {
      granted = GetLastError() == ERROR_SUCCESS;  // ERROR_NOT_ALL_ASSIGNED: not held
    }
    CloseHandle(token);
    return granted ? static_cast<uint64_t>(minimum) : uint64_t{0};
  }();
  return bytes;
}

// Zeroed, 64 KiB-aligned memory. *reserved_bytes is what free needs; *large tells whether large
// pages were obtained (they can fail for lack of contiguous memory: then normal pages).
void* alloc_pages(uint64_t bytes, uint64_t* reserved_bytes, bool* large, bool try_large = true) {
  *large = false;
  *reserved_bytes = 0;
  if (bytes == 0) bytes = 1;
  if (const uint64_t page = large_page_bytes(); try_large && page && bytes >= kLargeRequestBytes) {
    const uint64_t rounded = (bytes + page - 1) / page * page;
    if (void* p = VirtualAlloc(nullptr, static_cast<SIZE_T>(rounded),
                               MEM_RESERVE | MEM_COMMIT | MEM_LARGE_PAGES, PAGE_READWRITE)) {
      *large = true;
      *reserved_bytes = rounded;
      return p;
    }
  }
  SYSTEM_INFO info;
  GetSystemInfo(&info);
  const uint64_t page = info.dwPageSize;
  const uint64_t rounded = (bytes + page - 1) / page * page;
  void* p = VirtualAlloc(nullptr, static_cast<SIZE_T>(rounded), MEM_RESERVE | MEM_COMMIT,
                         PAGE_READWRITE);
  if (p) *reserved_bytes = rounded;
  return p;
}

// ---------------------------------------------------------------------------------------------
// 6 (helpers). Processor topology: one entry per physical core, the logical processors it owns
// within this process's affinity mask.
// ---------------------------------------------------------------------------------------------

const std::vector<ULONG_PTR>& core_masks() {
  static const std::vector<ULONG_PTR> masks = [] {
    std::vector<ULONG_PTR> result;
    DWORD_PTR process_mask = 0, system_mask = 0;
    if (!GetProcessAffinityMask(GetCurrentProcess(), &process_mask, &system_mask)) {
      process_mask = ~DWORD_PTR{0};
    }
    DWORD length = 0;
    GetLogicalProcessorInformation(nullptr, &length);
    std::vector<SYSTEM_LOGICAL_PROCESSOR_INFORMATION> info(
        length / sizeof(SYSTEM_LOGICAL_PROCESSOR_INFORMATION) + 1);
    length = static_cast<DWORD>(info.size() * sizeof(info[0]));
    if (GetLogicalProcessorInformation(info.data(), &length)) {
      info.resize(length / sizeof(info[0]));
      for (const auto& entry : info) {
        if (entry.Relationship != RelationProcessorCore) continue;
        if (const ULONG_PTR usable = entry.ProcessorMask & process_mask) result.push_back(usable);
      }
    }
    if (result.empty()) {  // topology unknown: every allowed logical processor is a core
      for (int bit = 0; bit < static_cast<int>(sizeof(ULONG_PTR) * 8); ++bit) {
        if (process_mask & (ULONG_PTR{1} << bit)) result.push_back(ULONG_PTR{1} << bit);
      }
    }
    if (result.empty()) result.push_back(1);
    return result;
  }();
  return masks;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// 3. FileBuffer: Map = a read-only view of a file mapping; Read = VirtualAlloc'd copy
// ---------------------------------------------------------------------------------------------

void FileBuffer::close() {
  if (data_) {
    if (mode_ == Mode::Map) {
      UnmapViewOfFile(data_);
    } else {
      VirtualFree(const_cast<uint8_t*>(data_), 0, MEM_RELEASE);
    }
  }
  if (handle_) CloseHandle(static_cast<HANDLE>(handle_));
  data_ = nullptr;
  size_ = 0;
  mapped_bytes_ = 0;
  huge_pages_ = false;
  handle_ = nullptr;
}

Status FileBuffer::open(const std::string& path, Mode mode, Progress progress, void* progress_ctx,
                        const std::atomic<bool>* cancel) {
  close();
  mode_ = mode;
  std::wstring wide;
  if (!to_native_path(path, &wide)) return invalid_path(path);

  const DWORD attributes = GetFileAttributesW(wide.c_str());
  if (attributes != INVALID_FILE_ATTRIBUTES && (attributes & FILE_ATTRIBUTE_DIRECTORY)) {
    return Status::error("not a regular file: '" + path + "'");
  }
  HandleCloser file;
  file.handle = open_for_reading(wide, mode == Mode::Read ? FILE_FLAG_SEQUENTIAL_SCAN : 0);
  if (file.handle == INVALID_HANDLE_VALUE) return last_error("cannot open", path);
  LARGE_INTEGER size;
  if (!GetFileSizeEx(file.handle, &size)) return last_error("cannot get the size of", path);
  const uint64_t bytes = static_cast<uint64_t>(size.QuadPart);
  if (bytes == 0) return Status::error("file is empty: '" + path + "'");
  if (bytes > static_cast<uint64_t>(SIZE_MAX)) {
    return Status::error("file too large for this process: '" + path + "'");
  }

  if (mode == Mode::Map) {
    HANDLE mapping = CreateFileMappingW(file.handle, nullptr, PAGE_READONLY, 0, 0, nullptr);
    if (!mapping) return last_error("cannot map", path);
    const void* view = MapViewOfFile(mapping, FILE_MAP_READ, 0, 0, 0);
    if (!view) {
      Status status = last_error("cannot map a view of", path);
      CloseHandle(mapping);
      return status;
    }
    data_ = static_cast<const uint8_t*>(view);
    size_ = bytes;
    mapped_bytes_ = bytes;
    handle_ = mapping;  // the mapping keeps the file open; its own handle closes now
    // Touch every page once so the first token does not pay the page faults.
    constexpr uint64_t kReportBytes = 64ull << 20;
    const volatile uint8_t* touch = data_;
    for (uint64_t offset = 0; offset < bytes; offset += 4096) {
      (void)touch[offset];
      if ((offset & (kReportBytes - 1)) == 0) {
        if (cancel && *cancel) {
          close();
          return Status::error("cancelled loading '" + path + "'");
        }
        if (progress) progress(progress_ctx, offset, bytes);
      }
    }
    if (progress) progress(progress_ctx, bytes, bytes);
    return Status::ok();
  }

  uint64_t reserved = 0;
  bool large = false;
  auto* buffer = static_cast<uint8_t*>(alloc_pages(bytes, &reserved, &large));
  if (!buffer) {
    return Status::error("out of memory reading '" + path + "' (" + std::to_string(bytes) +
                         " bytes)");
  }
  constexpr uint64_t kChunkBytes = 16ull << 20;  // progress and cancel granularity
  uint64_t done = 0;
  while (done < bytes) {
    if (cancel && cancel->load(std::memory_order_relaxed)) {
      VirtualFree(buffer, 0, MEM_RELEASE);
      return Status::error("cancelled reading '" + path + "'");
    }
    const DWORD want = static_cast<DWORD>(std::min(kChunkBytes, bytes - done));
    DWORD got = 0;
    if (!ReadFile(file.handle, buffer + done, want, &got, nullptr)) {
      Status status = last_error("cannot read", path);
      VirtualFree(buffer, 0, MEM_RELEASE);
      return status;
    }
    if (got == 0) {
      VirtualFree(buffer, 0, MEM_RELEASE);
      return Status::error("file shrank while reading '" + path + "'");
    }
    done += got;
    if (progress) progress(progress_ctx, done, bytes);
  }
  data_ = buffer;
  size_ = bytes;
  mapped_bytes_ = reserved;
  huge_pages_ = large;
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// 4. Whole-file helpers
// ---------------------------------------------------------------------------------------------

Status file_size(const std::string& path, uint64_t* out) {
  std::wstring wide;
  if (!to_native_path(path, &wide)) return invalid_path(path);
  WIN32_FILE_ATTRIBUTE_DATA attributes;
  if (!GetFileAttributesExW(wide.c_str(), GetFileExInfoStandard, &attributes)) {
    return last_error("cannot stat", path);
  }
  if (attributes.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) {
    return Status::error("is a directory, not a file: '" + path + "'");
  }
  *out = (static_cast<uint64_t>(attributes.nFileSizeHigh) << 32) | attributes.nFileSizeLow;
  return Status::ok();
}

Status read_file_range(const std::string& path, uint64_t offset, void* dst, uint64_t bytes) {
  std::wstring wide;
  if (!to_native_path(path, &wide)) return invalid_path(path);
  HandleCloser file;
  file.handle = open_for_reading(wide, 0);
  if (file.handle == INVALID_HANDLE_VALUE) return last_error("cannot open", path);
  auto* out = static_cast<uint8_t*>(dst);
  uint64_t done = 0;
  while (done < bytes) {
    OVERLAPPED at = {};
    const uint64_t position = offset + done;
    at.Offset = static_cast<DWORD>(position);
    at.OffsetHigh = static_cast<DWORD>(position >> 32);
    const DWORD want = static_cast<DWORD>(std::min<uint64_t>(bytes - done, 1u << 30));
    DWORD got = 0;
    if (!ReadFile(file.handle, out + done, want, &got, &at)) {
      if (GetLastError() == ERROR_HANDLE_EOF) break;
      return last_error("cannot read", path);
    }
    if (got == 0) break;
    done += got;
  }
  if (done < bytes) {
    return Status::error("unexpected end of file in '" + path + "': wanted " +
                         std::to_string(bytes) + " bytes at offset " + std::to_string(offset) +
                         ", got " + std::to_string(done));
  }
  return Status::ok();
}

Status rename_replace(const std::string& src, const std::string& dst) {
  std::wstring wide_src, wide_dst;
  if (!to_native_path(src, &wide_src)) return invalid_path(src);
  if (!to_native_path(dst, &wide_dst)) return invalid_path(dst);
  if (!MoveFileExW(wide_src.c_str(), wide_dst.c_str(),
                   MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH)) {
    return last_error("cannot rename", src).with_context("replacing '" + dst + "'");
  }
  return Status::ok();
}

Status sync_file(const std::string& path) {
  std::wstring wide;
  if (!to_native_path(path, &wide)) return invalid_path(path);
  const DWORD attributes = GetFileAttributesW(wide.c_str());
  if (attributes == INVALID_FILE_ATTRIBUTES) return last_error("cannot sync", path);
  // Directories cannot be flushed on Windows; NTFS journals the rename itself.
  if (attributes & FILE_ATTRIBUTE_DIRECTORY) return Status::ok();
  HandleCloser file;
  // FlushFileBuffers needs write access.
  file.handle = CreateFileW(wide.c_str(), GENERIC_WRITE,
                            FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr,
                            OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, nullptr);
  if (file.handle == INVALID_HANDLE_VALUE) return last_error("cannot open for sync", path);
  if (!FlushFileBuffers(file.handle)) return last_error("cannot flush", path);
  return Status::ok();
}

Status check_output_target(const std::string& path) {
  std::wstring native;
  if (!widen(path, &native)) return Status::error(path + ": the path is not valid UTF-8");
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(std::filesystem::path(native), ec);
  if (ec || !std::filesystem::exists(st)) return Status::ok();  // a new file
  if (std::filesystem::is_directory(st)) return Status::error(path + ": is a folder; give a file's path");
  if (!std::filesystem::is_regular_file(st))
    return Status::error(path + ": exists and is not a regular file (a device or pipe); refusing to "
                         "replace it");
  return Status::ok();
}

int process_id() { return static_cast<int>(GetCurrentProcessId()); }

bool process_alive(int pid) {
  if (pid <= 0) return false;
  HANDLE process = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, static_cast<DWORD>(pid));
  if (!process) return GetLastError() == ERROR_ACCESS_DENIED;  // exists, but not ours to query
  DWORD code = 0;
  const bool running = GetExitCodeProcess(process, &code) && code == STILL_ACTIVE;
  CloseHandle(process);
  return running;
}

// ---------------------------------------------------------------------------------------------
// 5. Per-user directories
// ---------------------------------------------------------------------------------------------

namespace {

// %APPDATA% / %LOCALAPPDATA% when set (so a user or a test can redirect them, as XDG_* does on
// Linux), else the known folder from the shell.
std::wstring known_folder(const wchar_t* variable, REFKNOWNFOLDERID id) {
  wchar_t value[32768];
  const DWORD length = GetEnvironmentVariableW(variable, value, 32768);
  if (length > 0 && length < 32768) return std::wstring(value, length);
  wchar_t* path = nullptr;
  std::wstring result;
  if (SUCCEEDED(SHGetKnownFolderPath(id, KF_FLAG_CREATE, nullptr, &path)) && path) result = path;
  CoTaskMemFree(path);
  if (result.empty()) {  // no profile at all (service accounts): beside the temp directory
    wchar_t temp[MAX_PATH + 1];
    const DWORD n = GetTempPathW(MAX_PATH + 1, temp);
    result.assign(temp, n);
  }
  return result;
}

std::string make_user_dir(const std::wstring& base, const wchar_t* relative) {
  std::filesystem::path dir = std::filesystem::path(base) / relative;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);  // best effort; callers report write errors
  return narrow(dir.wstring());
}

}  // namespace

std::string user_data_dir() {
  return make_user_dir(known_folder(L"APPDATA", FOLDERID_RoamingAppData), L"Magnetar");
}

std::string user_cache_dir() {
  return make_user_dir(known_folder(L"LOCALAPPDATA", FOLDERID_LocalAppData), L"Magnetar\\cache");
}

std::string user_models_dir() {
  return make_user_dir(known_folder(L"LOCALAPPDATA", FOLDERID_LocalAppData), L"Magnetar\\models");
}

// ---------------------------------------------------------------------------------------------
// 6. Clocks, memory, CPU queries
// ---------------------------------------------------------------------------------------------

double now_seconds() {
  static const double seconds_per_tick = [] {
    LARGE_INTEGER frequency;
    QueryPerformanceFrequency(&frequency);
    return 1.0 / static_cast<double>(frequency.QuadPart);
  }();
  LARGE_INTEGER counter;
  QueryPerformanceCounter(&counter);
  return static_cast<double>(counter.QuadPart) * seconds_per_tick;
}

uint64_t current_resident_bytes() {
  PROCESS_MEMORY_COUNTERS counters = {};
  counters.cb = sizeof(counters);
  if (!GetProcessMemoryInfo(GetCurrentProcess(), &counters, sizeof(counters))) return 0;
  return counters.WorkingSetSize;
}

uint64_t peak_resident_bytes() {
  PROCESS_MEMORY_COUNTERS counters = {};
  counters.cb = sizeof(counters);
  if (!GetProcessMemoryInfo(GetCurrentProcess(), &counters, sizeof(counters))) return 0;
  return counters.PeakWorkingSetSize;
}

double process_cpu_seconds() {
  FILETIME created, exited, kernel, user;
  if (!GetProcessTimes(GetCurrentProcess(), &created, &exited, &kernel, &user)) return 0.0;
  auto ticks = [](const FILETIME& t) {  // 100 ns units
    return (static_cast<uint64_t>(t.dwHighDateTime) << 32) | t.dwLowDateTime;
  };
  return static_cast<double>(ticks(kernel) + ticks(user)) * 1e-7;
}

int physical_cores() { return static_cast<int>(core_masks().size()); }

std::string cpu_brand() {
  unsigned int regs[12] = {};
  auto cpuid = [](unsigned int leaf, unsigned int* out) {
#ifdef _MSC_VER
    int r[4];
    __cpuid(r, static_cast<int>(leaf));
    std::memcpy(out, r, sizeof(r));
#else
    __cpuid(leaf, out[0], out[1], out[2], out[3]);
#endif
  };
  unsigned int top[4];
  cpuid(0x80000000u, top);
  if (top[0] < 0x80000004u) return "unknown x86-64 CPU";
  for (unsigned int i = 0; i < 3; ++i) cpuid(0x80000002u + i, regs + 4 * i);
  char text[49] = {};
  std::memcpy(text, regs, 48);
  std::string brand(text);
  const size_t first = brand.find_first_not_of(' ');
  if (first == std::string::npos) return "unknown x86-64 CPU";
  brand = brand.substr(first, brand.find_last_not_of(' ') - first + 1);
  return brand;
}

void set_current_thread_affinity(int core) {
  const auto& cores = core_masks();
  if (core < 0) return;
  SetThreadAffinityMask(GetCurrentThread(), cores[static_cast<size_t>(core) % cores.size()]);
}

// std::atomic<uint32_t> is a plain 32-bit word: WaitOnAddress compares and sleeps on it directly.
void wait_while_equal(const std::atomic<uint32_t>& word, uint32_t expected) {
  WaitOnAddress(const_cast<std::atomic<uint32_t>*>(&word), &expected, sizeof(uint32_t), INFINITE);
}
void wake_one(std::atomic<uint32_t>& word) { WakeByAddressSingle(&word); }
void wake_all(std::atomic<uint32_t>& word) { WakeByAddressAll(&word); }

void* alloc_large(uint64_t bytes, bool huge_pages) {
  uint64_t reserved = 0;
  bool large = false;
  return alloc_pages(bytes, &reserved, &large, huge_pages);
}

void discard_pages(void* p, uint64_t bytes) {
  if (!p || bytes == 0) return;
  // MEM_RESET: the contents may be dropped instead of paged out; unlocking a range that is not
  // locked then takes its pages out of the working set (the documented idiom). The range stays
  // committed, so nothing can fail later; large pages ignore both.
  if (VirtualAlloc(p, static_cast<SIZE_T>(bytes), MEM_RESET, PAGE_READWRITE))
    VirtualUnlock(p, static_cast<SIZE_T>(bytes));
}

void free_large(void* p, uint64_t /*bytes*/) {
  if (p) VirtualFree(p, 0, MEM_RELEASE);
}

}  // namespace magnetar::platform
