// A minimal GGUF v3 writer for tests: key/values and tensors appended in order, 32-byte
// alignment. Payloads are raw little-endian bytes built with u32/u64/str.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "convert/gguf_reader.h"

namespace magnetar::test {

class GgufWriter {
 public:
  static std::string u32(uint32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); }
  static std::string u64(uint64_t v) { return std::string(reinterpret_cast<const char*>(&v), 8); }
  static std::string str(std::string_view s) { return u64(s.size()) + std::string(s); }
  void kv(const std::string& key, gguf::ValueType type, const std::string& payload) {
    kvs_ += str(key) + u32(uint32_t(type)) + payload;
    ++n_kv_;
  }
  void tensor(const std::string& name, std::vector<uint64_t> ne, gguf::TensorType type, const std::string& data) {
    infos_ += str(name) + u32(uint32_t(ne.size()));
    for (uint64_t d : ne) infos_ += u64(d);
    infos_ += u32(uint32_t(type)) + u64(data_.size());
    data_ += data;
    while (data_.size() % 32 != 0) data_ += '\0';
    ++n_tensors_;
  }
  std::string finish() const {
    std::string out = "GGUF" + u32(3) + u64(n_tensors_) + u64(n_kv_) + kvs_ + infos_;
    while (out.size() % 32 != 0) out += '\0';
    return out + data_;
  }

 private:
  std::string kvs_, infos_, data_;
  uint64_t n_kv_ = 0, n_tensors_ = 0;
};

// An array of strings as a GGUF array payload.
inline std::string gguf_string_array(const std::vector<std::string_view>& items) {
  std::string payload = GgufWriter::u32(uint32_t(gguf::ValueType::String)) + GgufWriter::u64(items.size());
  for (std::string_view s : items) payload += GgufWriter::str(s);
  return payload;
}

}  // namespace magnetar::test
