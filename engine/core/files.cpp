// The file helpers of magnetar/system.h that the app shares with the engine: UTF-8 paths to
// std::filesystem and back, and the atomic replacement every save goes through. Portable: the
// OS-specific parts are platform::sync_file and platform::rename_replace.
#include <filesystem>
#include <fstream>

#include "core/platform.h"
#include "magnetar/system.h"

namespace magnetar {

std::filesystem::path to_path(const std::string& utf8) {
  return std::filesystem::path(std::u8string(utf8.begin(), utf8.end()));
}

std::string from_path(const std::filesystem::path& path) {
  const std::u8string u8 = path.u8string();
  return std::string(u8.begin(), u8.end());
}

Status write_file_atomically(const std::string& path, std::string_view bytes) {
  // A device, FIFO or directory at `path` must not be replaced by a regular file.
  MAGNETAR_TRY(platform::check_output_target(path));
  // The process id keeps two processes saving the same file (two app windows, a bench and the
  // app) from writing into one temporary file.
  const std::string temp = path + ".tmp-" + std::to_string(platform::process_id());
  auto discard = [&] {
    std::error_code ignored;
    std::filesystem::remove(to_path(temp), ignored);
  };
  {
    std::ofstream out(to_path(temp), std::ios::binary | std::ios::trunc);
    if (!out) return Status::error("cannot create " + temp);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      discard();
      return Status::error("cannot write " + temp + " (disk full?)");
    }
  }
  // On disk before the rename: a crash then leaves the old file or the whole new one.
  if (Status synced = platform::sync_file(temp); !synced) {
    discard();
    return synced;
  }
  Status renamed = platform::rename_replace(temp, path);
  if (!renamed) discard();
  return renamed;
}

}  // namespace magnetar
