// Safetensors reader for the converter: parses and validates a file's JSON header (length,
// dtypes, shapes against byte ranges, ranges inside the file, no overlaps) and a sharded
// folder's model.safetensors.index.json. Tensor data itself is read later, chunk by chunk.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "magnetar/status.h"

namespace magnetar::convert {

// Element types of source tensors. Blocks: a GGUF block-quantized tensor, whose type is a
// format::DType (convert::SourceRange::block_type), rows of whole blocks.
enum class SourceDType { F32, F16, BF16, Blocks, Other };
uint64_t source_dtype_bytes(SourceDType t);  // per element; 0 for Other and Blocks

struct SafetensorsTensor {
  std::string name;
  std::string dtype_name;  // as written in the header ("BF16", "I8", ...)
  SourceDType dtype = SourceDType::Other;
  std::vector<uint64_t> shape;
  uint64_t data_offset = 0;  // absolute offset in the file
  uint64_t bytes = 0;
};

struct SafetensorsFile {
  std::string path;
  uint64_t file_bytes = 0;
  std::map<std::string, SafetensorsTensor> tensors;
};

Status read_safetensors_header(const std::string& path, SafetensorsFile* out);
// The validation of read_safetensors_header on the header JSON `text` of a file of file_bytes
// bytes (the 8-byte length and the text included); out->path names it in messages. In memory,
// for the fuzz target.
Status parse_safetensors_header(const std::string& text, uint64_t file_bytes, SafetensorsFile* out);
// model.safetensors.index.json's text: tensor -> shard file name (plain names inside the
// folder), and the shard names sorted. `origin` names the file in messages.
Status parse_safetensors_index(const std::string& text, const std::string& origin,
                               std::map<std::string, std::string>* weight_map,
                               std::vector<std::string>* shard_names);

// All tensors of a model folder: one model.safetensors, or the shards listed by
// model.safetensors.index.json (each tensor must be in the shard the index names).
struct SafetensorsSet {
  std::vector<SafetensorsFile> files;
  std::map<std::string, std::pair<size_t, const SafetensorsTensor*>> by_name;  // -> file index
  uint64_t total_file_bytes = 0;
  const SafetensorsTensor* find(const std::string& name, const SafetensorsFile** file) const;
};

Status open_safetensors_folder(const std::string& folder, SafetensorsSet* out);

}  // namespace magnetar::convert
