// Streaming writer for the model file. The caller declares every tensor (name, dtype, shape) up
// front, so offsets are known; tensors are then written one at a time in any order. The file is
// written to "<path>.tmp-<pid>" and renamed onto <path> by commit(); destroying an uncommitted
// writer removes the temporary file, so a failed or cancelled conversion leaves nothing behind.
// create() refuses headers and tables the reader would reject and non-regular output targets.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "format/model_format.h"
#include "magnetar/status.h"

namespace magnetar::format {

struct TensorDecl {
  std::string name;
  DType dtype = DType::F32;
  uint64_t rows = 1, cols = 0;  // 1-D tensors: rows = 1, n_dims = 1
  int n_dims = 2;
};

// Removes "<path>.tmp-<pid>" files whose process is gone (a conversion killed by SIGKILL or a
// power cut); temp files of running processes stay. Returns how many were removed. create()
// calls it, so the next write to the same output cleans up.
int remove_stale_temp_files(const std::string& path);

class ModelWriter {
 public:
  // header: every hyperparameter field filled; magic, version, offsets and counts are set here.
  static Status create(const std::string& path, const FileHeader& header,
                       const std::vector<TensorDecl>& tensors, const std::string& tokenizer_bytes,
                       const std::string& chat_template, std::unique_ptr<ModelWriter>* out);
  ~ModelWriter();  // removes the temporary file unless commit() succeeded

  // data: exactly tensor_bytes(dtype, rows, cols) bytes, already in the declared dtype.
  Status write_tensor(size_t index, const void* data, uint64_t bytes);
  // Streaming form: the tensor's bytes in consecutive parts, `offset` = bytes of it written so far
  // (parts must come in order). The tensor is complete when the parts add up to its size.
  Status write_tensor_part(size_t index, uint64_t offset, const void* data, uint64_t bytes);
  // All tensors written? fsync, close, rename onto the final path.
  Status commit();

  uint64_t file_bytes() const;

  struct Impl;

 private:
  explicit ModelWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace magnetar::format
