// Safetensors header parsing and validation: see safetensors.h.
//
// File layout: u64 little-endian header length N, N bytes of JSON
// {"name": {"dtype": "F32", "shape": [r, c], "data_offsets": [begin, end]}, "__metadata__": {...}},
// then the data section; offsets are relative to the data section.
#include "convert/safetensors.h"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "convert/input_file.h"
#include "convert/json_input.h"

namespace magnetar::convert {

using nlohmann::json;

namespace {

constexpr uint64_t kMaxHeaderBytes = 100ull << 20;  // real headers are a few hundred KB at most
constexpr uint64_t kMaxIndexBytes = 64ull << 20;

SourceDType parse_dtype(const std::string& s) {
  if (s == "F32") return SourceDType::F32;
  if (s == "F16") return SourceDType::F16;
  if (s == "BF16") return SourceDType::BF16;
  return SourceDType::Other;
}

bool as_u64(const json& j, uint64_t* out) {
  if (!j.is_number_integer() && !j.is_number_unsigned()) return false;
  if (j.is_number_integer() && j.get<int64_t>() < 0) return false;
  *out = j.get<uint64_t>();
  return true;
}

}  // namespace

uint64_t source_dtype_bytes(SourceDType t) {
  switch (t) {
    case SourceDType::F32: return 4;
    case SourceDType::F16:
    case SourceDType::BF16: return 2;
    case SourceDType::Blocks:
    case SourceDType::Other: return 0;
  }
  return 0;
}

Status read_safetensors_header(const std::string& path, SafetensorsFile* out) {
  *out = SafetensorsFile{};
  out->path = path;
  InputFile f;
  MAGNETAR_TRY(f.open(path));
  out->file_bytes = f.size();
  if (f.size() < 8)
    return Status::error(path + ": truncated: " + std::to_string(f.size()) +
                         " bytes, too short for a safetensors header");
  uint8_t len_bytes[8];
  MAGNETAR_TRY(f.read_at(0, len_bytes, 8));
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | len_bytes[i];
  if (header_len > f.size() - 8 || header_len > kMaxHeaderBytes)
    return Status::error(path + ": safetensors header length " + std::to_string(header_len) +
                         " points outside the file (" + std::to_string(f.size()) +
                         " bytes): truncated or not a safetensors file");
  std::string text(header_len, '\0');
  MAGNETAR_TRY(f.read_at(8, text.data(), header_len));
  return parse_safetensors_header(text, f.size(), out);
}

Status parse_safetensors_header(const std::string& text, uint64_t file_bytes, SafetensorsFile* out) {
  const std::string path = out->path;
  out->tensors.clear();
  out->file_bytes = file_bytes;
  if (file_bytes < 8 || text.size() > file_bytes - 8)
    return Status::error(path + ": the safetensors header is longer than the file");
  json header;
  MAGNETAR_TRY(parse_json_object(text, path + ": safetensors header", &header));

  const uint64_t data_start = 8 + text.size();
  const uint64_t data_bytes = file_bytes - data_start;
  struct Range {
    uint64_t begin, end;
    const std::string* name;
  };
  std::vector<Range> ranges;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") continue;
    const std::string where = path + ": tensor " + abridged(it.key()) + ": ";
    const json& v = it.value();
    if (!v.is_object() || !v.contains("dtype") || !v["dtype"].is_string() ||
        !v.contains("shape") || !v["shape"].is_array() || !v.contains("data_offsets") ||
        !v["data_offsets"].is_array() || v["data_offsets"].size() != 2)
      return Status::error(where + "malformed entry (needs dtype, shape, data_offsets)");
    SafetensorsTensor t;
    t.name = it.key();
    t.dtype_name = v["dtype"].get<std::string>();
    t.dtype = parse_dtype(t.dtype_name);
    if (v["shape"].size() > 8)  // tensors of a language model have 1 or 2 dimensions
      return Status::error(where + "shape has " + std::to_string(v["shape"].size()) + " dimensions");
    uint64_t elements = 1;
    for (const json& d : v["shape"]) {
      uint64_t n = 0;
      if (!as_u64(d, &n) || n > (1ull << 40))
        return Status::error(where + "malformed shape " + json_excerpt(v["shape"]));
      t.shape.push_back(n);
      elements = (n != 0 && elements > (1ull << 50) / n) ? (1ull << 50) : elements * n;
    }
    uint64_t begin = 0, end = 0;
    if (!as_u64(v["data_offsets"][0], &begin) || !as_u64(v["data_offsets"][1], &end))
      return Status::error(where + "malformed data_offsets " + json_excerpt(v["data_offsets"]));
    if (begin > end)
      return Status::error(where + "data_offsets [" + std::to_string(begin) + ", " +
                           std::to_string(end) + "] are reversed");
    if (end > data_bytes)
      return Status::error(where + "data_offsets [" + std::to_string(begin) + ", " +
                           std::to_string(end) + "] point outside the file's " +
                           std::to_string(data_bytes) +
                           "-byte data section: the file is truncated or its header is corrupt");
    uint64_t esize = source_dtype_bytes(t.dtype);
    if (esize != 0 && end - begin != elements * esize)
      return Status::error(where + "shape " + json_excerpt(v["shape"]) + " of " + t.dtype_name +
                           " needs " + std::to_string(elements * esize) + " bytes but data_offsets " +
                           "cover " + std::to_string(end - begin));
    t.data_offset = data_start + begin;
    t.bytes = end - begin;
    auto [pos, inserted] = out->tensors.emplace(t.name, std::move(t));
    (void)inserted;
    ranges.push_back({begin, end, &pos->first});
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const Range& a, const Range& b) { return a.begin < b.begin; });
  for (size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i].begin < ranges[i - 1].end)
      return Status::error(path + ": tensors " + abridged(*ranges[i - 1].name) + " and " +
                           abridged(*ranges[i].name) + " have overlapping data_offsets");
  return Status::ok();
}

