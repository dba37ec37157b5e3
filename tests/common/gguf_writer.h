// A GGUF v3 file built in memory, for tests: key/value pairs and tensors in the order given,
// 32-byte aligned data. Enough of the format to write what llama.cpp's converter writes.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "convert/gguf_reader.h"

namespace magnetar {

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

}  // namespace magnetar
