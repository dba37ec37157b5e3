// libFuzzer target for the model-file reader (engine/format/model_reader.cpp): validates
// arbitrary bytes as a Magnetar model file and, when they pass, touches the first and last byte
// of every tensor, the tokenizer and the template, so AddressSanitizer sees any range the
// validation let escape the input. CTest runs it for a bounded time (test fuzz.model_file).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "format/model_reader.h"

namespace {
volatile uint64_t g_sink;

uint64_t touch(const uint8_t* p, uint64_t n) { return n == 0 ? 0 : uint64_t(p[0]) + p[n - 1]; }
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The reader expects the file 64-byte aligned, as mapped or read files are.
  std::vector<uint8_t> aligned_storage(size + 64);
  uint8_t* aligned = aligned_storage.data() + (64 - reinterpret_cast<uintptr_t>(aligned_storage.data()) % 64) % 64;
  std::copy(data, data + size, aligned);
  magnetar::format::ModelFileView view;
  if (!magnetar::format::parse_model_file(aligned, size, &view).is_ok()) return 0;
  uint64_t sum = 0;
  for (const auto& t : view.tensors) sum += touch(t.data, t.bytes);
  sum += touch(reinterpret_cast<const uint8_t*>(view.tokenizer.data()), view.tokenizer.size());
  sum += touch(reinterpret_cast<const uint8_t*>(view.chat_template.data()), view.chat_template.size());
  g_sink = sum;
  return 0;
}
