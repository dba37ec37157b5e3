// libFuzzer target for GGUF model planning (convert::plan_gguf_bytes): header, metadata and
// tensor table → the architecture table's tensor plan (per-tensor types incl. K-quants and IQ4,
// shapes, fused and split matrices), the vocabulary (SentencePiece or byte-level BPE as a
// tokenizer.json), special ids and the chat template (checked by the Jinja interpreter).
//
// Planning never reads tensor data, so an input is a GGUF file's header, metadata and tensor
// table (fuzz/corpus/gguf_plan, written by fuzz/make_gguf_plan_seeds.py) and the target appends
// kDataBytes zero bytes as the data section: the seeds stay small while their tensors are real
// K-quant matrices of 256 columns. Any error must be a Status; a plan that succeeds must point
// every source range inside the file and add up to its tensors' shapes. CTest runs it for a
// bounded time (test fuzz.gguf_plan).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "convert/gguf_import.h"

namespace {

constexpr size_t kDataBytes = size_t(1) << 20;  // the seeds' tensors need ~0.3 MB

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // One buffer for every run: the input, then zeros (only the bytes the last input dirtied
  // are cleared again).
  static std::vector<uint8_t> file;
  static size_t dirty = 0;
  if (file.size() < size + kDataBytes) file.resize(size + kDataBytes);
  if (size < dirty) std::memset(file.data() + size, 0, dirty - size);
  std::memcpy(file.data(), data, size);
  dirty = size;
  const uint64_t file_bytes = size + kDataBytes;

  magnetar::convert::ConversionPlan plan;
  if (!magnetar::convert::plan_gguf_bytes("fuzz.gguf", file.data(), file_bytes, &plan).is_ok()) return 0;
  // A successful plan: every tensor is made of ranges inside the file that add up to its shape
  // (a matrix's parts are row blocks, a vector's parts are vectors laid end to end).
  if (plan.tensors.empty() || plan.tokenizer.empty() || plan.header.vocab_size == 0) __builtin_trap();
  for (const auto& t : plan.tensors) {
    uint64_t rows = 0, cols = 0;
    for (const auto& part : t.parts) {
      if (part.offset > file_bytes || part.bytes() > file_bytes - part.offset) __builtin_trap();
      if (t.n_dims == 2 && part.cols != t.cols) __builtin_trap();
      rows += part.rows;
      cols += part.cols;
    }
    if (t.n_dims == 2 ? rows != t.rows : (t.rows != 1 || cols != t.cols)) __builtin_trap();
  }
  return 0;
}
