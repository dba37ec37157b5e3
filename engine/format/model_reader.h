// Validating reader for the model file. Everything is checked against the file size before any
// tensor is touched: magic, version, header fields, tensor table (names, dtypes, shapes against
// the header, offsets and sizes inside the data section, alignment), tokenizer and template
// ranges. A bad file gives an error that names the problem.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "format/model_format.h"
#include "magnetar/status.h"

namespace magnetar::format {

struct TensorView {
  std::string name;
  DType dtype = DType::F32;
  int n_dims = 2;
  uint64_t rows = 0, cols = 0;
  uint64_t offset = 0, bytes = 0;
  const uint8_t* data = nullptr;  // into the caller's buffer
};

struct ModelFileView {
  FileHeader header{};
  std::vector<TensorView> tensors;
  std::string_view tokenizer;      // header.tokenizer_kind says which kind
  std::string_view chat_template;  // informational
  const TensorView* find(std::string_view name) const;
};

// Validates the first `size` bytes of a model file held at `data` (whole file, mapped or read).
Status parse_model_file(const uint8_t* data, uint64_t size, ModelFileView* out);
// Validates only the header and table bytes (for reading the file in pieces): `prefix` holds the
// file's first prefix_size bytes, file_size is the real size on disk.
Status parse_model_header(const uint8_t* prefix, uint64_t prefix_size, uint64_t file_size,
                          ModelFileView* out);

}  // namespace magnetar::format
