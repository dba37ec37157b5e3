// Converter input files: see input_file.h.
#include "convert/input_file.h"

#include <system_error>

namespace magnetar::convert {

namespace fs = std::filesystem;

fs::path utf8_path(const std::string& s) { return fs::path(std::u8string(s.begin(), s.end())); }

std::string path_string(const fs::path& p) {
  std::u8string u = p.u8string();
  return std::string(u.begin(), u.end());
}

bool is_regular_file(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(utf8_path(path), ec);
}

bool is_directory(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(utf8_path(path), ec);
}

std::string join_path(const std::string& dir, const std::string& name) {
  return path_string(utf8_path(dir) / utf8_path(name));
}

std::string file_name(const std::string& path) {
  return path_string(utf8_path(path).filename());
}

std::string parent_dir(const std::string& path) {
  fs::path p = utf8_path(path).parent_path();
  return p.empty() ? std::string(".") : path_string(p);
}

Status read_small_file(const std::string& path, uint64_t max_bytes, std::string* out) {
  InputFile f;
  MAGNETAR_TRY(f.open(path));
  if (f.size() > max_bytes)
    return Status::error(path + ": " + std::to_string(f.size()) + " bytes, larger than the " +
                         std::to_string(max_bytes) + " this file may have");
  out->assign(f.size(), '\0');
  return f.read_at(0, out->data(), f.size());
}

Status InputFile::open(const std::string& path) {
  path_ = path;
  std::error_code ec;
  fs::path p = utf8_path(path);
  if (!fs::is_regular_file(p, ec)) return Status::error(path + ": not found or not a file");
  size_ = fs::file_size(p, ec);
  if (ec) return Status::error(path + ": cannot read its size: " + ec.message());
  in_.open(p, std::ios::binary | std::ios::in);
  if (!in_.is_open()) return Status::error(path + ": cannot open for reading");
  return Status::ok();
}

Status InputFile::read_at(uint64_t offset, void* dst, uint64_t bytes) {
  if (offset > size_ || bytes > size_ - offset)
    return Status::error(path_ + ": truncated: needs bytes up to " +
                         std::to_string(offset + bytes) + " but the file has " +
                         std::to_string(size_));
  in_.clear();
  in_.seekg(static_cast<std::streamoff>(offset));
  in_.read(static_cast<char*>(dst), static_cast<std::streamsize>(bytes));
  if (static_cast<uint64_t>(in_.gcount()) != bytes)
    return Status::error(path_ + ": read failed at offset " + std::to_string(offset) +
                         " (file truncated while reading?)");
  return Status::ok();
}

}  // namespace magnetar::convert
