// Helpers for the converter tests: reading a converted model file's header, table and tensors;
// reading safetensors sources independently of the converter; copying and altering test folders.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "format/model_format.h"

namespace magnetar::test {

// A model file read whole: header, table and raw bytes, checked only for what the tests need.
struct ModelFile {
  std::string bytes;
  format::FileHeader header{};
  std::vector<format::TensorEntry> table;
  const format::TensorEntry* find(const std::string& name) const;
  // Tensor values widened to float (F32 or F16 tensors).
  std::vector<float> values(const std::string& name) const;
  std::string raw(const std::string& name) const;
  std::string tokenizer() const;
  std::string chat_template() const;
};
bool load_model_file(const std::string& path, ModelFile* out, std::string* error);

// A safetensors tensor, widened to float.
struct SourceTensor {
  std::string dtype;
  std::vector<uint64_t> shape;
  std::vector<float> values;
};
// Reads `name` from a folder's model.safetensors or its shards (via the index).
bool read_source_tensor(const std::string& folder, const std::string& name, SourceTensor* out);

float half_to_float(uint16_t h);  // independent of the converter's conversion

void write_file(const std::string& path, const std::string& bytes);
// Copies the files of `src` into a new folder `dst` (writable copies).
void copy_folder(const std::string& src, const std::string& dst);
// Rewrites a safetensors file's JSON header through `edit` (the data section is kept).
void edit_safetensors_header(const std::string& path, const std::function<void(nlohmann::json&)>& edit);
// Overwrites the 8-byte header length of a safetensors file.
void set_safetensors_header_length(const std::string& path, uint64_t length);
std::vector<std::string> list_dir(const std::string& dir);

}  // namespace magnetar::test