Status parse_safetensors_index(const std::string& text, const std::string& index_path,
                               std::map<std::string, std::string>* weight_map,
                               std::vector<std::string>* shard_names) {
  weight_map->clear();
  shard_names->clear();
  json index;
  MAGNETAR_TRY(parse_json_object(text, index_path, &index));
  if (!index.contains("weight_map") || !index["weight_map"].is_object())
    return Status::error(index_path + ": no \"weight_map\" object");
  std::set<std::string> seen;
  for (auto it = index["weight_map"].begin(); it != index["weight_map"].end(); ++it) {
    if (!it.value().is_string())
      return Status::error(index_path + ": weight_map entry " + abridged(it.key()) +
                           " is not a file name");
    std::string shard = it.value().get<std::string>();
    // Shards must be plain file names inside the folder.
    if (shard.empty() || shard.find('/') != std::string::npos ||
        shard.find('\\') != std::string::npos || shard == "." || shard == "..")
      return Status::error(index_path + ": weight_map names \"" + abridged(shard) +
                           "\", which is not a file name in the folder");
    (*weight_map)[it.key()] = shard;
    if (seen.insert(shard).second) shard_names->push_back(shard);
  }
  if (shard_names->empty()) return Status::error(index_path + ": weight_map is empty");
  std::sort(shard_names->begin(), shard_names->end());
  return Status::ok();
}

const SafetensorsTensor* SafetensorsSet::find(const std::string& name,
                                              const SafetensorsFile** file) const {
  auto it = by_name.find(name);
  if (it == by_name.end()) return nullptr;
  if (file) *file = &files[it->second.first];
  return it->second.second;
}

Status open_safetensors_folder(const std::string& folder, SafetensorsSet* out) {
  *out = SafetensorsSet{};
  const std::string index_path = join_path(folder, "model.safetensors.index.json");
  const std::string single_path = join_path(folder, "model.safetensors");
  std::vector<std::string> shard_names;
  std::map<std::string, std::string> weight_map;  // tensor -> shard file name
  if (is_regular_file(index_path)) {
    std::string text;
    MAGNETAR_TRY(read_small_file(index_path, kMaxIndexBytes, &text));
    MAGNETAR_TRY(parse_safetensors_index(text, index_path, &weight_map, &shard_names));
  } else if (is_regular_file(single_path)) {
    shard_names.push_back("model.safetensors");
  } else {
    if (is_regular_file(join_path(folder, "pytorch_model.bin")))
      return Status::error(folder + ": has only PyTorch pytorch_model.bin weights; Magnetar reads "
                           "safetensors (model.safetensors or a sharded index)");
    return Status::error(folder + ": no model.safetensors or model.safetensors.index.json");
  }

  out->files.resize(shard_names.size());
  for (size_t i = 0; i < shard_names.size(); ++i) {
    const std::string shard_path = join_path(folder, shard_names[i]);
    if (!is_regular_file(shard_path))
      return Status::error(shard_path + ": shard listed in model.safetensors.index.json is missing");
    MAGNETAR_TRY(read_safetensors_header(shard_path, &out->files[i]));
    out->total_file_bytes += out->files[i].file_bytes;
  }
  for (size_t i = 0; i < out->files.size(); ++i) {
    for (const auto& [name, tensor] : out->files[i].tensors) {
      if (!weight_map.empty()) {
        auto w = weight_map.find(name);
        if (w == weight_map.end() || w->second != shard_names[i]) continue;  // not indexed here
      }
      if (out->by_name.count(name))
        return Status::error(out->files[i].path + ": tensor " + abridged(name) + " appears in two shards");
      out->by_name[name] = {i, &tensor};
    }
  }
  for (const auto& [name, shard] : weight_map)
    if (!out->by_name.count(name))
      return Status::error(join_path(folder, shard) + ": missing tensor " + abridged(name) +
                           " (model.safetensors.index.json places it there)");
  return Status::ok();
}

}  // namespace magnetar::convert
