// Tokenizer from a model, tokenizer.json or tokenizer.model file: see tokenizer_file.h.
#include "tokenizer/tokenizer_file.h"

#include <cstring>
#include <vector>

#include "core/platform.h"
#include "format/model_reader.h"

namespace magnetar {

namespace {

constexpr uint64_t kMaxTokenizerFileBytes = 512ull << 20;

Status read_whole(const std::string& path, uint64_t size, std::string* out) {
  if (size > kMaxTokenizerFileBytes) return Status::error(path + ": too large for a tokenizer file");
  out->resize(size);
  return platform::read_file_range(path, 0, out->data(), size);
}

// The header and tensor table, then the tokenizer section alone: a model's weights stay on disk.
Status load_from_model(const std::string& path, uint64_t size, Tokenizer* out) {
  std::vector<uint8_t> prefix(sizeof(format::FileHeader));
  MAGNETAR_TRY(platform::read_file_range(path, 0, prefix.data(), prefix.size()));
  format::FileHeader h;
  std::memcpy(&h, prefix.data(), sizeof(h));
  const uint64_t table_end = h.tensor_table_offset + uint64_t(h.n_tensors) * sizeof(format::TensorEntry);
  if (table_end > size || table_end > (256ull << 20)) return Status::error(path + ": damaged model file");
  prefix.resize(table_end);
  MAGNETAR_TRY(platform::read_file_range(path, 0, prefix.data(), table_end));
  format::ModelFileView view;
  MAGNETAR_TRY(format::parse_model_header(prefix.data(), prefix.size(), size, &view).with_context(path));
  const format::FileHeader& v = view.header;
  if (v.tokenizer_bytes > kMaxTokenizerFileBytes) return Status::error(path + ": tokenizer section too large");
  std::string bytes(v.tokenizer_bytes, '\0');
  MAGNETAR_TRY(platform::read_file_range(path, v.tokenizer_offset, bytes.data(), bytes.size()));
  return out->load(static_cast<TokenizerKind>(v.tokenizer_kind), bytes).with_context(path);
}

std::string sibling(const std::string& path, const char* name) {
  const size_t slash = path.find_last_of("/\\");
  return (slash == std::string::npos ? std::string() : path.substr(0, slash + 1)) + name;
}

}  // namespace

Status load_tokenizer_file(const std::string& path, Tokenizer* out) {
  uint64_t size = 0;
  MAGNETAR_TRY(platform::file_size(path, &size));
  char magic[8] = {};
  if (size >= sizeof(magic)) MAGNETAR_TRY(platform::read_file_range(path, 0, magic, sizeof(magic)));
  if (size >= sizeof(format::FileHeader) && std::memcmp(magic, format::kMagic, sizeof(magic)) == 0)
    return load_from_model(path, size, out);
  std::string bytes;
  MAGNETAR_TRY(read_whole(path, size, &bytes));
  size_t first = bytes.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && bytes[first] == '{') {  // tokenizer.json
    std::string config;
    const std::string config_path = sibling(path, "tokenizer_config.json");
    uint64_t config_size = 0;
    if (platform::file_size(config_path, &config_size)) MAGNETAR_TRY(read_whole(config_path, config_size, &config));
    return out->load_tokenizer_json(bytes, config).with_context(path);
  }
  return out->load(TokenizerKind::SentencePiece, bytes).with_context(path);
}

}  // namespace magnetar
