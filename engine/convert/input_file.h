// Random-access reading of converter inputs (safetensors shards, llama2.c checkpoints, JSON and
// tokenizer files) through std::filesystem, so UTF-8 paths work on every platform. Every error
// names the file.
#pragma once
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "magnetar/status.h"

namespace magnetar::convert {

std::filesystem::path utf8_path(const std::string& s);
std::string path_string(const std::filesystem::path& p);  // UTF-8
bool is_regular_file(const std::string& path);
bool is_directory(const std::string& path);
std::string join_path(const std::string& dir, const std::string& name);
std::string file_name(const std::string& path);  // last component
std::string parent_dir(const std::string& path);

// Whole small file (config JSON, tokenizer); refuses files larger than max_bytes.
Status read_small_file(const std::string& path, uint64_t max_bytes, std::string* out);

class InputFile {
 public:
  Status open(const std::string& path);
  const std::string& path() const { return path_; }
  uint64_t size() const { return size_; }
  // Exactly `bytes` bytes at `offset`, or an error saying the file is truncated.
  Status read_at(uint64_t offset, void* dst, uint64_t bytes);

 private:
  std::string path_;
  std::ifstream in_;
  uint64_t size_ = 0;
};

}  // namespace magnetar::convert
